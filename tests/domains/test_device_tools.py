"""Device tools: state dependencies, ToolSandbox's error lines, argument rules, result formats, worlds."""

from __future__ import annotations

import random

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.device import (
    BASE_NOW,
    FULL_TOOLSET,
    build_base_world,
    dump_world,
    duuid,
    generate_device_world,
    load_world,
    run_tool_calls,
)
from trace_envs.registry import get_domain

LOW_BATTERY = "base_low_battery_mode_on_wifi_off_location_service_off_cellular_off"


def call(name: str, /, **arguments: object) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


def contents(world: str, *calls: dict[str, object]) -> list[str]:
    return [record.content for record in run_tool_calls(build_base_world(world), calls).calls]


@pytest.mark.parametrize(
    ("setter", "message"),
    [
        ("set_wifi_status", "PermissionError: Wifi cannot be turned on in low battery mode"),
        ("set_cellular_service_status", "PermissionError: Cellular service cannot be turned on in low battery mode"),
        ("set_location_service_status", "PermissionError: Location service cannot be turned on in low battery mode"),
    ],
)
def test_low_battery_mode_blocks_services_and_recovery_works(setter: str, message: str) -> None:
    result = run_tool_calls(
        build_base_world(LOW_BATTERY),
        [call(setter, on=True), call("get_low_battery_mode_status"), call("set_low_battery_mode_status", on=False),
         call(setter, on=True)],
    )  # fmt: skip
    assert [c.content for c in result.calls] == [message, "True", "None", "None"]
    assert result.calls[0].error and result.calls[0].exception == message and result.calls[0].trace is None
    field = {"set_wifi_status": "wifi", "set_cellular_service_status": "cellular"}.get(setter, "location_service")
    assert result.tables["SETTING"][0][field] is True
    assert result.tables["SETTING"][0]["low_battery_mode"] is False


def test_permission_check_comes_before_type_and_already_checks() -> None:
    assert contents(LOW_BATTERY, call("set_location_service_status", on="yes"), call("set_wifi_status", on=1)) == [
        "PermissionError: Location service cannot be turned on in low battery mode",
        "PermissionError: Wifi cannot be turned on in low battery mode",
    ]
    assert contents(LOW_BATTERY, call("set_wifi_status", on=False)) == ["ValueError: wifi already disabled"]
    assert contents("base", call("set_wifi_status", on=True)) == ["ValueError: wifi already enabled"]


def test_turning_low_battery_mode_on_turns_services_off() -> None:
    tables = run_tool_calls(build_base_world(), [call("set_low_battery_mode_status", on=True)]).tables
    row = tables["SETTING"][0]
    assert (row["low_battery_mode"], row["wifi"], row["cellular"], row["location_service"]) == (
        True,
        False,
        False,
        False,
    )


def test_connection_and_location_dependencies() -> None:
    assert contents(
        "base_cellular_off", call("send_message_with_phone_number", phone_number="+12453344098", content="hi")
    ) == ["ConnectionError: Cellular service is not enabled"]
    assert contents(
        "base_wifi_off", call("search_holiday", holiday_name="Christmas"), call("search_stock", query="AAPL")
    ) == [
        "ConnectionError: Wifi is not enabled",
        "ConnectionError: Wifi is not enabled",
    ]
    assert contents("base_location_service_off", call("get_current_location")) == [
        "PermissionError: Location service is not enabled."
    ]
    assert contents("base", call("search_weather_around_lat_lon", latitude=37.0)) == [
        "ValueError: Latitude and Longitude must be either both provided, or both not provided"
    ]
    assert contents("base", call("search_weather_around_lat_lon", days=-1)) == [
        "ValueError: Days must be positive integer, found days=-1."
    ]


