"""Settings tools: low battery mode, location service, cellular, wifi and the current location.

Turning a service on in low battery mode is a ``PermissionError``; that check runs before the
argument check and before the "already enabled/disabled" check, as upstream does.
"""

from __future__ import annotations

from typing import Any

from ..registry import device_tool
from ..state import DeviceState
from ..validators import check_type

_SERVICES = ("cellular", "wifi", "location_service")


def _set_service(state: DeviceState, field: str, on: Any, blocked_message: str) -> None:
    settings = state.settings
    if on and settings.low_battery_mode:
        raise PermissionError(blocked_message)
    check_type("on", on, bool)
    if getattr(settings, field) == on:
        raise ValueError(f"{field} already {'enabled' if on else 'disabled'}")
    setattr(settings, field, on)


@device_tool("setting", kind="write", typechecked=False)
def set_low_battery_mode_status(state: DeviceState, on: bool) -> None:
    """Enable / Disable low battery mode

    Args:
        on: If we want to turn on low battery mode
    """
    check_type("on", on, bool)
    settings = state.settings
    if settings.low_battery_mode == on:
        raise ValueError(f"low_battery_mode already {'enabled' if on else 'disabled'}")
    settings.low_battery_mode = on
    if on:
        for field in _SERVICES:
            setattr(settings, field, False)


@device_tool("setting", typechecked=False)
def get_low_battery_mode_status(state: DeviceState) -> bool:
    """Request low battery mode status

    Returns:
        Boolean indicating if low battery mode is on
    """
    return bool(state.settings.low_battery_mode)


@device_tool("setting", kind="write", typechecked=False)
def set_location_service_status(state: DeviceState, on: bool) -> None:
    """Enable / Disable location service

    Args:
        on: If we want to turn on location service

    Raises:
        PermissionError: When trying to turn on location service in low battery mode
    """
    _set_service(state, "location_service", on, "Location service cannot be turned on in low battery mode")


@device_tool("setting", typechecked=False)
def get_location_service_status(state: DeviceState) -> bool:
    """Request location service status

    Returns:
        Boolean indicating if location service is on
    """
    return bool(state.settings.location_service)


@device_tool("setting", kind="write", typechecked=False)
def set_cellular_service_status(state: DeviceState, on: bool) -> None:
    """Enable / Disable cellular service

    Args:
        on: If we want to turn on cellular service

    Raises:
        PermissionError: When trying to turn on cellular service in low battery mode
    """
    _set_service(state, "cellular", on, "Cellular service cannot be turned on in low battery mode")


@device_tool("setting", typechecked=False)
def get_cellular_service_status(state: DeviceState) -> bool:
    """Request cellular service status

    Returns:
        Boolean indicating if cellular service is on
    """
    return bool(state.settings.cellular)


@device_tool("setting", kind="write", typechecked=False)
def set_wifi_status(state: DeviceState, on: bool) -> None:
    """Enable / Disable wifi

    Args:
        on: If we want to turn on wifi

    Raises:
        PermissionError: When trying to turn on wifi in low battery mode
    """
    _set_service(state, "wifi", on, "Wifi cannot be turned on in low battery mode")


@device_tool("setting", typechecked=False)
def get_wifi_status(state: DeviceState) -> bool:
    """Request wifi status

    Returns:
        Boolean indicating if wifi is on
    """
    return bool(state.settings.wifi)


@device_tool("setting", typechecked=False)
def get_current_location(state: DeviceState) -> dict[str, float]:
    """Request current location latitude and longitude

    Returns:
        A dictionary with keys latitude and longitude

    Raises:
        PermissionError: When location service is off
    """
    settings = state.settings
    if not settings.location_service:
        raise PermissionError("Location service is not enabled.")
    return {"latitude": settings.latitude, "longitude": settings.longitude}  # type: ignore[dict-item]
