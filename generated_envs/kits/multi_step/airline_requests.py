"""Airline parts of a compound request (the multi-step env): cancel a reservation, add bags, fix a birth date.

Each ``draw_*`` adds its reservation to an :class:`AirlineRecords` with the task's ``rng`` and returns the
:data:`~trace_envs.domains.tau2_requests.Part` that carries it out on the task's plan: the refund, the free
bag allowance and the passenger list come from what ``get_reservation_details`` and ``get_user_details``
return, never from the records the generator holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from trace_envs.core import Plan
from trace_envs.domains.airline.records import AIRLINE_NOW, FREE_BAGS, AirlineRecords
from trace_envs.domains.tau2_records import money
from trace_envs.domains.tau2_requests import Part, SubTask, finish_part

CANCEL_GROUNDS = {
    "business": "it is a business cabin booking",
    "recent": "it was booked less than 24 hours ago",
    "insured": "it has travel insurance covering your reason",
    "airline": "the airline cancelled one of its flights",
}
"""Why an allowed cancellation is allowed, as the confirmation says it."""

# ----- part texts: what the customer asks, what the agent confirms, the summary line ----------------------
CANCEL_RESERVATION = (
    "please cancel reservation {rid} because {reason}",
    "Reservation {rid} can be cancelled because {grounds}. I will cancel the whole reservation and refund {refund} "
    "to the original payment method.",
    "reservation {rid} is cancelled and {refund} will be refunded in 5 to 7 business days",
)
ADD_BAGS = (
    "please add {extra} checked {noun} to reservation {rid}, with any fee on my credit card",
    "Reservation {rid} will have {total} checked bags, {nonfree} of them paid at $50 each: {cost}.",
    "reservation {rid} now has {total} checked bags ({cost})",
)
FIX_BIRTH_DATE = (
    "on reservation {rid}, please correct {who}'s date of birth to {dob}",
    "I will change {who}'s date of birth on reservation {rid} to {dob}.",
    "{who}'s date of birth on reservation {rid} is now {dob}",
)


def draw_cancel(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> Part:
    """A reservation cancellable on one of four grounds; the refund total (its payments) is a required fact."""
    why = rng.choice(("business", "recent", "insured", "airline"))
    age = timedelta(hours=rng.randint(1, 23)) if why == "recent" else timedelta(days=rng.randint(2, 30))
    cabin = "business" if why == "business" else rng.choice(("basic_economy", "economy"))
    insured = "yes" if why == "insured" else rng.choice(("yes", "no"))
    rid = db.add_reservation(
        user, cabin=cabin, created_at=AIRLINE_NOW - age, insurance=insured, cancelled_segment=why == "airline"
    )["reservation_id"]
    reason = {  # both draws happen whatever `why` is: the golden fingerprints depend on it
        "insured": rng.choice(("I'm ill and can't travel", "a storm is forecast on my travel dates")),
        "airline": "you cancelled one of its flights",
    }.get(why, rng.choice(("my plans changed", "I no longer need the trip")))

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        reservation = plan.call("get_reservation_details", reservation_id=rid)
        if why == "airline":
            for segment in reservation.flights:
                plan.call("get_flight_status", flight_number=segment.flight_number, date=segment.date)
        total = int(sum(payment.amount for payment in reservation.payment_history))
        values = {"rid": rid, "reason": reason, "grounds": CANCEL_GROUNDS[why], "refund": money(total)}
        sub = finish_part(
            plan, start, "cancel", CANCEL_RESERVATION, ("cancel_reservation", {"reservation_id": rid}), **values
        )
        sub.facts = [str(total)]  # the refund total must be stated
        return sub

    return run


def _plain_reservation(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> dict[str, Any]:
    """An uninsured reservation in a random cabin, for the parts that change rather than cancel it."""
    cabin = rng.choice(("basic_economy", "economy", "business"))
    days = rng.randint(1, 30)
    return db.add_reservation(user, cabin=cabin, created_at=AIRLINE_NOW - timedelta(days=days), insurance="no")


def draw_bags(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> Part:
    """Add 1–2 checked bags: the paid count follows the tier × cabin × passengers free allowance."""
    rid = _plain_reservation(rng, db, user)["reservation_id"]
    extra = rng.randint(1, 2)

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        reservation = plan.call("get_reservation_details", reservation_id=rid)
        free = FREE_BAGS[customer.membership][reservation.cabin] * len(reservation.passengers)
        total = reservation.total_baggages + extra
        nonfree = max(0, total - free)
        card = next(m for m, method in customer.payment_methods.items() if method.source == "credit_card")
        fee = 50 * nonfree
        cost = f"{money(fee)} charged to your credit card" if fee else "no charge, within your free allowance"
        bags = {"reservation_id": rid, "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": card}
        values = {"rid": rid, "extra": extra, "noun": "bag" if extra == 1 else "bags", "total": total}
        return finish_part(
            plan, start, "bags", ADD_BAGS, ("update_reservation_baggages", bags), nonfree=nonfree, cost=cost, **values
        )

    return run


def draw_passenger(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> Part:
    """Correct one passenger's date of birth: the write carries the whole passenger list as read, one change."""
    reservation = _plain_reservation(rng, db, user)
    rid, passengers = reservation["reservation_id"], reservation["passengers"]
    names = [(p["first_name"], p["last_name"]) for p in passengers]
    unique = [i for i, n in enumerate(names) if names.count(n) == 1]
    index = rng.choice(unique) if unique else 0
    target = passengers[index]
    if not unique:  # every name appears twice: make the one the customer talks about distinguishable
        target["first_name"] = next(
            f for f in ("Alex", "Robin", "Sam", "Jordan") if (f, target["last_name"]) not in names
        )
    dob = db.person()["dob"]
    while dob == target["dob"]:
        dob = db.person()["dob"]

    def run(plan: Plan, customer: Any) -> SubTask:
        start = len(plan.steps)
        listed = [p.model_dump() for p in plan.call("get_reservation_details", reservation_id=rid).passengers]
        updated = [dict(p, dob=dob) if i == index else p for i, p in enumerate(listed)]
        who = f"{listed[index]['first_name']} {listed[index]['last_name']}"
        write = ("update_reservation_passengers", {"reservation_id": rid, "passengers": updated})
        return finish_part(plan, start, "passenger", FIX_BIRTH_DATE, write, rid=rid, who=who, dob=dob)

    return run


AIRLINE_PARTS: dict[str, Callable[[random.Random, AirlineRecords, dict[str, Any]], Part]] = {
    "cancel": draw_cancel,
    "bags": draw_bags,
    "passenger": draw_passenger,
}
"""Each airline part kind's draw."""