def test_binding_and_type_errors_use_upstream_wording() -> None:
    assert contents(
        "base",
        call("set_wifi_status"),
        call("set_wifi_status", on=False, foo=1),
        call("add_reminder", content="x", reminder_timestamp="soon"),
        call("shift_timestamp", timestamp=BASE_NOW, days=1.5),
        call("modify_contact", person_id=None, name="x"),
        call("add_reminder", content="x", reminder_timestamp=1.0),
    ) == [
        "TypeError: missing a required argument: 'on'",
        "TypeError: got an unexpected keyword argument 'foo'",
        "TypeError: Parameter 'reminder_timestamp' is of type '<class 'str'>', but expected '<class 'float'>'.",
        "TypeError: Parameter 'days' is of type '<class 'float'>', but expected '<class 'int'>'.",
        "TypeError: Parameter 'person_id' is of type '<class 'NoneType'>', but expected '<class 'str'>'.",
        "ValueError: Parameter 'reminder_timestamp' is smaller than its valid range minimum of 315529200.0.",
    ]
    assert contents("base", call("modify_contact", person_id="x", name=None)) == [
        "TypeError: Parameter 'name' is of type '<class 'NoneType'>', but expected "
        "'typing.Union[str, tool_sandbox.common.utils.NotGiven]'."
    ]


def test_removal_errors_print_upstreams_whole_filter() -> None:
    """Upstream filters on the id and the snapshot's message index; polars prints the first 30 characters."""
    assert contents("base", call("remove_reminder", reminder_id="nope"), call("remove_contact", person_id="x")) == [
        "polars.exceptions.NoDataError: No db entry matching "
        """predicate=<Expr ['[([(col("reminder_id")) == (St…'] at 0x7F3A2C1D5E90> found""",
        "polars.exceptions.NoDataError: No db entry matching "
        """predicate=<Expr ['[([(col("person_id")) == (Stri…'] at 0x7F3A2C1D5E90> found""",
    ]


def test_latitude_and_longitude_bounds_print_as_floats() -> None:
    assert contents(
        "base",
        call("add_reminder", content="x", reminder_timestamp=BASE_NOW, latitude=91, longitude=0),
        call("search_reminder", longitude=-180.5),
        call("calculate_lat_lon_distance", latitude_0=-91, longitude_0=0, latitude_1=0, longitude_1=0),
        call("search_weather_around_lat_lon", latitude=0, longitude=181),
    ) == [
        "ValueError: Parameter 'latitude' is larger than its valid range maximum of 90.0.",
        "ValueError: Parameter 'longitude' is smaller than its valid range minimum of -180.0.",
        "ValueError: Parameter 'latitude_0' is smaller than its valid range minimum of -90.0.",
        "ValueError: Parameter 'longitude' is larger than its valid range maximum of 180.0.",
    ]


def test_distance_checks_both_latitudes_before_the_longitudes() -> None:
    assert contents(
        "base", call("calculate_lat_lon_distance", latitude_0=0, longitude_0=200, latitude_1=95, longitude_1=0)
    ) == ["ValueError: Parameter 'latitude_1' is larger than its valid range maximum of 90.0."]


def test_timestamp_diff_and_shift_timestamp_check_their_timestamps() -> None:
    assert contents(
        "base",
        call("timestamp_diff", timestamp_0=1.0, timestamp_1=BASE_NOW),
        call("timestamp_diff", timestamp_0=BASE_NOW, timestamp_1=1e12),
        call("shift_timestamp", timestamp=1774511873000.0, days=1),
        call("shift_timestamp", timestamp=0, days="1"),
    ) == [
        "ValueError: Parameter 'timestamp_0' is smaller than its valid range minimum of 315529200.0.",
        "ValueError: Parameter 'timestamp_1' is larger than its valid range maximum of 2524604400.0.",
        "ValueError: Parameter 'timestamp' is larger than its valid range maximum of 2524604400.0.",
        "TypeError: Parameter 'days' is of type '<class 'str'>', but expected '<class 'int'>'.",
    ]


def test_phone_number_parsing_errors() -> None:
    results = contents(
        "base",
        *(
            call("add_contact", name="A", phone_number=number)
            for number in ("", "+12", "bad", "1234567890", "+999 123456")
        ),
        call("add_contact", name="A", phone_number="+1234"),
    )
    assert results[:5] == [
        "phonenumbers.phonenumberutil.NumberParseException: (1) The string supplied did not seem to be a phone number.",
        "phonenumbers.phonenumberutil.NumberParseException: (1) The string supplied did not seem to be a phone number.",
        "phonenumbers.phonenumberutil.NumberParseException: (1) The string supplied did not seem to be a phone number.",
        "phonenumbers.phonenumberutil.NumberParseException: (0) Missing or invalid default region.",
        "phonenumbers.phonenumberutil.NumberParseException: (0) Could not interpret numbers after plus-sign.",
    ]
    assert not results[5].startswith("phonenumbers")


