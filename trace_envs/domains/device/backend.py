"""The seeded offline backend behind the network tools (maps, weather, stocks, currency).

Upstream calls RapidAPI services over the network; their answers are not reproducible. Here a
fixed catalogue of places, companies and exchange rates stands in, and the changing values
(weather, stock prices, rates) are drawn from ``random.Random`` seeded by the world's
``backend_seed`` and the query, so the same world answers the same way in any process. Result
shapes follow upstream's post-processing (renamed weather keys, Celsius/Kilometer units,
at most 4 places, ``symbol`` cut at ``:``).
"""

from __future__ import annotations

import math
import random
from typing import Any

from .fuzzy import default_process, extract, partial_ratio, wratio

PLACES: list[dict[str, Any]] = [
    {
        "name": "Apple Park",
        "full_address": "Apple Park, One Apple Park Way, Cupertino, CA 95014",
        "phone_number": "+14089961010",
        "latitude": 37.3349285,
        "longitude": -122.011023,
        "types": ["Corporate office"],
    },
    {
        "name": "Apple Infinite Loop",
        "full_address": "Apple Infinite Loop, 1 Infinite Loop, Cupertino, CA 95014",
        "phone_number": "+14089961010",
        "latitude": 37.3318598,
        "longitude": -122.0302485,
        "types": ["Corporate office"],
    },
    {
        "name": "Cupertino Library",
        "full_address": "Cupertino Library, 10800 Torre Ave, Cupertino, CA 95014",
        "phone_number": "+14084463221",
        "latitude": 37.3179632,
        "longitude": -122.0285519,
        "types": ["Public library"],
    },
    {
        "name": "Cupertino Memorial Park",
        "full_address": "Cupertino Memorial Park, 21221 Stevens Creek Blvd, Cupertino, CA 95014",
        "phone_number": "+14087777120",
        "latitude": 37.3241,
        "longitude": -122.0444,
        "types": ["Park"],
    },
    {
        "name": "Main Street Cupertino",
        "full_address": "Main Street Cupertino, 19419 Stevens Creek Blvd, Cupertino, CA 95014",
        "phone_number": "+14082551001",
        "latitude": 37.3237926356735,
        "longitude": -122.03961770355414,
        "types": ["Shopping center"],
    },
    {
        "name": "Philz Coffee",
        "full_address": "Philz Coffee, 20686 Stevens Creek Blvd, Cupertino, CA 95014",
        "phone_number": "+14084461991",
        "latitude": 37.3226,
        "longitude": -122.0339,
        "types": ["Coffee shop"],
    },
    {
        "name": "Starbucks",
        "full_address": "Starbucks, 20520 Homestead Rd, Cupertino, CA 95014",
        "phone_number": "+14087256400",
        "latitude": 37.3372,
        "longitude": -122.0309,
        "types": ["Coffee shop"],
    },
    {
        "name": "McDonald's",
        "full_address": "McDonald's, 10825 N Wolfe Rd, Cupertino, CA 95014",
        "phone_number": "+14082551561",
        "latitude": 37.3345,
        "longitude": -122.0148,
        "types": ["Fast food restaurant"],
    },
    {
        "name": "Whole Foods Market",
        "full_address": "Whole Foods Market, 20955 Stevens Creek Blvd, Cupertino, CA 95014",
        "phone_number": "+14082570421",
        "latitude": 37.3236,
        "longitude": -122.0377,
        "types": ["Grocery store"],
    },
    {
        "name": "San Jose Mineta International Airport",
        "full_address": "1701 Airport Blvd, San Jose, CA 95110",
        "phone_number": "+14083922000",
        "latitude": 37.3639472,
        "longitude": -121.9289375,
        "types": ["Airport"],
    },
    {
        "name": "Stanford University",
        "full_address": "450 Jane Stanford Way, Stanford, CA 94305",
        "phone_number": "+16507232300",
        "latitude": 37.4274745,
        "longitude": -122.169719,
        "types": ["University"],
    },
    {
        "name": "Golden Gate Bridge",
        "full_address": "Golden Gate Bridge, San Francisco, CA 94129",
        "phone_number": "+14159215858",
        "latitude": 37.8199286,
        "longitude": -122.4782551,
        "types": ["Bridge"],
    },
    {
        "name": "San Francisco",
        "full_address": "San Francisco, CA, USA",
        "phone_number": None,
        "latitude": 37.7749295,
        "longitude": -122.4194155,
        "types": ["City"],
    },
    {
        "name": "Seattle",
        "full_address": "Seattle, WA, USA",
        "phone_number": None,
        "latitude": 47.6062095,
        "longitude": -122.3320708,
        "types": ["City"],
    },
    {
        "name": "New York",
        "full_address": "New York, NY, USA",
        "phone_number": None,
        "latitude": 40.7127753,
        "longitude": -74.0059728,
        "types": ["City"],
    },
    {
        "name": "Chicago",
        "full_address": "Chicago, IL, USA",
        "phone_number": None,
        "latitude": 41.8781136,
        "longitude": -87.6297982,
        "types": ["City"],
    },
    {
        "name": "Los Angeles",
        "full_address": "Los Angeles, CA, USA",
        "phone_number": None,
        "latitude": 34.0522342,
        "longitude": -118.2436849,
        "types": ["City"],
    },
    {
        "name": "Boston",
        "full_address": "Boston, MA, USA",
        "phone_number": None,
        "latitude": 42.3600825,
        "longitude": -71.0588801,
        "types": ["City"],
    },
]

