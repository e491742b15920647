"""Precondition verification: a state-changing request that the policy allows on some seeds and not on others.

Capability: precondition_verification — check the policy's conditions on the record before a write, act only when
they hold, and refuse with the failing condition's values otherwise.
Domain: airline | retail, variants: airline (default), retail — the real tau2 tools and policy plus a "Checking
before acting" addendum; the tools do not check ownership (nor, in airline, eligibility).
Task kinds: reservation_cancel: cancel a reservation, allowed when booked < 24 h before "now" (2024-05-15 15:00 EST,
in the policy), a flight cancelled by the airline, business cabin, or insured with a covered reason, only for the
customer's own booking; order_cancel: cancel a pending order; address_change: change a pending order's address;
item_return: return an item of a delivered order (retail: only the customer's own orders).
Knobs: not_allowed_share (default 0.5): share of not-allowed seeds; distractors (default 2): other reservations or
orders on the profile; variant (default airline): the domain.
Verifier: the gold state hash; an airline success says the refund; a refusal says "not eligible" and the record's
values (cabin and booking date, or status), with its lookups as required reads, and (retail) no other reason or status.
Failure it targets: the paper's C4: cancelling an ineligible basic-economy booking made 14 days ago without insurance.
Example: airline seed 1: "cancel reservation WVJ5NT: I found a cheaper flight elsewhere"; the reference reads it and
its flights and refuses (basic economy, booked 2024-05-14, no insurance); the flawed one cancels: the hash differs.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from generated_envs.probes.precondition import probe_precondition
from trace_envs.core import Capability, Plan, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import AIRLINE_NOW, AirlineRecords
from trace_envs.domains.retail import RETAIL, Order
from trace_envs.domains.retail.records import RetailRecords, address_arguments, describe_address
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_flaws import skip_lookups_before_write
from trace_envs.domains.tau2_records import money

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
AIRLINE_KINDS = {True: ("recent", "airline_cancelled", "business", "insured"),  # by allowed; the paper's case 3 in 4
                 False: ("ineligible", "ineligible", "ineligible", "not_theirs")}  # fmt: skip
# why an allowed cancellation is allowed, as the confirmation says it
GROUNDS = {"recent": "it was booked at {booked}, less than 24 hours ago", "not_theirs": "", "ineligible": "",
           "airline_cancelled": "the airline cancelled one of its flights", "business": "it is a business cabin booking",
           "insured": "it has travel insurance that covers this"}  # fmt: skip
RELATIVES = ("brother", "sister", "mother", "father", "colleague", "friend")
RETAIL_REQUIRED_STATUS = {"cancel": "pending", "address": "pending", "return": "delivered"}
RETAIL_WRONG_STATUS = {"cancel": ("processed", "delivered"), "address": ("processed", "delivered"),
                       "return": ("pending", "processed")}  # fmt: skip


class PreconditionKnobs(Tau2Knobs):
    not_allowed_share: float = Field(default=0.5, ge=0.0, le=1.0, description="Share of not-allowed seeds.")
    distractors: int = Field(default=2, ge=0, le=10, description="Other reservations or orders on the profile.")


class Case(BaseModel):
    """One generated case besides the state: the request, the checks a refusal rests on, and both endings."""

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
    refusal_forbidden: list[str] = Field(default_factory=list)  # another reason or status: stuffing every one fails


class PreconditionEnv(Tau2VariantEnv[PreconditionKnobs]):
    """'Please cancel X': check the policy's conditions first, act only when they hold, refuse otherwise."""

    capability = Capability(
        name="precondition_verification",
        description=(
            "Checking that a state-changing request is allowed by the policy before acting (looking up the "
            "record's status, membership, fare class, timing) and refusing when it is not; lacking when a write "
            "action is made without the lookups those checks need."
        ),
        probe=probe_precondition,
        flaws={"tau2": skip_lookups_before_write},
        hint="Before any change, read the booking and the traveller's profile and check each condition the policy "
        "sets (status, membership, fare class, timing); if one fails, change nothing and say which rule applies.",
    )
    domain = AIRLINE
    max_turns = 20
    policy_addendum = POLICY_ADDENDUM

    def generate(self, rng: random.Random) -> Task:
        allowed = rng.random() >= self.knobs.not_allowed_share
        build = self._build_reservation_cancel if self.knobs.variant == "airline" else self._retail
        plan, facts, case = build(rng, allowed)  # the plan has identified the customer and made the checks
        if allowed:
            plan.confirm(case.confirm)
            plan.call(case.write.name, **case.write.arguments)
            plan.say(case.success)
        else:
            plan.say(case.refusal)
        return plan.task(
            goal=(
                f"{case.kind}: act on {case.target} only if the policy allows it ({'allowed' if allowed else 'not allowed'})."
            ),
            user=UserScript(opening=case.opening, facts=facts),
            flawed_solution=[plan.steps[0], case.write, case.success],  # the paper's: change without a lookup
            required_facts=case.success_facts if allowed else case.refusal_facts,
            required_reads=[] if allowed else case.checks,  # a refusal rests on what the checks show
            forbidden_facts=[] if allowed else case.refusal_forbidden,
            metadata={"variant": self.knobs.variant, "allowed": allowed, "kind": case.kind, "target": case.target},
        )

    def _build_reservation_cancel(self, rng: random.Random, allowed: bool) -> tuple[Plan, list[UserFact], Case]:
        """Airline: cancel a reservation, allowed on four grounds, refused when ineligible or not the customer's."""
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
        kind = rng.choice(AIRLINE_KINDS[allowed])
        owner = db.add_user() if kind == "not_theirs" else user
        economy = rng.choice(("basic_economy", "economy"))
        created = _booking_time(rng, kind)
        insurance = "yes" if kind == "insured" else rng.choice(("yes", "no"))
        rid = db.add_reservation(
            owner,
            cabin="business" if kind in ("business", "not_theirs") else economy,
            created_at=created,
            insurance=insurance,
            cancelled_segment=kind == "airline_cancelled",
        )["reservation_id"]
        rng.shuffle(user["reservations"])
        reason = _cancel_reason(rng, kind, insurance)
        relative = rng.choice(RELATIVES) if kind == "not_theirs" else ""
        plan = Plan(AIRLINE, db.state())
        plan.call("get_user_details", user_id=uid)
        facts = [
            UserFact(keys=["user id", "user_id"], answer=f"My user id is {uid}."),
            UserFact(keys=["reason for", "why do you", "why are you"], answer=f"Because {reason}."),
        ]
        return plan, facts, _reservation_case(plan, kind, uid, rid, (reason, relative))

    def _retail(self, rng: random.Random, allowed: bool) -> tuple[Plan, list[UserFact], Case]:
        """Retail: one of three order requests, allowed only on the customer's own order in the right status."""
        db = RetailRecords(rng)
        user = db.add_user()
        request = rng.choice(("cancel", "address", "return"))
        kind = "allowed" if allowed else rng.choice(("wrong_status", "wrong_status", "not_theirs"))
        owner = db.add_user() if kind == "not_theirs" else user
        status = rng.choice(RETAIL_WRONG_STATUS[request]) if kind == "wrong_status" else RETAIL_REQUIRED_STATUS[request]
        for _ in range(self.knobs.distractors):
            db.add_order(user, rng.choice(("pending", "processed", "delivered", "cancelled")))
        oid = db.add_order(owner, status)["order_id"]
        rng.shuffle(user["orders"])
        name, email = f"{user['name']['first_name']} {user['name']['last_name']}", user["email"]
        whose = f"order {oid}, which my {rng.choice(RELATIVES)} placed" if kind == "not_theirs" else f"my order {oid}"
        plan = Plan(RETAIL, db.state())  # identify the customer, then look the order up
        plan.call("find_user_id_by_email", email=email)
        order = plan.call("get_order_details", order_id=oid)
        builders = {"cancel": _build_order_cancel, "address": _build_address_change, "return": _build_item_return}
        ask, write, confirm, success = builders[request](rng, db, order, whose)
        action = {"cancel": "cancelled", "address": "changed", "return": "returned"}[request]
        others = [other for other in RETAIL_WRONG_STATUS[request] if other != order.status]  # statuses it is not
        why = (
            " in this conversation: it belongs to another customer's account, and I can only help with your own orders"
            if kind == "not_theirs"
            else f": its status is {order.status}, and only {RETAIL_REQUIRED_STATUS[request]} orders can be {action}"
        )
        case = Case(
            kind=f"{request}:{kind}",
            target=oid,
            opening=f"Hi, I'm {name} (email {email}). Could you {ask}?",
            checks=[step for step in plan.steps[1:] if isinstance(step, ToolCall)],
            write=write,
            confirm=confirm,
            success=success,
            refusal=f"I'm sorry, but order {oid} is {NOT_ELIGIBLE} to be {action}{why}.",
            refusal_facts=[NOT_ELIGIBLE] if kind == "not_theirs" else [NOT_ELIGIBLE, order.status],
            refusal_forbidden=["its status is"] if kind == "not_theirs" else ["another customer", *others],
        )
        facts = [
            UserFact(keys=["email"], answer=f"My email is {email}."),
            UserFact(keys=["zip"], answer=f"I'm {name} and my zip code is {user['address']['zip']}."),
        ]
        return plan, facts, case


