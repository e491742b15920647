"""Precondition verification: a state-changing request that the policy allows on some seeds and not on others.

Airline: cancel a reservation, allowed only when it was booked less than 24 hours before "now"
(2024-05-15 15:00 EST, stated in the policy), the airline cancelled one of its flights, it is in
business cabin, or it is insured and the reason is covered, and only for the customer's own booking.
Retail: cancel an order, change its shipping address, or return an item, allowed only for the
customer's own order in the right status. The tools do not check ownership (nor, in airline,
eligibility), so an agent that acts without checking changes the state on the not-allowed seeds
(about half, by default) and the verifier scores it 0. The paper's failure: cancelling an ineligible
basic-economy booking made 14 days ago without insurance.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core import Capability, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import (
    AIRLINE_NOW,
    AirlineRecords,
    refund_total,
)
from trace_envs.domains.retail.records import (
    RetailRecords,
    describe_address,
)
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_records import (
    money,
)

POLICY_ADDENDUM = """

## Checking before acting

- The tools do not check whether a change is allowed. Before any change, look the record up and check
  every condition these rules set: whose record it is, its status, and for a cancellation the cabin,
  the booking time, the flight statuses and the insurance against the customer's reason.
- If the change is not allowed, do not make it. Tell the customer that the request is not eligible and
  why, with the record's own values: for a reservation, its cabin and the date it was booked
  (YYYY-MM-DD); for an order, its current status.