def test_contact_tools_and_their_errors() -> None:
    world = build_base_world()
    result = run_tool_calls(
        world,
        [
            call("search_contacts", name="Fredrik"),
            call("search_contacts"),
            call("add_contact", name="Me Again", phone_number="+15550001111", is_self=True),
            call("modify_contact", person_id="nobody", is_self=True),
            call("modify_contact", person_id="nobody", name="x"),
            call("modify_contact", person_id=duuid("John Petrucci")),
            call("remove_contact", person_id="nobody"),
            call("search_contacts", name=None),
            call("search_contacts", name=123),
            call("modify_contact", person_id=duuid("John Petrucci"), phone_number="+19998887777"),
        ],
    )
    out = [c.content for c in result.calls]
    assert out[0].startswith("[{'person_id': '9e137f06-916a-5310-8174-cf0b7e9f7054', 'name': 'Fredrik Thordendal'")
    assert out[1] == (
        "ValueError: No search criteria are given. At least one search criteria should be provided among "
        "('person_id', 'name', 'phone_number', 'relationship', 'is_self')"
    )
    assert out[2] == "polars.exceptions.DuplicateError: Self entry already exists. Cannot add another one."
    assert out[3] == "polars.exceptions.DuplicateError: Self entry already exists. Cannot add another one."
    assert out[4] == "polars.exceptions.NoDataError: No db entry matching person_id='nobody' found"
    assert out[5].startswith("ValueError: No update information given.")
    assert out[6] == (
        "polars.exceptions.NoDataError: No db entry matching "
        """predicate=<Expr ['[([(col("person_id")) == (Stri…'] at 0x7F3A2C1D5E90> found"""
    )
    assert out[7] == "[]"
    assert out[8] == "TypeError: sentence must be a String"
    assert out[9] == "None"
    assert result.tables["CONTACT"][-1]["name"] == "John Petrucci"  # modified rows move to the end
    assert result.tables["CONTACT"][-1]["phone_number"] == "+19998887777"


def test_message_and_reminder_tools() -> None:
    result = run_tool_calls(
        build_base_world(),
        [
            call("send_message_with_phone_number", phone_number="+12453344098", content="See you at 7"),
            call("search_messages", content="See you"),
            call("add_reminder", content="Buy milk", reminder_timestamp=BASE_NOW + 3600),
            call("search_reminder", reminder_timestamp_lowerbound=BASE_NOW),
            call("search_messages"),
        ],
    )
    sent = result.tables["MESSAGING"][-1]
    assert sent["recipient_person_id"] == duuid("Fredrik Thordendal")
    assert sent["sender_person_id"] == duuid("Tomas Haake")
    assert sent["creation_timestamp"] == BASE_NOW
    assert "'content': 'See you at 7'" in result.calls[1].content
    assert result.tables["REMINDER"][-1]["creation_timestamp"] == BASE_NOW
    assert "Buy milk" in result.calls[3].content and "navy bathing dress" in result.calls[3].content
    assert "'creation_timestamp', 'creation_timestamp')" in result.calls[4].content


def test_results_are_python_reprs_and_traces_hold_defaults() -> None:
    result = run_tool_calls(
        build_base_world(),
        [call("get_wifi_status"), call("shift_timestamp", timestamp=BASE_NOW, days=1),
         call("unit_conversion", amount=100, from_unit="celsius", to_unit="fahrenheit"),
         call("unit_conversion", amount=1, from_unit="day", to_unit="seconds"),
         call("unit_conversion", amount=1, from_unit="foo", to_unit="meter"),
         call("search_contacts", name="Homer")],
    )  # fmt: skip
    assert [c.content for c in result.calls[:5]] == [
        "True",
        repr(BASE_NOW + 86400),
        "211.99999999999991",
        "86400",
        "pint.errors.UndefinedUnitError: 'foo' is not defined in the unit registry",
    ]
    import json

    trace = json.loads(result.calls[1].trace or "")
    assert trace["arguments"] == {"timestamp": BASE_NOW, "weeks": 0, "days": 1, "hours": 0, "minutes": 0, "seconds": 0}
    assert json.loads(result.calls[5].trace or "")["arguments"] == {"name": "Homer"}