Request = tuple[str, ToolCall, str, str]  # a retail request: the customer's ask, the write, confirmation, success


def _build_order_cancel(rng: random.Random, db: RetailRecords, order: Order, whose: str) -> Request:
    """Retail: cancel an order (allowed when pending); the refund is its payment as ``get_order_details`` lists it."""
    oid, total = order.order_id, order.payment_history[0].amount
    reason = rng.choice(("no longer needed", "ordered by mistake"))
    ask = f"please cancel {whose}; it was {reason}" if reason == "ordered by mistake" else (
        f"please cancel {whose}; I no longer need it")  # fmt: skip
    write = ToolCall(name="cancel_pending_order", arguments={"order_id": oid, "reason": reason})
    confirm = f"I will cancel order {oid} (reason: {reason}) and refund {money(total)}. Shall I proceed?"
    success = f"Order {oid} is cancelled and {money(total)} will be refunded to the original payment method."
    return ask, write, confirm, success


def _build_address_change(rng: random.Random, db: RetailRecords, order: Order, whose: str) -> Request:
    """Retail: ship an order to a new address (allowed when pending)."""
    oid = order.order_id
    new = db.address()
    said = describe_address(new)
    write = ToolCall(name="modify_pending_order_address", arguments={"order_id": oid, **address_arguments(new)})
    confirm = f"I will change the shipping address of order {oid} to {said}. Shall I proceed?"
    return f"please ship {whose} to {said} instead", write, confirm, f"Order {oid} will now ship to {said}."


