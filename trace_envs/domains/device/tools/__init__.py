"""The 34 ToolSandbox tools, one module per upstream module, in ToolSandbox's discovery order."""

from __future__ import annotations

from trace_envs.core import Tool

from .contact import add_contact, modify_contact, remove_contact, search_contacts
from .messaging import search_messages, send_message_with_phone_number
from .rapid_api import (
    convert_currency,
    search_lat_lon,
    search_location_around_lat_lon,
    search_stock,
    search_weather_around_lat_lon,
)
from .reminder import add_reminder, modify_reminder, remove_reminder, search_reminder
from .setting import (
    get_cellular_service_status,
    get_current_location,
    get_location_service_status,
    get_low_battery_mode_status,
    get_wifi_status,
    set_cellular_service_status,
    set_location_service_status,
    set_low_battery_mode_status,
    set_wifi_status,
)
from .user_tools import end_conversation
from .utilities import (
    calculate_lat_lon_distance,
    datetime_info_to_timestamp,
    get_current_timestamp,
    search_holiday,
    seconds_to_hours_minutes_seconds,
    shift_timestamp,
    timestamp_diff,
    timestamp_to_datetime_info,
    unit_conversion,
)

ALL_TOOLS: tuple[Tool, ...] = (
    add_contact,
    modify_contact,
    remove_contact,
    search_contacts,
    get_cellular_service_status,
    search_messages,
    send_message_with_phone_number,
    convert_currency,
    get_current_location,
    get_location_service_status,
    get_wifi_status,
    search_lat_lon,
    search_location_around_lat_lon,
    search_stock,
    search_weather_around_lat_lon,
    add_reminder,
    modify_reminder,
    remove_reminder,
    search_reminder,
    get_low_battery_mode_status,
    set_cellular_service_status,
    set_location_service_status,
    set_low_battery_mode_status,
    set_wifi_status,
    end_conversation,
    calculate_lat_lon_distance,
    datetime_info_to_timestamp,
    get_current_timestamp,
    search_holiday,
    seconds_to_hours_minutes_seconds,
    shift_timestamp,
    timestamp_diff,
    timestamp_to_datetime_info,
    unit_conversion,
)
"""Every tool in ToolSandbox's discovery order (the order tools are presented to the agent)."""

__all__ = ["ALL_TOOLS"] + [t.name for t in ALL_TOOLS]
