"""Offline probes on hand-built episodes (the paper's failure examples, Appendix F) and on the
shipped envs' reference and flawed trajectories."""

from __future__ import annotations

import pytest

from trace_envs.analysis import Label, probe_labels
from trace_envs.analysis.probes import read_episode

from .conftest import episode

ORDER = {"order_id": "#W1000001", "user_id": "ava_lee_1", "status": "pending",
         "payment_history": [{"transaction_type": "payment", "amount": 50.0, "payment_method_id": "credit_card_3892"}],
         "items": [{"item_id": "1111111111", "price": 50.0, "options": {"color": "blue"}},
                   {"item_id": "2222222222", "price": 20.0, "options": {"color": "red"}}]}  # fmt: skip
USER = {"user_id": "ava_lee_1", "payment_methods": {
    "credit_card_3892": {"source": "credit_card", "id": "credit_card_3892", "brand": "visa", "last_four": "3892"},
    "gift_card_1234": {"source": "gift_card", "id": "gift_card_1234", "balance": 10.0},
    "credit_card_3829": {"source": "credit_card", "id": "credit_card_3829", "brand": "visa", "last_four": "3829"}}}  # fmt: skip


def label(record, capability: str) -> Label:  # type: ignore[no-untyped-def]
    return probe_labels(record)[capability].label


def test_precondition_write_without_lookup_is_lacking() -> None:
    flawed = episode(
        "Cancel reservation EHGLP3.",
        [("call", "cancel_reservation", {"reservation_id": "EHGLP3"}, {"status": "cancelled"})],
    )
    checked = episode(
        "Cancel reservation EHGLP3.",
        [("call", "get_reservation_details", {"reservation_id": "EHGLP3"}, {"cabin": "business"}),
         ("call", "cancel_reservation", {"reservation_id": "EHGLP3"}, {"status": "cancelled"})],
    )  # fmt: skip
    refused = episode(
        "Cancel reservation EHGLP3.",
        [("call", "get_reservation_details", {"reservation_id": "EHGLP3"}, {}), ("say", "I can't.")],
    )
    assert label(flawed, "precondition_verification") == Label.LACKING
    assert label(checked, "precondition_verification") == Label.PRESENT
    assert label(refused, "precondition_verification") == Label.NA


def test_precision_gift_card_instead_of_the_orders_card() -> None:
    steps = [
        ("call", "get_order_details", {"order_id": "#W1000001"}, ORDER),
        ("call", "get_user_details", {"user_id": "ava_lee_1"}, USER),
    ]
    args = {"order_id": "#W1000001", "item_ids": ["1111111111"]}
    wrong = episode(
        "Return my blue item, refund to the original card.",
        [*steps, ("call", "return_delivered_order_items", {**args, "payment_method_id": "gift_card_1234"}, ORDER)],
    )
    right = episode(
        "Return my blue item, refund to the original card.",
        [*steps, ("call", "return_delivered_order_items", {**args, "payment_method_id": "credit_card_3892"}, ORDER)],
    )
    assert label(wrong, "tool_calling_precision") == Label.LACKING
    assert label(right, "tool_calling_precision") == Label.PRESENT


def test_precision_card_the_user_named_by_its_ending() -> None:
    steps = [
        ("call", "get_order_details", {"order_id": "#W1000001"}, ORDER),
        ("call", "get_user_details", {"user_id": "ava_lee_1"}, USER),
    ]
    ask = "Please charge order #W1000001 to my visa ending in 3829 instead."
    near = episode(
        ask,
        [
            *steps,
            (
                "call",
                "modify_pending_order_payment",
                {"order_id": "#W1000001", "payment_method_id": "credit_card_3892"},
                ORDER,
            ),
        ],
    )
    named = episode(
        ask,
        [
            *steps,
            (
                "call",
                "modify_pending_order_payment",
                {"order_id": "#W1000001", "payment_method_id": "credit_card_3829"},
                ORDER,
            ),
        ],
    )
    assert label(near, "tool_calling_precision") == Label.LACKING
    assert label(named, "tool_calling_precision") == Label.PRESENT


