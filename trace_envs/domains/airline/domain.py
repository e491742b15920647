"""The airline domain object: state model, the 14 tools, and this project's own policy text."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from trace_envs.domains.tau2_common import Tau2Domain

from .data_model import FlightDB
from .tools import AIRLINE_TOOLS

POLICY = resources.files(__package__).joinpath("policy.md").read_text(encoding="utf-8")
"""Agent policy written for trace-envs (same business rules as tau2's airline, not tau2's text)."""

AIRLINE: Tau2Domain[FlightDB] = Tau2Domain("airline", FlightDB, AIRLINE_TOOLS, POLICY)
"""The tau2-bench airline domain: ``FlightDB`` state, tau2's tool behaviour, canonical hashing."""


def load_db(path: str | Path) -> FlightDB:
    """A fresh airline database from a tau2-format ``db.json`` (flights, users, reservations)."""
    return AIRLINE.load_file(path)