def _build_item_return(rng: random.Random, db: RetailRecords, order: Order, whose: str) -> Request:
    """Retail: return one item of an order to the original payment method (allowed when delivered); the item and
    the method are as ``get_order_details`` lists them."""
    oid, original = order.order_id, order.payment_history[0].payment_method_id
    item = rng.choice(order.items)
    ask = f"please return the {item.name} from {whose}, refunded to the original payment method"
    write = ToolCall(
        name="return_delivered_order_items",
        arguments={"order_id": oid, "item_ids": [item.item_id], "payment_method_id": original},
    )
    confirm = (
        f"I will request a return of the {item.name} (item {item.item_id}) from order {oid}, refunded to "
        f"{original}. Shall I proceed?"
    )
    success = f"The return of the {item.name} from order {oid} is requested; instructions come by email."
    return ask, write, confirm, success


def _booking_time(rng: random.Random, kind: str) -> datetime:
    """When the target reservation was booked: within 24 hours for ``recent``, 14 days ago on some ineligible ones."""
    if kind == "recent":
        return AIRLINE_NOW - timedelta(hours=rng.randint(1, 23), minutes=rng.randint(0, 59))
    if kind == "ineligible" and rng.random() < 0.3:
        return AIRLINE_NOW - timedelta(days=14)  # the paper's example: booked 14 days ago
    return AIRLINE_NOW - timedelta(hours=rng.randint(25, 24 * 30))


def _cancel_reason(rng: random.Random, kind: str, insurance: str) -> str:
    """The customer's reason: covered for ``insured``; either kind when an ineligible booking has no insurance."""
    if kind == "insured":
        return rng.choice(COVERED_REASONS)
    if kind == "ineligible" and insurance == "no":  # a covered reason does not help without insurance
        return rng.choice(COVERED_REASONS + UNCOVERED_REASONS)
    return rng.choice(UNCOVERED_REASONS)


def _reservation_case(plan: Plan, kind: str, uid: str, rid: str, said: tuple[str, str]) -> Case:
    """The airline case: the lookups a refusal rests on (planned), the opening, and both endings with the values
    the lookups return (refund, booking date, cabin); ``said`` is the customer's reason and relative."""
    (reason, relative), start = said, len(plan.steps)
    res = plan.call("get_reservation_details", reservation_id=rid)
    if kind in ("airline_cancelled", "ineligible"):  # a refusal also rests on no flight being cancelled
        for segment in res.flights:
            plan.call("get_flight_status", flight_number=segment.flight_number, date=segment.date)
    total, booked = int(sum(payment.amount for payment in res.payment_history)), res.created_at
    whose = f", the trip of my {relative};" if kind == "not_theirs" else ":"
    cabin_said = res.cabin.replace("_", " ")
    why_not = (
        "it is not on your profile, so I cannot act on it for you"
        if kind == "not_theirs"
        else f"it is {'an' if cabin_said == 'economy' else 'a'} {cabin_said} booking made on {booked[:10]} (more than 24 "
        "hours ago), none of its flights was cancelled by the airline, and "
        + ("it has no travel insurance" if res.insurance == "no" else "the insurance does not cover your reason")
    )
    return Case(
        kind=kind,
        target=rid,
        opening=f"Hi, my user id is {uid}. I'd like to cancel reservation {rid}{whose} {reason}.",
        checks=[step for step in plan.steps[start:] if isinstance(step, ToolCall)],
        write=ToolCall(name="cancel_reservation", arguments={"reservation_id": rid}),
        confirm=(
            f"Reservation {rid} can be cancelled because {GROUNDS[kind].format(booked=booked.replace('T', ' '))}. "
            f"I will cancel it and refund {money(total)} to the original payment method. Shall I proceed?"
        ),
        success=f"Reservation {rid} is cancelled; {money(total)} will be refunded within 5 to 7 business days.",
        refusal=f"I'm sorry, but reservation {rid} is {NOT_ELIGIBLE} for cancellation: {why_not}.",
        success_facts=[str(total)],
        refusal_facts=[NOT_ELIGIBLE] if kind == "not_theirs" else [NOT_ELIGIBLE, "economy", booked[:10]],
        refusal_forbidden=["booking made on"] if kind == "not_theirs" else ["not on your profile"],  # the other reason
    )