def test_multi_step_stopping_after_the_first_sub_task() -> None:
    ask = "Please cancel reservations ABC123 and DEF456, and change the dates of GHI789."
    half = episode(ask, [("call", "get_reservation_details", {"reservation_id": "ABC123"}, {}),
                         ("call", "cancel_reservation", {"reservation_id": "ABC123"}, {}), ("say", "Anything else?")])  # fmt: skip
    full = episode(
        ask, [("call", "cancel_reservation", {"reservation_id": r}, {}) for r in ("ABC123", "DEF456", "GHI789")]
    )
    single = episode(
        "Please cancel reservation ABC123, my user id is ava_lee_1.",
        [("call", "cancel_reservation", {"reservation_id": "ABC123"}, {})],
    )
    assert label(half, "multi_step_task_completion") == Label.LACKING
    assert label(full, "multi_step_task_completion") == Label.PRESENT
    assert label(single, "multi_step_task_completion") == Label.NA


def test_permission_error_reported_instead_of_fixed() -> None:
    error = "PermissionError: Wifi cannot be turned on in low battery mode"
    gave_up = episode(
        "Turn on wifi.",
        [("call", "set_wifi_status", {"on": True}, error, True), ("say", "Sorry, low battery mode blocks it.")],
    )
    fixed = episode(
        "Turn on wifi.",
        [("call", "set_wifi_status", {"on": True}, error, True), ("call", "get_low_battery_mode_status", {}, "True"),
         ("call", "set_low_battery_mode_status", {"on": False}, "None"), ("call", "set_wifi_status", {"on": True}, "None")],
    )  # fmt: skip
    assert label(gave_up, "permission_error_recovery") == Label.LACKING
    assert label(fixed, "permission_error_recovery") == Label.PRESENT
    assert label(episode("Hi", [("say", "Hello")]), "permission_error_recovery") == Label.NA


def test_datetime_guessed_from_the_raw_timestamp() -> None:
    ask = "Remind me to buy chocolate milk tomorrow 5PM."
    guessed = episode(ask, [("call", "get_current_timestamp", {}, "1774511873.0"),
                            ("call", "datetime_info_to_timestamp", {"year": 2026, "month": 3, "day": 25, "hour": 17}, "1774458000.0")])  # fmt: skip
    tooled = episode(
        ask,
        [("call", "get_current_timestamp", {}, "1774511873.0"),
         ("call", "timestamp_to_datetime_info", {"timestamp": 1774511873.0}, "{'year': 2026, 'month': 3, 'day': 26}"),
         ("call", "datetime_info_to_timestamp", {"year": 2026, "month": 3, "day": 27, "hour": 17}, "1774630800.0"),
         ("call", "add_reminder", {"content": "buy chocolate milk", "reminder_timestamp": 1774630800.0}, "'abc'")],
    )  # fmt: skip
    mental = episode(ask, [("call", "get_current_timestamp", {}, "1774511873.0"),
                           ("call", "add_reminder", {"content": "milk", "reminder_timestamp": 1774598273.0}, "'abc'")])  # fmt: skip
    holiday = episode(
        "How many days till Christmas Day?",
        [("call", "search_holiday", {"holiday_name": "Christmas Day", "year": 2023}, "1703462400.0")],
    )
    assert label(guessed, "datetime_reasoning") == Label.LACKING
    assert label(tooled, "datetime_reasoning") == Label.PRESENT
    assert label(mental, "datetime_reasoning") == Label.LACKING
    assert label(holiday, "datetime_reasoning") == Label.LACKING


FLIGHTS = [
    {"flight_number": "HAT001", "prices": {"basic_economy": 60, "economy": 120, "business": 400}},
    {"flight_number": "HAT002", "prices": {"basic_economy": 70, "economy": 110, "business": 380}},
]