STOCKS: list[dict[str, Any]] = [
    {"name": "Apple Inc", "symbol": "AAPL:NASDAQ", "exchange": "NASDAQ", "price": 227.5, "currency": "USD"},
    {"name": "Microsoft Corporation", "symbol": "MSFT:NASDAQ", "exchange": "NASDAQ", "price": 415.1, "currency": "USD"},
    {"name": "Alphabet Inc Class A", "symbol": "GOOGL:NASDAQ", "exchange": "NASDAQ", "price": 168.3, "currency": "USD"},
    {"name": "Amazon.com Inc", "symbol": "AMZN:NASDAQ", "exchange": "NASDAQ", "price": 186.4, "currency": "USD"},
    {"name": "NVIDIA Corp", "symbol": "NVDA:NASDAQ", "exchange": "NASDAQ", "price": 121.9, "currency": "USD"},
    {"name": "Tesla Inc", "symbol": "TSLA:NASDAQ", "exchange": "NASDAQ", "price": 242.8, "currency": "USD"},
    {"name": "Meta Platforms Inc", "symbol": "META:NASDAQ", "exchange": "NASDAQ", "price": 512.6, "currency": "USD"},
    {"name": "Netflix Inc", "symbol": "NFLX:NASDAQ", "exchange": "NASDAQ", "price": 688.0, "currency": "USD"},
    {"name": "The Coca-Cola Co", "symbol": "KO:NYSE", "exchange": "NYSE", "price": 69.7, "currency": "USD"},
    {"name": "Walmart Inc", "symbol": "WMT:NYSE", "exchange": "NYSE", "price": 80.2, "currency": "USD"},
    {"name": "Toyota Motor Corp", "symbol": "7203:TYO", "exchange": "TYO", "price": 2710.0, "currency": "JPY"},
    {"name": "SAP SE", "symbol": "SAP:ETR", "exchange": "ETR", "price": 201.4, "currency": "EUR"},
]

USD_RATES: dict[str, float] = {
    "USD": 1.0,
    "EUR": 0.92,
    "GBP": 0.79,
    "JPY": 149.5,
    "CNY": 7.24,
    "CAD": 1.36,
    "AUD": 1.52,
    "CHF": 0.88,
    "INR": 83.3,
    "MXN": 17.1,
    "KRW": 1330.0,
    "SEK": 10.5,
    "NOK": 10.7,
    "DKK": 6.86,
    "HKD": 7.82,
    "SGD": 1.35,
    "NZD": 1.64,
    "BRL": 5.0,
    "ZAR": 18.6,
    "TRY": 32.1,
    "PLN": 3.98,
    "THB": 35.9,
    "ILS": 3.7,
    "AED": 3.67,
}

_CONDITIONS = ["Sunny", "Partly cloudy", "Cloudy", "Overcast", "Light rain", "Moderate rain", "Mist", "Clear"]


def _rng(seed: int, *key: object) -> random.Random:
    return random.Random(f"{seed}|" + "|".join(str(k) for k in key))


def distance_km(lat0: float, lon0: float, lat1: float, lon1: float) -> float:
    """Great-circle distance on a sphere of radius 6371.0088 km (our stand-in for geopy's geodesic)."""
    p0, p1 = math.radians(lat0), math.radians(lat1)
    dp, dl = p1 - p0, math.radians(lon1 - lon0)
    a = math.sin(dp / 2) ** 2 + math.cos(p0) * math.cos(p1) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))