"""

NOT_ELIGIBLE = "not eligible"
COVERED_REASONS = ("I'm sick and can't travel", "a storm is forecast for my travel dates")
UNCOVERED_REASONS = ("my plans changed", "I found a cheaper flight elsewhere", "my meeting was moved")
RELATIVES = ("brother", "sister", "mother", "father", "colleague", "friend")
RETAIL_REQUIRED_STATUS = {"cancel": "pending", "address": "pending", "return": "delivered"}
RETAIL_WRONG_STATUS = {
    "cancel": ("processed", "delivered"),
    "address": ("processed", "delivered"),
    "return": ("pending", "processed"),
}


class PreconditionKnobs(Tau2Knobs):
    not_allowed_share: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Share of seeds whose request the policy does not allow."
    )
    distractors: int = Field(
        default=2, ge=0, le=10, description="Other reservations or orders on the customer's profile."
    )


class Plan(BaseModel):
    """What a generated case needs besides the state: the request, the checks, and both endings."""

    allowed: bool
    kind: str
    target: str
    opening: str
    checks: list[ToolCall]
    write: ToolCall
    confirm: str
    success: str
    refusal: str
    success_facts: list[str] = Field(default_factory=list)
    refusal_facts: list[str] = Field(default_factory=lambda: [NOT_ELIGIBLE])
    """What a refusal must say: "not eligible" and, where the record shows it, the failing condition's
    own values (cabin and booking date, the order's status)."""


class PreconditionEnv(Tau2VariantEnv[PreconditionKnobs]):
    """'Please cancel X': check the policy's conditions first, act only when they hold, refuse otherwise."""

    capability = Capability(
        name="precondition_verification",
        description=(
            "Checking that a state-changing request is allowed by the policy before acting (looking up the "
            "record's status, membership, fare class, timing) and refusing when it is not; lacking when a write "
            "action is made without the lookups those checks need."
        ),
        probe="trace_envs.analysis.probes:probe_precondition",
        tau2_flaw="trace_envs.rollout.tau2_flaws:skip_lookups_before_write",
    )
    domain = AIRLINE
    max_turns = 20
    policy_addendum = POLICY_ADDENDUM

    # ----- task generation ---------------------------------------------------------------------------
    def generate(self, rng: random.Random) -> Task:
        allowed = rng.random() >= self.knobs.not_allowed_share
        if self.knobs.variant == "airline":
            state, auth, facts, plan = self._airline(rng, allowed)
        else:
            state, auth, facts, plan = self._retail(rng, allowed)
        solution: list[ToolCall | str] = [*auth, *plan.checks]
        if plan.allowed:
            solution += [plan.confirm, plan.write, plan.success]
        else:
            solution.append(plan.refusal)
        return Task(
            task_id="",
            initial_state=state,
            goal=(
                f"{plan.kind}: act on {plan.target} only if the policy allows it ({'allowed' if allowed else 'not allowed'})."
            ),
            user=UserScript(
                opening=plan.opening, facts=facts, replies=["confirm", "close"] if plan.allowed else ["close"]
            ),
            solution=solution,
            # the paper's failure: identify the customer, then make the change without looking at the record
            flawed_solution=[*auth, plan.write, plan.success],
            required_facts=plan.success_facts if plan.allowed else plan.refusal_facts,
            required_reads=[] if plan.allowed else plan.checks,  # a refusal rests on what the checks show
            metadata={"variant": self.knobs.variant, "allowed": plan.allowed, "kind": plan.kind, "target": plan.target},
        )

    def _airline(
        self, rng: random.Random, allowed: bool
    ) -> tuple[dict[str, Any], list[ToolCall], list[UserFact], Plan]:
        db = AirlineRecords(rng)
        user = db.add_user()
        uid = user["user_id"]
        for _ in range(self.knobs.distractors):
            db.add_reservation(
                user,
                cabin=rng.choice(("basic_economy", "economy", "business")),
                created_at=AIRLINE_NOW - timedelta(days=rng.randint(2, 30)),
                insurance=rng.choice(("yes", "no")),
            )
        if allowed:
            kind = rng.choice(("recent", "airline_cancelled", "business", "insured"))
        else:
            kind = rng.choice(("ineligible", "ineligible", "ineligible", "not_theirs"))
        owner = db.add_user() if kind == "not_theirs" else user
        economy = rng.choice(("basic_economy", "economy"))
        if kind == "recent":
            created = AIRLINE_NOW - timedelta(hours=rng.randint(1, 23), minutes=rng.randint(0, 59))
        elif kind == "ineligible" and rng.random() < 0.3:
            created = AIRLINE_NOW - timedelta(days=14)  # the paper's example: booked 14 days ago
        else:
            created = AIRLINE_NOW - timedelta(hours=rng.randint(25, 24 * 30))
        insurance = "yes" if kind == "insured" else rng.choice(("yes", "no"))
        res = db.add_reservation(
            owner,
            cabin="business" if kind in ("business", "not_theirs") else economy,
            created_at=created,
            insurance=insurance,
            cancelled_segment=kind == "airline_cancelled",
        )
        rng.shuffle(user["reservations"])
        rid, total = res["reservation_id"], refund_total(res)
        if kind == "insured":
            reason = rng.choice(COVERED_REASONS)
        elif kind == "ineligible" and insurance == "no":  # a covered reason does not help without insurance
            reason = rng.choice(COVERED_REASONS + UNCOVERED_REASONS)
        else:
            reason = rng.choice(UNCOVERED_REASONS)
        opening = f"Hi, my user id is {uid}. I'd like to cancel reservation {rid}: {reason}."
        if kind == "not_theirs":
            opening = (
                f"Hi, my user id is {uid}. I'd like to cancel reservation {rid}, the trip of my "
                f"{rng.choice(RELATIVES)}; {reason}."
            )
        checks = [ToolCall(name="get_reservation_details", arguments={"reservation_id": rid})]
        if kind in ("airline_cancelled", "ineligible"):
            checks += [
                ToolCall(name="get_flight_status", arguments={"flight_number": s["flight_number"], "date": s["date"]})
                for s in res["flights"]
            ]
        grounds = {
            "recent": f"it was booked at {res['created_at'].replace('T', ' ')}, less than 24 hours ago",
            "airline_cancelled": "the airline cancelled one of its flights",
            "business": "it is a business cabin booking",
            "insured": "it has travel insurance that covers this",
        }.get(kind, "")
        cabin_said = res["cabin"].replace("_", " ")
        why_not = (
            "it is not on your profile, so I cannot act on it for you"
            if kind == "not_theirs"
            else (
                f"it is {'an' if cabin_said == 'economy' else 'a'} {cabin_said} booking made on {res['created_at'][:10]} (more than 24 hours ago), none of its "
                "flights was cancelled by the airline, and "
                + ("it has no travel insurance" if insurance == "no" else "the insurance does not cover your reason")
            )
        )
        plan = Plan(
            allowed=allowed,
            kind=kind,
            target=rid,
            opening=opening,
            checks=checks,
            write=ToolCall(name="cancel_reservation", arguments={"reservation_id": rid}),
            confirm=(
                f"Reservation {rid} can be cancelled because {grounds}. I will cancel it and refund {money(total)} "
                "to the original payment method. Shall I proceed?"
            ),
            success=f"Reservation {rid} is cancelled; {money(total)} will be refunded within 5 to 7 business days.",
            refusal=f"I'm sorry, but reservation {rid} is {NOT_ELIGIBLE} for cancellation: {why_not}.",
            success_facts=[str(total)],
            refusal_facts=[NOT_ELIGIBLE] if kind == "not_theirs" else [NOT_ELIGIBLE, "economy", res["created_at"][:10]],
        )
        auth = [ToolCall(name="get_user_details", arguments={"user_id": uid})]
        facts = [
            UserFact(keys=["user id", "user_id"], answer=f"My user id is {uid}."),
            UserFact(keys=["reason for", "why do you", "why are you"], answer=f"Because {reason}."),
        ]
        return db.state(), auth, facts, plan

    def _retail(self, rng: random.Random, allowed: bool) -> tuple[dict[str, Any], list[ToolCall], list[UserFact], Plan]:
        db = RetailRecords(rng)
        user = db.add_user()
        request = rng.choice(("cancel", "address", "return"))
        kind = "allowed" if allowed else rng.choice(("wrong_status", "wrong_status", "not_theirs"))
        owner = db.add_user() if kind == "not_theirs" else user
        status = rng.choice(RETAIL_WRONG_STATUS[request]) if kind == "wrong_status" else RETAIL_REQUIRED_STATUS[request]
        for _ in range(self.knobs.distractors):
            db.add_order(user, rng.choice(("pending", "processed", "delivered", "cancelled")))
        order = db.add_order(owner, status)
        rng.shuffle(user["orders"])
        oid = order["order_id"]
        original = order["payment_history"][0]["payment_method_id"]
        total = order["payment_history"][0]["amount"]
        name = f"{user['name']['first_name']} {user['name']['last_name']}"
        whose = f"order {oid}, which my {rng.choice(RELATIVES)} placed" if kind == "not_theirs" else f"my order {oid}"
        if request == "cancel":
            reason = rng.choice(("no longer needed", "ordered by mistake"))
            ask = f"please cancel {whose}; it was {reason}" if reason == "ordered by mistake" else (
                f"please cancel {whose}; I no longer need it")  # fmt: skip
            write = ToolCall(name="cancel_pending_order", arguments={"order_id": oid, "reason": reason})
            confirm = f"I will cancel order {oid} (reason: {reason}) and refund {money(total)}. Shall I proceed?"
            success = f"Order {oid} is cancelled and {money(total)} will be refunded to the original payment method."
        elif request == "address":
            new = db.address()
            said = describe_address(new)
            ask = f"please ship {whose} to {said} instead"
            keys = ("address1", "address2", "city", "state", "country", "zip")
            write = ToolCall(
                name="modify_pending_order_address", arguments={"order_id": oid, **{k: new[k] for k in keys}}
            )
            confirm = f"I will change the shipping address of order {oid} to {said}. Shall I proceed?"
            success = f"Order {oid} will now ship to {said}."
        else:
            item = rng.choice(order["items"])
            ask = f"please return the {item['name']} from {whose}, refunded to the original payment method"
            write = ToolCall(
                name="return_delivered_order_items",
                arguments={"order_id": oid, "item_ids": [item["item_id"]], "payment_method_id": original},
            )
            confirm = (
                f"I will request a return of the {item['name']} (item {item['item_id']}) from order {oid}, refunded to "
                f"{original}. Shall I proceed?"
            )
            success = f"The return of the {item['name']} from order {oid} is requested; instructions come by email."
        action = {"cancel": "cancelled", "address": "changed", "return": "returned"}[request]
        if kind == "not_theirs":
            refusal = (
                f"I'm sorry, but order {oid} is {NOT_ELIGIBLE} to be {action} in this conversation: it belongs to "
                "another customer's account, and I can only help with your own orders."
            )
            refusal_facts = [NOT_ELIGIBLE]
        else:
            needed = RETAIL_REQUIRED_STATUS[request]
            refusal = (
                f"I'm sorry, but order {oid} is {NOT_ELIGIBLE} to be {action}: its status is {status}, and only "
                f"{needed} orders can be {action}."
            )
            refusal_facts = [NOT_ELIGIBLE, status]
        email = user["email"]
        plan = Plan(
            allowed=allowed,
            kind=f"{request}:{kind}",
            target=oid,
            opening=f"Hi, I'm {name} (email {email}). Could you {ask}?",
            checks=[ToolCall(name="get_order_details", arguments={"order_id": oid})],
            write=write,
            confirm=confirm,
            success=success,
            refusal=refusal,
            refusal_facts=refusal_facts,
        )
        auth = [ToolCall(name="find_user_id_by_email", arguments={"email": email})]
        facts = [
            UserFact(keys=["email"], answer=f"My email is {email}."),
            UserFact(keys=["zip"], answer=f"I'm {name} and my zip code is {user['address']['zip']}."),
        ]
        return db.state(), auth, facts, plan