def test_unknown_tool_is_an_error_result_not_an_exception() -> None:
    record = run_tool_calls(build_base_world(), [call("launch_rockets")]).calls[0]
    assert record.error and record.content.startswith("KeyError:")


def test_base_world_matches_the_reference() -> None:
    world = build_base_world()
    assert world.settings.device_id == "04640c30-ec89-5a3c-9fb4-4af3101c8e04"
    assert [c.person_id for c in world.CONTACT][:2] == [
        "3815cac9-3cab-5d75-89e2-fe12fe19779e",
        "9e137f06-916a-5310-8174-cf0b7e9f7054",
    ]
    assert [m.message_id for m in world.MESSAGING].count(duuid("message_4")) == 2
    assert world.MESSAGING[0].creation_timestamp == BASE_NOW - (3 * 86400 + 4 * 3600 + 5 * 60 + 6)
    assert world.REMINDER[2].reminder_timestamp == BASE_NOW + 3600
    low = build_base_world(LOW_BATTERY).settings
    assert (low.low_battery_mode, low.wifi, low.cellular, low.location_service) == (True, False, False, False)
    with pytest.raises(ValueError, match="unknown base world"):
        build_base_world("base_on_the_moon")


def test_world_json_round_trip_and_domain_registration() -> None:
    world = build_base_world()
    data = dump_world(world)
    assert set(data) == {"SETTING", "CONTACT", "MESSAGING", "REMINDER", "SIMULATION"}
    assert dump_world(load_world(data)) == data
    domain = get_domain("device")
    assert domain.dump_state(domain.load_state(data)) == data
    with pytest.raises(ValueError, match="wifi"):
        load_world({**data, "SETTING": [{**data["SETTING"][0], "wifi": "maybe"}]})


def test_world_generator_is_seeded() -> None:
    first = dump_world(generate_device_world(random.Random(7)))
    assert first == dump_world(generate_device_world(random.Random(7)))
    assert first != dump_world(generate_device_world(random.Random(8)))
    world = generate_device_world(random.Random(1), n_contacts=5, settings={"low_battery_mode": True, "wifi": False})
    assert len(world.CONTACT) == 6 and sum(bool(c.is_self) for c in world.CONTACT) == 1
    assert world.settings.low_battery_mode is True and world.settings.wifi is False


def test_tools_are_plain_callables() -> None:
    from trace_envs.domains.device import get_current_timestamp, set_wifi_status

    state = build_base_world()
    set_wifi_status(state, on=False)
    assert state.settings.wifi is False
    assert get_current_timestamp(state) == BASE_NOW
    assert FULL_TOOLSET.invoke(state, ToolCall(name="get_wifi_status")).content == "False"


def test_upstream_quirks_are_kept() -> None:
    """Behaviour confirmed on upstream (reference section 9): no range checks in the date helpers, phone
    numbers stored as typed, no type checks in search_contacts."""
    run = run_tool_calls(
        build_base_world(),
        [
            call("datetime_info_to_timestamp", year=1, month=1, day=1, hour=0, minute=0, second=0),
            call("datetime_info_to_timestamp", year=10000, month=1, day=1, hour=0, minute=0, second=0),
            call("datetime_info_to_timestamp", year=2026, month=True, day=1, hour=0, minute=0, second=0),
            call("seconds_to_hours_minutes_seconds", seconds=-1),
            call("seconds_to_hours_minutes_seconds", seconds=1e12),
            call("search_contacts", is_self="yes"),
            call("send_message_with_phone_number", phone_number="+1 245-334-4098", content="hi"),
        ],
    )
    assert [c.content for c in run.calls[:6]] == [
        "-62135596800.0",
        "ValueError: year 10000 is out of range",
        "1767225600.0",
        "{'hour': 23, 'minute': 59, 'second': 59}",
        "ValueError: year 33658 is out of range",
        "[]",
    ]
    sent = run.tables["MESSAGING"][-1]
    assert sent["recipient_phone_number"] == "+1 245-334-4098" and sent["recipient_person_id"] is None
