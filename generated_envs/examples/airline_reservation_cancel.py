"""Worked example on the airline target: cancel a reservation only when the policy allows it, from the airline kit alone.

Shown in the airline generation prompt, not registered (``generated_envs.examples``).

Capability: precondition_verification — check that a state-changing request is allowed before acting.
Domain: airline (tau2-bench) — get_user_details, get_reservation_details and cancel_reservation; it imports only
the airline target's kit (trace_envs.core, trace_envs.domains.airline), so validate accepts it as it stands.
Task kinds: recent: booked under 24 hours ago (allowed); business: a business cabin (allowed); refused: an
economy or basic economy booking made days ago, uninsured, every flight still on.
Knobs: other_reservations (default 1): the customer's other reservations in the state.
Verifier: the gold state hash (cancelled only when allowed) and the fact "cancelled", or, for a refusal, the
booking date after the get_reservation_details read, with no message saying "cancelled".
Failure it targets: cancelling without reading the reservation (the write succeeds, so the state hash differs).
Example: seed 1, the customer asks to cancel U7YPZ2; the reference reads the profile and the reservation (basic
economy, booked 2024-04-30, uninsured) and refuses; the flawed solution cancels straight after the profile: the
hash differs.
"""

from __future__ import annotations

import random
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.core import Capability, CapabilityEnv, Plan, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import AIRLINE_NOW, CABIN_LABEL, AirlineRecords

KINDS = ("recent", "business", "refused", "refused", "refused", "refused")
REASONS = ("my plans changed", "I found another way to travel", "the trip is no longer needed")


class AirlineCancelKnobs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    other_reservations: int = Field(default=1, ge=0, le=5, description="The customer's other reservations.")


class AirlineReservationCancelEnv(CapabilityEnv[AirlineCancelKnobs]):
    """The customer asks to cancel a reservation; two seeds in three make it ineligible under the policy."""

    capability = Capability(
        name="precondition_verification",
        description="Check that a state-changing request is allowed by policy before acting, and refuse when it is not.",
        hint="Read the reservation before cancelling: only recent bookings, business cabins or covered cases qualify.",
    )
    domain = AIRLINE
    tool_names = ("get_user_details", "get_reservation_details", "cancel_reservation")
    max_turns = 16

    def generate(self, rng: random.Random) -> Task:
        db = AirlineRecords(rng)  # users, reservations and their flights in the airline db layout, drawn from rng
        user = db.add_user()
        for _ in range(self.knobs.other_reservations):
            db.add_reservation(user, cabin="economy", created_at=AIRLINE_NOW - timedelta(days=9), insurance="no")
        kind = rng.choice(KINDS)
        hours = rng.randint(2, 20) if kind == "recent" else rng.randint(3 * 24, 30 * 24)
        cabin = "business" if kind == "business" else rng.choice(("basic_economy", "economy"))
        created = AIRLINE_NOW - timedelta(hours=hours)
        booking = db.add_reservation(user, cabin=cabin, created_at=created, insurance="no")
        rid, uid, booked = booking["reservation_id"], user["user_id"], created.date().isoformat()
        plan = Plan(AIRLINE, db.state())  # records the initial state, then runs the real tools on its own copy
        plan.call("get_user_details", user_id=uid)
        lookup = ToolCall(name="get_reservation_details", arguments={"reservation_id": rid})
        plan.call(lookup.name, **lookup.arguments)
        cancel = ToolCall(name="cancel_reservation", arguments={"reservation_id": rid})
        done = f"Reservation {rid} is now cancelled; the refund goes back to the original payment method."
        if kind != "refused":
            plan.confirm(f"I can cancel reservation {rid} and refund it in full. Shall I proceed?")
            plan.call(cancel.name, **cancel.arguments)
            plan.say(done)
        else:
            plan.say(
                f"I'm sorry, I can't cancel reservation {rid}: it was booked on {booked}, more than 24 hours ago, in "
                f"{CABIN_LABEL[cabin]}, without travel insurance, and all of its flights are still scheduled."
            )
        return plan.task(
            goal=f"Cancel reservation {rid} if the policy allows it ({kind}).",
            user=UserScript(
                opening=f"Hello, please cancel my reservation {rid}; {rng.choice(REASONS)}.",
                facts=[UserFact(keys=["user id", "user_id"], answer=f"My user id is {uid}.")],
            ),
            required_facts=["cancelled"] if kind != "refused" else [booked],
            forbidden_facts=["cancelled"] if kind == "refused" else [],  # a refusal claiming success contradicts itself
            required_reads=[] if kind != "refused" else [lookup],  # the booking date comes from the reservation
            flawed_solution=[plan.steps[0], cancel, done],  # cancels right after the profile, without the read
            metadata={"reservation_id": rid, "kind": kind, "cabin": cabin},
        )
