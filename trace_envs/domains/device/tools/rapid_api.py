"""Network tools (maps, weather, stocks, currency) answered by the seeded offline backend.

Upstream sends these to RapidAPI; every request first needs wifi (``ConnectionError: Wifi is not
enabled``). The API-key check of upstream has no offline counterpart and is not reproduced.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .. import backend
from ..registry import device_tool
from ..state import DeviceState
from ..validators import check_latitude, check_longitude, validate_currency_code
from .utilities import to_local


def _require_wifi(state: DeviceState) -> None:
    if not state.settings.wifi:
        raise ConnectionError("Wifi is not enabled")


def _resolve_lat_lon(state: DeviceState, latitude: float | None, longitude: float | None) -> tuple[float, float]:
    if (latitude is None) != (longitude is None):
        raise ValueError("Latitude and Longitude must be either both provided, or both not provided")
    if latitude is None or longitude is None:
        settings = state.settings
        if not settings.location_service:
            raise PermissionError("Location service is not enabled.")
        return float(settings.latitude or 0.0), float(settings.longitude or 0.0)
    return latitude, longitude


@device_tool("rapid_api_search_tools")
def search_lat_lon(state: DeviceState, latitude: float, longitude: float) -> str | None:
    """Search for the address corresponding to a latitude and longitude

    Args:
        latitude:   Latitude to search
        longitude:  Longitude to search

    Returns:
        Address string, or None if nothing was found
    """
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)
    _require_wifi(state)
    return backend.reverse_geocode(latitude, longitude)


@device_tool("rapid_api_search_tools")
def search_location_around_lat_lon(
    state: DeviceState, location: str, latitude: float | None = None, longitude: float | None = None
) -> list[dict[str, Any]]:
    """Search for a location around a latitude and longitude

    location is a surface form query defining the location. This can be a business name like McDonald's,
    a point of interest like restaurant, a city / state,
    or a full address. When latitude and longitude are not provided, defaults to search around current location.

    Search results contains various optional information including but not limited to
        - name
        - address
        - category / type
        - business hours
        - price
        - phone_number
        - url
        - location lat lon

    Args:
        location:   Surface form query defining the location
        latitude:   Latitude to search around. Defaults to current latitude if not provided
        longitude:  Longitude to search around. Defaults to current longitude if not provided

    Returns:
        A list of matching locations
    """
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)
    lat, lon = _resolve_lat_lon(state, latitude, longitude)
    _require_wifi(state)
    return backend.search_places(location, lat, lon)


@device_tool("rapid_api_search_tools")
def search_weather_around_lat_lon(
    state: DeviceState, days: int = 0, latitude: float | None = None, longitude: float | None = None
) -> dict[str, Any] | None:
    """Search for weather information around a latitude and longitude, right now or sometime in the future

    Search results contains weather forcast various optional information, including but not limited to
        - condition: RAIN / CLOUDY ...
        - temperature:  In Celsius
        - humidity
        - country
        - state
        - timezone

    Args:
        days:       Number of days to search for past the current time. Defaults to current day if not provided.
        latitude:   Latitude to search around. Defaults to current latitude if not provided
        longitude:  Longitude to search around. Defaults to current longitude if not provided

    Returns:
        A dictionary of weather information, or None

    Raises:
        ValueError: When days is negative
    """
    if days < 0:
        raise ValueError(f"Days must be positive integer, found days={days}.")
    check_latitude("latitude", latitude)
    check_longitude("longitude", longitude)
    lat, lon = _resolve_lat_lon(state, latitude, longitude)
    _require_wifi(state)
    date = (to_local(state, state.now) + dt.timedelta(days=days)).date().isoformat()
    return backend.weather(state.SIMULATION.backend_seed, lat, lon, days, date)


@device_tool("rapid_api_search_tools")
def search_stock(state: DeviceState, query: str) -> dict[str, str | float] | None:
    """Search for various information about a stock given a query.

    The query can be a company name (Apple), stock symbol (AAPL) exchange name (NASDAQ)

    Search results contains various optional information about the stock, including but not limited to
        - name:             The written name of the stock, e.g. Apple
        - symbol:           The code for the stock, e.g. AAPL
        - exchange:         The exchange the stock is in, e.g. NASDAQ
        - price:            Current price of the stock
        - change:           Absolute diff between current price of the stock and last opening day
        - percent_change:   Relative diff between current price of the stock and last opening day
        - currency:         ISO currency of the currency this stock trades in, e.g. USD

    Args:
        query:  a company name (Apple), stock symbol (AAPL) exchange name (NASDAQ)

    Returns:
        A dictionary of stock information, or None
    """
    _require_wifi(state)
    return backend.stock(state.SIMULATION.backend_seed, query)


@device_tool("rapid_api_search_tools")
def convert_currency(state: DeviceState, amount: float | int, from_currency_code: str, to_currency_code: str) -> float:
    """Converts currency amount from a one currency to another given on their ISO 4217 currency code

    Args:
        amount:             Amount of currency to convert
        from_currency_code: ISO 4217 currency code `amount` corresponds to
        to_currency_code:   ISO 4217 currency code return value corresponds to

    Returns:
        Converted amount

    Raises:
        RuntimeError: When the conversion fails
    """
    validate_currency_code(from_currency_code)
    validate_currency_code(to_currency_code)
    _require_wifi(state)
    rate = backend.exchange_rate(state.SIMULATION.backend_seed, from_currency_code.upper(), to_currency_code.upper())
    if rate is None:
        raise RuntimeError("Conversion failed")
    return float(amount * rate)