def reverse_geocode(latitude: float, longitude: float) -> str | None:
    """Address of the nearest catalogue place within 2 km, else None."""
    best = min(PLACES, key=lambda p: distance_km(latitude, longitude, p["latitude"], p["longitude"]))
    if distance_km(latitude, longitude, best["latitude"], best["longitude"]) > 2.0:
        return None
    return str(best["full_address"])


def search_places(query: str, latitude: float, longitude: float) -> list[dict[str, Any]]:
    """Up to 4 catalogue places matching ``query`` (name or type), nearest first."""
    keys = [f"{p['name']} {' '.join(p['types'])}" for p in PLACES]
    matches = extract(query, keys, scorer=wratio, score_cutoff=80, limit=None)
    found = [PLACES[index] for _, _, index in matches]
    found.sort(key=lambda p: distance_km(latitude, longitude, p["latitude"], p["longitude"]))
    return [{**place, "types": list(place["types"])} for place in found[:4]]


def weather(seed: int, latitude: float, longitude: float, day: int, date_iso: str) -> dict[str, Any] | None:
    """Forecast for ``day`` days ahead (0 = today, with the current observation merged); None past 13."""
    if day > 13:
        return None
    base = _rng(seed, "climate", round(latitude, 1), round(longitude, 1)).uniform(4.0, 26.0)
    rng = _rng(seed, "weather", round(latitude, 2), round(longitude, 2), date_iso)
    average = round(base + rng.uniform(-5.0, 5.0), 1)
    spread = rng.uniform(3.0, 9.0)
    forecast: dict[str, Any] = {
        "date": date_iso,
        "max_temperature": round(average + spread / 2, 1),
        "min_temperature": round(average - spread / 2, 1),
        "average_temperature": average,
        "max_wind_speed": round(rng.uniform(5.0, 40.0), 1),
        "average_visibility_distance": round(rng.uniform(6.0, 10.0), 1),
        "average_humidity": rng.randint(30, 95),
        "condition": rng.choice(_CONDITIONS),
        "chance_of_rain": rng.randint(0, 100),
        "temperature_unit": "Celsius",
        "distance_unit": "Kilometer",
    }
    if day == 0:
        current = round(average + rng.uniform(-spread / 2, spread / 2), 1)
        forecast.update(
            {
                "current_temperature": current,
                "perceived_temperature": round(current - rng.uniform(0.0, 3.0), 1),
                "visibility_distance": round(rng.uniform(6.0, 10.0), 1),
                "wind_speed": round(rng.uniform(2.0, 30.0), 1),
                "barometric_pressure": round(rng.uniform(1000.0, 1030.0), 1),
                "humidity": rng.randint(30, 95),
            }
        )
    return forecast


def stock(seed: int, query: str) -> dict[str, Any] | None:
    """The first stock matching the query by name, symbol or exchange (None when nothing matches)."""
    processed = default_process(query)
    if not processed:
        return None
    best: tuple[float, int] | None = None
    for index, item in enumerate(STOCKS):
        symbol = item["symbol"].split(":")[0]
        score = max(wratio(processed, default_process(item["name"])), 100.0 if processed == symbol.lower() else 0.0)
        score = max(score, partial_ratio(processed, default_process(item["exchange"])) * 0.5)
        if score >= 80 and (best is None or score > best[0]):
            best = (score, index)
    if best is None:
        return None
    item = STOCKS[best[1]]
    rng = _rng(seed, "stock", item["symbol"])
    price = round(item["price"] * (1 + rng.uniform(-0.05, 0.05)), 2)
    change = round(price * rng.uniform(-0.03, 0.03), 2)
    return {
        "symbol": item["symbol"].split(":")[0],
        "name": item["name"],
        "exchange": item["exchange"],
        "price": price,
        "change": change,
        "percent_change": round(100 * change / (price - change), 4),
        "currency": item["currency"],
    }


def exchange_rate(seed: int, from_code: str, to_code: str) -> float | None:
    """Units of ``to_code`` per unit of ``from_code`` (None when a code is not served)."""
    if from_code not in USD_RATES or to_code not in USD_RATES:
        return None
    rng = _rng(seed, "fx")
    jitter = {code: 1 + rng.uniform(-0.02, 0.02) for code in sorted(USD_RATES)}
    jitter["USD"] = 1.0
    return (USD_RATES[to_code] * jitter[to_code]) / (USD_RATES[from_code] * jitter[from_code])
