"""Airline state models: db.json loads, dumps back equal, hashes canonically; types are tau2's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from trace_envs.domains.airline import AIRLINE, FlightDB, load_db
from trace_envs.domains.airline.data_model import Certificate, GiftCard, Reservation
from trace_envs.domains.tau2_common import file_db_dump
from trace_envs.registry import get_domain


@pytest.fixture(scope="module")
def raw(shared_data: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((shared_data / "tau2" / "airline" / "db.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def db(raw: dict[str, Any]) -> FlightDB:
    return FlightDB.model_validate(raw)


def test_db_json_dumps_back_equal(db: FlightDB, raw: dict[str, Any]) -> None:
    assert file_db_dump(db) == raw


def test_canonical_dump_keeps_unset_optionals_as_null(db: FlightDB) -> None:
    dumped = AIRLINE.dump_state(db)
    assert all(r["status"] is None for r in dumped["reservations"].values())
    assert AIRLINE.state_hash(db) == AIRLINE.state_hash(FlightDB.model_validate(dumped))


def test_initial_hash_matches_gold_sample(db: FlightDB, shared_data: Path) -> None:
    gold = json.loads((shared_data / "tau2" / "airline" / "gold_sample.json").read_text(encoding="utf-8"))
    assert AIRLINE.state_hash(db) == gold["__initial__"]["canonical_hash"]


def test_counts_match_the_reference(db: FlightDB) -> None:
    assert db.statistics() == {
        "num_flights": 300,
        "num_flight_dates": 9000,
        "num_users": 500,
        "num_reservations": 2000,
    }
    statuses = Counter(s.status for f in db.flights.values() for s in f.dates.values())
    assert statuses == {"available": 4500, "landed": 3981, "cancelled": 373, "on time": 57, "flying": 47, "delayed": 42}
    sources = Counter(m.source for u in db.users.values() for m in u.payment_methods.values())
    assert sources == {"gift_card": 516, "credit_card": 503, "certificate": 467}


def test_balances_are_floats_and_everything_else_int(db: FlightDB) -> None:
    for user in db.users.values():
        for method in user.payment_methods.values():
            if isinstance(method, GiftCard | Certificate):
                assert type(method.amount) is float
    for reservation in db.reservations.values():
        assert all(type(p.amount) is int for p in reservation.payment_history)
        assert all(type(f.price) is int for f in reservation.flights)
    # A constructor coerces (Certificate(amount=100) stores 100.0), which changes the canonical form.
    assert Certificate(source="certificate", id="certificate_1", amount=100).model_dump()["amount"] == 100.0


def test_top_level_forbids_extra_keys_nested_models_ignore_them(raw: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        FlightDB.model_validate({**raw, "extra": {}})
    reservation = dict(next(iter(raw["reservations"].values())))
    reservation["note"] = "ignored"
    assert "note" not in Reservation.model_validate(reservation).model_dump()


def test_assignment_is_not_validated(db: FlightDB) -> None:
    reservation = Reservation.model_validate(db.reservations["EHGLP3"].model_dump())
    reservation.total_baggages = 2.0  # type: ignore[assignment]
    assert reservation.model_dump(warnings=False)["total_baggages"] == 2.0


def test_load_db_and_registered_domain(shared_data: Path) -> None:
    fresh = load_db(shared_data / "tau2" / "airline" / "db.json")
    assert len(fresh.reservations) == 2000
    import trace_envs  # noqa: F401  (registers the built-in domains)

    assert get_domain("airline") is AIRLINE
    assert AIRLINE.name == "airline"
    assert len(AIRLINE.toolset) == 14


def test_policy_is_our_own_text(shared_data: Path) -> None:
    upstream = (shared_data / "tau2" / "airline" / "policy.md").read_text(encoding="utf-8")
    assert AIRLINE.policy.strip()
    assert AIRLINE.policy != upstream
    upstream_lines = {line.strip() for line in upstream.splitlines() if len(line.strip()) > 40}
    ours = {line.strip() for line in AIRLINE.policy.splitlines()}
    assert not upstream_lines & ours