def test_structured_data_wrong_cabin_price() -> None:
    ask = "Find me the cheapest economy flight from JFK to SFO on May 20 for two people."
    search = ("call", "search_direct_flight", {"origin": "JFK", "destination": "SFO", "date": "2024-05-20"}, FLIGHTS)
    misread = episode(ask, [search, ("say", "HAT001 is cheapest at $60 per person, $120 in total.")])
    right = episode(ask, [search, ("say", "HAT002 is cheapest at $110 per person, $220 in total.")])
    silent = episode(ask, [search, ("say", "I found some flights.")])
    assert label(misread, "structured_data_reasoning") == Label.LACKING
    assert label(right, "structured_data_reasoning") == Label.PRESENT
    assert label(silent, "structured_data_reasoning") == Label.NA
    assert label(episode(ask, [("say", "$99")]), "structured_data_reasoning") == Label.NA


def test_structured_data_choosing_an_unavailable_variant() -> None:
    product = {"product_id": "9", "variants": {"1": {"item_id": "100", "available": False, "price": 10.0},
                                               "2": {"item_id": "200", "available": True, "price": 12.0}}}  # fmt: skip
    steps = [("call", "get_product_details", {"product_id": "9"}, product)]
    wrong = episode(
        "Exchange for the one in stock.",
        [*steps, ("call", "exchange_delivered_order_items", {"order_id": "#W1", "new_item_ids": ["100"]}, {})],
    )
    right = episode(
        "Exchange for the one in stock.",
        [*steps, ("call", "exchange_delivered_order_items", {"order_id": "#W1", "new_item_ids": ["200"]}, {})],
    )
    assert label(wrong, "structured_data_reasoning") == Label.LACKING
    assert label(right, "structured_data_reasoning") == Label.PRESENT


def test_probes_read_python_literal_results_and_never_crash_on_odd_messages() -> None:
    odd = episode(
        "x", [("call", "weird", {"a": None, "b": [1, {"c": 2}]}, "not json {"), ("call", "set_x", {"x_id": 5}, "'q'")]
    )
    labels = probe_labels(odd)
    assert set(labels) == {
        "structured_data_reasoning", "tool_calling_precision", "multi_step_task_completion",
        "precondition_verification", "permission_error_recovery", "datetime_reasoning",
    }  # fmt: skip
    assert all(row.rationale for row in labels.values())
    assert read_episode(episode("x", [("call", "t", {}, "{'year': 2026}")])).calls[0].parsed == {"year": 2026}


def test_probes_on_shipped_envs_separate_oracle_from_flawed(capability_rollouts) -> None:  # type: ignore[no-untyped-def]
    """On each shipped capability env, its own probe says LACKING on most flawed failures and on few
    reference solutions."""
    envs = {env_id for env_id, _ in capability_rollouts}
    if not envs:
        pytest.skip("no shipped capability env with flawed_actions is registered")
    from .conftest import shipped_capability_envs

    for env_id, capability in shipped_capability_envs().items():
        flawed = [r for r in capability_rollouts[(env_id, "flawed")] if not r.success]
        oracle = capability_rollouts[(env_id, "oracle")]
        lacking_flawed = sum(label(r, capability) == Label.LACKING for r in flawed)
        lacking_oracle = sum(label(r, capability) == Label.LACKING for r in oracle)
        assert lacking_flawed >= 0.6 * len(flawed), (env_id, lacking_flawed, len(flawed))
        assert lacking_oracle <= 0.1 * len(oracle), (env_id, lacking_oracle, len(oracle))


def test_structured_data_acquiring_a_record_that_fits_the_description_worse() -> None:
    product = {"product_id": "9", "variants": {
        "1": {"item_id": "100", "options": {"color": "green", "material": "nylon"}, "available": True},
        "2": {"item_id": "200", "options": {"color": "green", "material": "leather"}, "available": True}}}  # fmt: skip
    ask = "Exchange my backpack for the green leather one, please. Yes, please go ahead."
    steps = [("call", "get_product_details", {"product_id": "9"}, product)]
    wrong = episode(
        ask, [*steps, ("call", "exchange_delivered_order_items", {"order_id": "#W1", "new_item_ids": ["100"]}, {})]
    )
    right = episode(
        ask, [*steps, ("call", "exchange_delivered_order_items", {"order_id": "#W1", "new_item_ids": ["200"]}, {})]
    )
    assert label(wrong, "structured_data_reasoning") == Label.LACKING
    assert label(right, "structured_data_reasoning") == Label.PRESENT
