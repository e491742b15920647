"""Differential check of all 50 airline tasks: the domain vs. a second, plain-dict reading of the reference.

gold_sample.json covers 9 tasks; for the other 41 this test replays every task's gold write actions with
an independent implementation over raw db.json dicts (written from reference section 3, success paths
only — all airline gold actions succeed) and requires the same changed records, field for field and
type for type, and the same set of journaled records.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from trace_envs.core import ToolCall
from trace_envs.domains.airline import AIRLINE, FlightDB, load_db

Record = dict[str, Any]


class RawAirline:
    """The write tools over raw JSON dicts, copy-on-write over a pristine db.json."""

    def __init__(self, base: Record):
        self.base = base
        self.changed: dict[str, dict[str, Record]] = {"flights": {}, "users": {}, "reservations": {}}

    def has(self, collection: str, key: str) -> bool:
        return key in self.changed[collection] or key in self.base[collection]

    def record(self, collection: str, key: str) -> Record:
        if key not in self.changed[collection]:
            self.changed[collection][key] = copy.deepcopy(self.base[collection][key])
        return self.changed[collection][key]

    def book_reservation(self, a: Record) -> None:
        user = self.record("users", a["user_id"])
        reservation_id = next(r for r in ("HATHAT", "HATHAU", "HATHAV") if not self.has("reservations", r))
        count = len(a["passengers"])
        segments, total = [], 0
        for info in a["flights"]:
            flight = self.record("flights", info["flight_number"])
            on_date = flight["dates"][info["date"]]
            assert on_date["status"] == "available"
            price = on_date["prices"][a["cabin"]]
            segments.append(
                {
                    "flight_number": info["flight_number"],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "date": info["date"],
                    "price": price,
                }
            )
            total += price * count
            on_date["available_seats"][a["cabin"]] -= count
        total += (30 * count if a["insurance"] == "yes" else 0) + 50 * a["nonfree_baggages"]
        assert sum(p["amount"] for p in a["payment_methods"]) == total
        for payment in a["payment_methods"]:
            method = user["payment_methods"][payment["payment_id"]]
            if method["source"] == "gift_card":
                method["amount"] = method["amount"] - payment["amount"]
            elif method["source"] == "certificate":
                del user["payment_methods"][payment["payment_id"]]
        self.changed["reservations"][reservation_id] = {
            "reservation_id": reservation_id,
            "user_id": a["user_id"],
            "origin": a["origin"],
            "destination": a["destination"],
            "flight_type": a["flight_type"],
            "cabin": a["cabin"],
            "flights": segments,
            "passengers": [{k: p[k] for k in ("first_name", "last_name", "dob")} for p in a["passengers"]],
            "payment_history": [
                {"payment_id": p["payment_id"], "amount": int(p["amount"])} for p in a["payment_methods"]
            ],
            "created_at": "2024-05-15T15:00:00",
            "total_baggages": a["total_baggages"],
            "nonfree_baggages": a["nonfree_baggages"],
            "insurance": a["insurance"],
            "status": None,
        }
        user["reservations"].append(reservation_id)

    def cancel_reservation(self, a: Record) -> None:
        reservation = self.record("reservations", a["reservation_id"])
        history = reservation["payment_history"]
        history.extend([{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in list(history)])
        reservation["status"] = "cancelled"

    def charge(self, user_id: str, payment_id: str, total: int) -> Record | None:
        user = self.record("users", user_id)
        method = user["payment_methods"][payment_id]
        assert method["source"] != "certificate"
        if method["source"] == "gift_card":
            assert method["amount"] >= total
            method["amount"] = method["amount"] - total
        return {"payment_id": payment_id, "amount": total} if total else None

    def update_reservation_baggages(self, a: Record) -> None:
        reservation = self.record("reservations", a["reservation_id"])
        extra = 50 * max(0, a["nonfree_baggages"] - reservation["nonfree_baggages"])
        payment = self.charge(reservation["user_id"], a["payment_id"], extra)
        if payment:
            reservation["payment_history"].append(payment)
        reservation["total_baggages"] = a["total_baggages"]
        reservation["nonfree_baggages"] = a["nonfree_baggages"]

    def update_reservation_flights(self, a: Record) -> None:
        reservation = self.record("reservations", a["reservation_id"])
        count = len(reservation["passengers"])
        new, total = [], 0
        for info in a["flights"]:
            same_cabin = a["cabin"] == reservation["cabin"]
            kept = [
                f
                for f in reservation["flights"]
                if same_cabin and (f["flight_number"], f["date"]) == (info["flight_number"], info["date"])
            ]
            if kept:
                segment = kept[0]
            else:
                number = info["flight_number"]
                flight = self.changed["flights"].get(number) or self.base["flights"][number]
                on_date = flight["dates"][info["date"]]
                assert on_date["status"] == "available" and on_date["available_seats"][a["cabin"]] >= count
                segment = {
                    "flight_number": info["flight_number"],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                    "date": info["date"],
                    "price": on_date["prices"][a["cabin"]],
                }
            new.append(segment)
            total += segment["price"] * count
        total -= sum(f["price"] for f in reservation["flights"]) * count
        payment = self.charge(reservation["user_id"], a["payment_id"], total)
        if payment:
            reservation["payment_history"].append(payment)
        reservation["flights"] = new
        reservation["cabin"] = a["cabin"]

    def update_reservation_passengers(self, a: Record) -> None:
        reservation = self.record("reservations", a["reservation_id"])
        assert len(a["passengers"]) == len(reservation["passengers"])
        reservation["passengers"] = [{k: p[k] for k in ("first_name", "last_name", "dob")} for p in a["passengers"]]

    def send_certificate(self, a: Record) -> None:
        user = self.record("users", a["user_id"])
        cert = next(
            c
            for c in ("certificate_3221322", "certificate_3221323", "certificate_3221324")
            if c not in user["payment_methods"]
        )
        user["payment_methods"][cert] = {"source": "certificate", "id": cert, "amount": float(a["amount"])}


def typed(value: Any) -> Any:
    """JSON data with each number tagged by its Python type (``1`` and ``1.0`` must not compare equal)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, bool | int | float):
        return (type(value).__name__, value)
    return value


