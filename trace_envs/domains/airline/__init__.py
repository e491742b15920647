"""tau2-bench's airline domain, reproduced exactly: ``FlightDB`` state, the 14 tools, a seeded generator.

``AIRLINE`` is the :class:`~trace_envs.domains.tau2_common.Tau2Domain` (registered as ``"airline"``);
``load_db`` reads a tau2 ``db.json``; ``generate_airline_db`` builds a realistic database from a seed
so that envs and tests need no data file. Upstream quirks kept for hash parity are listed in
``docs/tau2-airline.md``.
"""

from .data_model import (
    AirlineDB,
    Flight,
    FlightDB,
    FlightInfo,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)
from .domain import AIRLINE, POLICY, load_db
from .generator import AirlineGenConfig, generate_airline_db
from .tools import AIRLINE_TOOLS, OWNER

__all__ = [
    "AIRLINE",
    "AIRLINE_TOOLS",
    "OWNER",
    "POLICY",
    "AirlineDB",
    "AirlineGenConfig",
    "Flight",
    "FlightDB",
    "FlightInfo",
    "Passenger",
    "Payment",
    "Reservation",
    "ReservationFlight",
    "User",
    "generate_airline_db",
    "load_db",
]
