"""Scenario templates: each builds one complete scenario (world, user, milestones, reference solution)
from explicit parameters. The built-in scenarios and the seeded generator both use them.

Every template follows two rules that keep the evaluation honest: no milestone is met by the
starting world, and no milestone is met by the reference solution's first tool call alone (so
repeating one call, or saying nothing, scores 0).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from trace_envs.core import UserFact, UserScript
from trace_envs.domains.device import DeviceState, build_base_world

from .builders import Planner, added, attempted, removed, said, settings_are, tool_trace, updated
from .milestones import Evaluation, Milestone
from .scenario import Category, DeviceScenario

LOW_BATTERY = "base_low_battery_mode_on_wifi_off_location_service_off_cellular_off"
SERVICES: dict[str, tuple[str, str, str]] = {
    # service -> (setter, getter, words the user and agent use)
    "wifi": ("set_wifi_status", "get_wifi_status", "wifi"),
    "cellular": ("set_cellular_service_status", "get_cellular_service_status", "cellular service"),
    "location_service": ("set_location_service_status", "get_location_service_status", "location service"),
}
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _world(base: str | None, world: DeviceState | None) -> DeviceState:
    if world is not None:
        return world
    return build_base_world(base or "base")


def _scenario(
    name: str,
    categories: list[Category],
    base: str | None,
    plan: Planner,
    tools: list[str],
    goal: str,
    opening: str,
    milestones: list[Milestone],
    *,
    facts: list[UserFact] | None = None,
    minefields: list[Milestone] | None = None,
    edges: list[tuple[int, int]] | None = None,
    tags: list[str] | None = None,
    split: str = "train",
) -> DeviceScenario:
    return DeviceScenario(
        name=name,
        categories=categories,
        split=split,  # type: ignore[arg-type]
        base=base,
        world=None if base else plan.initial,
        tools=sorted(set(tools)),
        user_goal=goal,
        user=UserScript(opening=opening, facts=facts or []),
        evaluation=Evaluation(milestones=milestones, milestone_edges=edges, minefields=minefields or []),
        reference_solution=plan.steps,
        tags=tags or [],
    )


def _local(state: DeviceState, timestamp: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(
        timestamp, tz=dt.timezone(dt.timedelta(seconds=state.SIMULATION.utc_offset_seconds))
    )


def _hour_text(hour: int, minute: int) -> str:
    suffix = "AM" if hour < 12 else "PM"
    shown = hour % 12 or 12
    return f"{shown}:{minute:02d} {suffix}"


# ----- state dependency: permission errors -----------------------------------------------------------
def permission_turn_on(
    name: str, service: str, *, base: str | None = LOW_BATTERY, world: DeviceState | None = None,
    implicit: bool = False, split: str = "train",
) -> DeviceScenario:  # fmt: skip
    """Low battery mode blocks turning a service on: diagnose, turn low battery mode off, retry."""
    setter, getter, words = SERVICES[service]
    state = _world(base, world)
    plan = Planner(state)
    plan.call(setter, expect_error="PermissionError", on=True)
    plan.call("get_low_battery_mode_status")
    plan.call("set_low_battery_mode_status", on=False)
    plan.call(setter, on=True)
    text = plan.say(f"Low battery mode was blocking it, so I turned low battery mode off and your {words} is now on.")
    opening = {
        "wifi": "My phone can't get online, can you fix that?" if implicit else "Turn on wifi please.",
        "cellular": "I can't make calls or send texts, can you fix my phone?"
        if implicit
        else "Turn on cellular service.",
        "location_service": "My maps app can't find me, can you help?"
        if implicit
        else "Please turn on location service.",
    }[service]
    return _scenario(
        name, ["STATE_DEPENDENCY", "MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan,
        [setter, getter, "get_low_battery_mode_status", "set_low_battery_mode_status"],
        f"You want the assistant to turn on {words} on your phone. You allow it to change other settings.",
        opening,
        [settings_are(low_battery_mode=False), settings_are(**{service: True}), said(text, words)],
        tags=["permission_error"], split=split,
    )  # fmt: skip


def send_message_blocked(
    name: str, contact: str, content: str, *, base: str | None = "base_cellular_off", world: DeviceState | None = None,
    split: str = "train",
) -> DeviceScenario:  # fmt: skip
    """Sending needs cellular service (and low battery mode blocks turning it on): fix both, then send."""
    state = _world(base, world)
    low_battery = bool(state.settings.low_battery_mode)
    plan = Planner(state)
    found = plan.call("search_contacts", name=contact)
    phone = found[0]["phone_number"]
    plan.call("send_message_with_phone_number", expect_error="ConnectionError", phone_number=phone, content=content)
    milestones = []
    if low_battery:
        plan.call("set_cellular_service_status", expect_error="PermissionError", on=True)
        plan.call("set_low_battery_mode_status", on=False)
        milestones.append(settings_are(low_battery_mode=False))
    plan.call("set_cellular_service_status", on=True)
    plan.call("send_message_with_phone_number", phone_number=phone, content=content)
    first = contact.split()[0]
    text = plan.say(f"Cellular service was off, so I turned it on and sent your message to {first}.")
    milestones += [
        settings_are(cellular=True),
        added("MESSAGING", {"recipient_phone_number": phone, "content": content}),
        said(text, first),
    ]
    tools = [
        "search_contacts",
        "send_message_with_phone_number",
        "get_cellular_service_status",
        "set_cellular_service_status",
    ]
    if low_battery:
        tools += ["get_low_battery_mode_status", "set_low_battery_mode_status"]
    return _scenario(
        name, ["STATE_DEPENDENCY", "MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan, tools,
        f"You want to text {contact} the message '{content}'. You allow the assistant to change settings.",
        f"Send a message to {contact} saying: {content}", milestones,
        tags=["permission_error"] if low_battery else ["connection_error"], split=split,
    )  # fmt: skip


def weather_low_battery(name: str, *, base: str | None = LOW_BATTERY, world: DeviceState | None = None,
                        split: str = "train") -> DeviceScenario:  # fmt: skip
    """The weather here needs location service and wifi, both blocked by low battery mode."""
    state = _world(base, world)
    plan = Planner(state)
    plan.call("search_weather_around_lat_lon", expect_error="PermissionError")
    plan.call("get_low_battery_mode_status")
    plan.call("set_low_battery_mode_status", on=False)
    plan.call("set_location_service_status", on=True)
    plan.call("set_wifi_status", on=True)
    report = plan.call("search_weather_around_lat_lon")
    temperature = report["current_temperature"]
    text = plan.say(f"It is {temperature} degrees Celsius right now. I turned off low battery mode to check.")
    return _scenario(
        name, ["STATE_DEPENDENCY", "MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN", "CANONICALIZATION"], base, plan,
        ["search_weather_around_lat_lon", "get_low_battery_mode_status", "set_low_battery_mode_status",
         "set_location_service_status", "set_wifi_status", "get_wifi_status", "get_location_service_status"],
        "You want to know the current temperature where you are. You allow the assistant to change settings.",
        "What's the temperature outside right now?",
        [settings_are(low_battery_mode=False, location_service=True, wifi=True),
         tool_trace("search_weather_around_lat_lon", days=0), said(text, str(temperature))],
        tags=["permission_error"], split=split,
    )  # fmt: skip


# ----- date and time -----------------------------------------------------------------------------------------
def reminder_at(
    name: str, content: str, day_offset: int, hour: int, minute: int, when_text: str, *, base: str | None = "base",
    world: DeviceState | None = None, ask_time: bool = False, split: str = "train",
) -> DeviceScenario:  # fmt: skip
    """ "Remind me to X <relative day> at <time>": read the date with timestamp_to_datetime_info, never guess it."""
    state = _world(base, world)
    plan = Planner(state)
    facts = []
    if ask_time:
        plan.say("Sure. When should I remind you?")
        facts = [UserFact(keys=["when", "time", "what day"], answer=f"{when_text[0].upper()}{when_text[1:]}.")]
    now = plan.call("get_current_timestamp")
    info = plan.call("timestamp_to_datetime_info", timestamp=now)
    day = dt.date(info["year"], info["month"], info["day"]) + dt.timedelta(days=day_offset)
    target = plan.call(
        "datetime_info_to_timestamp", year=day.year, month=day.month, day=day.day, hour=hour, minute=minute, second=0
    )
    plan.call("add_reminder", content=content, reminder_timestamp=target)
    text = plan.say(
        f"Done: I set a reminder to {content.lower()} on {day.strftime('%B')} {day.day} at {_hour_text(hour, minute)}."
    )
    categories: list[Category] = ["CANONICALIZATION", "MULTIPLE_TOOL_CALL"]
    categories.append("MULTIPLE_USER_TURN" if ask_time else "SINGLE_USER_TURN")
    opening = f"Remind me to {content.lower()}." if ask_time else f"Remind me to {content.lower()} {when_text}."
    return _scenario(
        name, categories, base, plan,
        ["get_current_timestamp", "timestamp_to_datetime_info", "datetime_info_to_timestamp", "add_reminder",
         "shift_timestamp"],
        f"You want a reminder to {content.lower()} {when_text}.", opening,
        [added("REMINDER", {"content": content, "reminder_timestamp": target}), said(text, content.lower())],
        facts=facts, tags=["datetime"], split=split,
    )  # fmt: skip


def days_until_holiday(
    name: str, holiday: str, *, base: str | None = "base", world: DeviceState | None = None, split: str = "train",
) -> DeviceScenario:  # fmt: skip
    """ "How many days until <holiday>?": find the current year first, then search and diff (needs wifi)."""
    state = _world(base, world)
    wifi_off = not state.settings.wifi
    plan = Planner(state)
    now = plan.call("get_current_timestamp")
    year = plan.call("timestamp_to_datetime_info", timestamp=now)["year"]
    milestones: list[Milestone] = []
    if wifi_off:
        plan.call("search_holiday", expect_error="ConnectionError", holiday_name=holiday, year=year)
        plan.call("set_wifi_status", on=True)
        milestones.append(settings_are(wifi=True))
    when = plan.call("search_holiday", holiday_name=holiday, year=year)
    if when < now:
        year += 1
        when = plan.call("search_holiday", holiday_name=holiday, year=year)
    days = plan.call("timestamp_diff", timestamp_0=now, timestamp_1=when)["days"]
    text = plan.say(f"{holiday} is {days} days away.")
    milestones += [tool_trace("search_holiday", year=year), said(text, f"{days} days")]
    tools = ["get_current_timestamp", "timestamp_to_datetime_info", "search_holiday", "timestamp_diff"]
    categories: list[Category] = ["CANONICALIZATION", "MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"]
    if wifi_off:
        tools += ["get_wifi_status", "set_wifi_status"]
        categories.append("STATE_DEPENDENCY")
    return _scenario(
        name, categories, base, plan, tools, f"You want to know how many days are left until {holiday}.",
        f"How many days until {holiday}?", milestones, tags=["datetime"] + (["connection_error"] if wifi_off else []),
        split=split,
    )  # fmt: skip


def reschedule_reminder(
    name: str, query: str, day_offset: int, hour: int, minute: int, when_text: str, *, base: str | None = "base",
    world: DeviceState | None = None, split: str = "train",
) -> DeviceScenario:  # fmt: skip
    """Move an existing reminder to a relative day and time."""
    state = _world(base, world)
    plan = Planner(state)
    found = plan.call("search_reminder", content=query)
    reminder = found[0]
    now = plan.call("get_current_timestamp")
    info = plan.call("timestamp_to_datetime_info", timestamp=now)
    day = dt.date(info["year"], info["month"], info["day"]) + dt.timedelta(days=day_offset)
    target = plan.call(
        "datetime_info_to_timestamp", year=day.year, month=day.month, day=day.day, hour=hour, minute=minute, second=0
    )
    plan.call("modify_reminder", reminder_id=reminder["reminder_id"], reminder_timestamp=target)
    text = plan.say(
        f"I moved your reminder '{reminder['content']}' to {day.strftime('%B')} {day.day} at {_hour_text(hour, minute)}."
    )
    return _scenario(
        name, ["CANONICALIZATION", "MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan,
        ["search_reminder", "get_current_timestamp", "timestamp_to_datetime_info", "datetime_info_to_timestamp",
         "modify_reminder"],
        f"You want your reminder about '{query}' moved to {when_text}.",
        f"Move my reminder about {query.lower()} to {when_text}.",
        [updated("REMINDER", {"reminder_id": reminder["reminder_id"], "reminder_timestamp": target}),
         said(text, reminder["content"])],
        tags=["datetime"], split=split,
    )  # fmt: skip


def upcoming_reminders(name: str, hours: int, *, base: str | None = "base", world: DeviceState | None = None,
                       split: str = "train") -> DeviceScenario:  # fmt: skip
    """ "What's coming up in the next N hours?": range search between now and now + N hours."""
    state = _world(base, world)
    plan = Planner(state)
    now = plan.call("get_current_timestamp")
    until = plan.call("shift_timestamp", timestamp=now, hours=hours)
    found = plan.call("search_reminder", reminder_timestamp_lowerbound=now, reminder_timestamp_upperbound=until)
    if not found:
        raise ValueError(f"{name}: no reminder falls in the next {hours} hours of this world")
    contents = [r["content"] for r in found]
    text = plan.say("Coming up: " + "; ".join(contents) + ".")
    return _scenario(
        name, ["CANONICALIZATION", "MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan,
        ["get_current_timestamp", "shift_timestamp", "search_reminder", "timestamp_to_datetime_info"],
        f"You want to know which reminders are due in the next {hours} hours.",
        f"Which of my reminders are due in the next {hours} hours?",
        [tool_trace("search_reminder", atol={"reminder_timestamp_lowerbound": 60.0, "reminder_timestamp_upperbound": 60.0},
                    reminder_timestamp_lowerbound=now, reminder_timestamp_upperbound=until),
         said(text, contents[0])],
        tags=["datetime"], split=split,
    )  # fmt: skip


# ----- canonicalisation of amounts -------------------------------------------------------------------------
def convert_units(
    name: str, amount: float, from_unit: str, to_unit: str, question: str, *, base: str | None = "base",
    world: DeviceState | None = None, split: str = "train",
) -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    value = plan.call("unit_conversion", amount=amount, from_unit=from_unit, to_unit=to_unit)
    shown = f"{value:.2f}"
    text = plan.say(f"That is {shown} {to_unit}.")
    return _scenario(
        name, ["CANONICALIZATION", "SINGLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan, ["unit_conversion"],
        f"You want to know: {question}", question, [said(text, shown)], tags=["units"], split=split,
    )  # fmt: skip


def convert_money(
    name: str, amount: float, from_code: str, to_code: str, question: str, *, base: str | None = "base",
    world: DeviceState | None = None, split: str = "train",
) -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    value = plan.call("convert_currency", amount=amount, from_currency_code=from_code, to_currency_code=to_code)
    shown = f"{value:.2f}"
    text = plan.say(f"That is about {shown} {to_code}.")
    return _scenario(
        name, ["CANONICALIZATION", "SINGLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan, ["convert_currency"],
        f"You want to know: {question}", question, [said(text, shown)], tags=["currency"], split=split,
    )  # fmt: skip


# ----- contacts and messages (multiple tool calls) -----------------------------------------------------
def lookup_phone(name: str, contact: str, *, base: str | None = "base", world: DeviceState | None = None,
                 split: str = "train") -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    found = plan.call("search_contacts", name=contact)
    phone = found[0]["phone_number"]
    text = plan.say(f"{contact}'s phone number is {phone}.")
    return _scenario(
        name, ["SINGLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan, ["search_contacts"],
        f"You want {contact}'s phone number.", f"What's {contact}'s phone number?", [said(text, phone)], split=split,
    )  # fmt: skip


def change_phone(name: str, contact: str, new_phone: str, *, base: str | None = "base",
                 world: DeviceState | None = None, split: str = "train") -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    person = plan.call("search_contacts", name=contact)[0]
    plan.call("modify_contact", person_id=person["person_id"], phone_number=new_phone)
    first = contact.split()[0]
    text = plan.say(f"{first}'s number is now {new_phone}.")
    return _scenario(
        name, ["MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan, ["search_contacts", "modify_contact"],
        f"You want {contact}'s phone number changed to {new_phone}.",
        f"Update {contact}'s phone number to {new_phone}.",
        [updated("CONTACT", {"person_id": person["person_id"], "name": person["name"], "phone_number": new_phone}),
         said(text, new_phone)],
        split=split,
    )  # fmt: skip


def delete_contact(name: str, contact: str, *, base: str | None = "base", world: DeviceState | None = None,
                   split: str = "train") -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    person = plan.call("search_contacts", name=contact)[0]
    plan.call("remove_contact", person_id=person["person_id"])
    text = plan.say(f"I removed {contact} from your contacts.")
    return _scenario(
        name, ["MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan, ["search_contacts", "remove_contact"],
        f"You want {contact} removed from your contacts.", f"Delete {contact} from my contacts.",
        [removed("CONTACT", {"person_id": person["person_id"], "name": contact}), said(text, contact)], split=split,
    )  # fmt: skip


def new_contact(name: str, contact: str, phone: str, relationship: str, *, base: str | None = "base",
                world: DeviceState | None = None, split: str = "train") -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    plan.say(f"Sure. What is {contact}'s phone number?")
    plan.call("search_contacts", name=contact)
    plan.call("add_contact", name=contact, phone_number=phone, relationship=relationship)
    text = plan.say(f"I added {contact} ({relationship}) with the number {phone}.")
    return _scenario(
        name, ["MULTIPLE_TOOL_CALL", "MULTIPLE_USER_TURN"], base, plan, ["search_contacts", "add_contact"],
        f"You want to save {contact}, your {relationship}, whose number is {phone}.",
        f"Save my {relationship} {contact} as a new contact.",
        [added("CONTACT", {"name": contact, "phone_number": phone, "relationship": relationship, "is_self": False}),
         said(text, contact)],
        facts=[UserFact(keys=["number", "phone"], answer=f"It's {phone}.")], split=split,
    )  # fmt: skip


def last_message_from(name: str, contact: str, *, base: str | None = "base", world: DeviceState | None = None,
                      split: str = "train") -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    person = plan.call("search_contacts", name=contact)[0]
    messages = plan.call("search_messages", sender_person_id=person["person_id"])
    latest = max(messages, key=lambda m: m["creation_timestamp"])
    text = plan.say(f"{contact.split()[0]}'s last message said: {latest['content']}")
    return _scenario(
        name, ["MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan, ["search_contacts", "search_messages"],
        f"You want to know what {contact} last texted you.", f"What was the last thing {contact} texted me?",
        [tool_trace("search_messages", sender_person_id=person["person_id"]), said(text, latest["content"])],
        split=split,
    )  # fmt: skip


def distance_to(name: str, place: str, *, base: str | None = "base", world: DeviceState | None = None,
                split: str = "train") -> DeviceScenario:  # fmt: skip
    state = _world(base, world)
    plan = Planner(state)
    here = plan.call("get_current_location")
    spot = plan.call("search_location_around_lat_lon", location=place)[0]
    km = plan.call(
        "calculate_lat_lon_distance", latitude_0=here["latitude"], longitude_0=here["longitude"],
        latitude_1=spot["latitude"], longitude_1=spot["longitude"],
    )  # fmt: skip
    shown = f"{km:.1f}"
    text = plan.say(f"{spot['name']} is about {shown} km away.")
    return _scenario(
        name, ["CANONICALIZATION", "MULTIPLE_TOOL_CALL", "SINGLE_USER_TURN"], base, plan,
        ["get_current_location", "search_location_around_lat_lon", "calculate_lat_lon_distance"],
        f"You want to know how far {place} is from you.", f"How far am I from {place}?",
        [tool_trace("calculate_lat_lon_distance", atol={"latitude_1": 0.001, "longitude_1": 0.001},
                    latitude_1=spot["latitude"], longitude_1=spot["longitude"]),
         said(text, shown)],
        split=split,
    )  # fmt: skip


# ----- insufficient information -----------------------------------------------------------------------------
def cannot_locate(name: str, *, base: str | None = "base", world: DeviceState | None = None,
                  split: str = "train") -> DeviceScenario:  # fmt: skip
    """Only reverse geocoding is available, but nothing gives the current coordinates."""
    plan = Planner(_world(base, world))
    text = plan.say("I can't tell which city you are in: none of my tools can read your current location.")
    return _scenario(
        name, ["INSUFFICIENT_INFORMATION"], base, plan, ["search_lat_lon"],
        "You want to know which city you are in. You do not know your coordinates.", "Which city am I in right now?",
        [said(text, "current location")], minefields=[attempted("search_lat_lon")], split=split,
    )  # fmt: skip


def cannot_text_unknown_number(name: str, contact: str, *, base: str | None = "base_cellular_off",
                               world: DeviceState | None = None, split: str = "train") -> DeviceScenario:  # fmt: skip
    """No contact search tool and the user does not know the number: ask, then decline."""
    plan = Planner(_world(base, world))
    plan.say(f"What is {contact}'s phone number?")
    text = plan.say(f"Without {contact}'s phone number I can't send the message.")
    return _scenario(
        name, ["INSUFFICIENT_INFORMATION"], base, plan,
        ["send_message_with_phone_number", "get_cellular_service_status", "set_cellular_service_status"],
        f"You want to text {contact} 'see you soon'. You do not know their phone number.",
        f"Text {contact} that I'll see them soon.",
        [said(text, "phone number")], minefields=[attempted("send_message_with_phone_number")], split=split,
    )  # fmt: skip


def cannot_count_days(name: str, holiday: str, *, base: str | None = "base", world: DeviceState | None = None,
                      split: str = "train") -> DeviceScenario:  # fmt: skip
    """No tool gives the current time, so the days until a holiday cannot be computed."""
    plan = Planner(_world(base, world))
    text = plan.say(f"I can't count the days until {holiday}: I have no tool that tells me the current date.")
    return _scenario(
        name, ["INSUFFICIENT_INFORMATION"], base, plan, ["search_holiday", "timestamp_diff"],
        f"You want to know how many days are left until {holiday}.", f"How many days are left until {holiday}?",
        [said(text, "current date")], minefields=[attempted("timestamp_diff")], tags=["datetime"], split=split,
    )  # fmt: skip


def cannot_find_reminder_time(name: str, *, base: str | None = "base", world: DeviceState | None = None,
                              split: str = "train") -> DeviceScenario:  # fmt: skip
    """ "Reminders from yesterday" without a clock: searching by a guessed timestamp is forbidden."""
    plan = Planner(_world(base, world))
    text = plan.say("I can't find yesterday's reminders: I have no way to know today's date.")
    return _scenario(
        name, ["INSUFFICIENT_INFORMATION"], base, plan, ["search_reminder", "shift_timestamp", "timestamp_to_datetime_info"],
        "You want to see the reminders you created yesterday. You don't know today's date as a timestamp.",
        "Show me the reminders I created yesterday.",
        [said(text, "date")], minefields=[attempted("search_reminder")], tags=["datetime"], split=split,
    )  # fmt: skip


TEMPLATES: dict[str, Any] = {
    "permission_turn_on": permission_turn_on,
    "send_message_blocked": send_message_blocked,
    "weather_low_battery": weather_low_battery,
    "reminder_at": reminder_at,
    "days_until_holiday": days_until_holiday,
    "reschedule_reminder": reschedule_reminder,
    "upcoming_reminders": upcoming_reminders,
    "convert_units": convert_units,
    "convert_money": convert_money,
    "lookup_phone": lookup_phone,
    "change_phone": change_phone,
    "delete_contact": delete_contact,
    "new_contact": new_contact,
    "last_message_from": last_message_from,
    "distance_to": distance_to,
    "cannot_locate": cannot_locate,
    "cannot_text_unknown_number": cannot_text_unknown_number,
    "cannot_count_days": cannot_count_days,
    "cannot_find_reminder_time": cannot_find_reminder_time,
}