@pytest.fixture(scope="module")
def airline_dir(shared_data: Path) -> Path:
    return shared_data / "tau2" / "airline"


def test_all_tasks_change_the_same_records_in_the_same_way(airline_dir: Path) -> None:
    base = json.loads((airline_dir / "db.json").read_text(encoding="utf-8"))
    for reservation in base["reservations"].values():
        reservation.setdefault("status", None)
    tasks = json.loads((airline_dir / "tasks.json").read_text(encoding="utf-8"))
    db: FlightDB = load_db(airline_dir / "db.json")
    collections = {id(db.flights): "flights", id(db.users): "users", id(db.reservations): "reservations"}
    writes = {name for name in AIRLINE.toolset if AIRLINE.toolset[name].mutates}
    compared = 0
    for task in tasks:
        db.restore()
        raw = RawAirline(base)
        for action in task["evaluation_criteria"]["actions"]:
            result = AIRLINE.toolset.invoke(db, ToolCall(name=action["name"], arguments=action["arguments"]))
            assert not result.error, (task["id"], result.content)
            if action["name"] in writes:
                getattr(raw, action["name"])(action["arguments"])
        journaled = {(collections[id(coll)], key) for coll, key, _ in db._journal}
        changed = {(coll, key) for coll, records in raw.changed.items() for key in records}
        assert journaled == changed, task["id"]
        for coll, key in sorted(changed):
            ours = getattr(db, coll)[key].model_dump(mode="json", warnings=False)
            assert typed(ours) == typed(raw.changed[coll][key]), (task["id"], coll, key)
            compared += 1
    db.restore()
    assert compared > 60
