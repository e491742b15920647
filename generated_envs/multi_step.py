"""Multi-step task completion: a compound request of 2–4 sub-tasks that must all be done.

Capability: multi_step_task_completion — carry a compound request through to the end without being reminded.
Domain: airline, variants: retail — the real tau2 tools over a small generated database (one customer, one
reservation or order per sub-task plus untouched distractors); the policy adds "Requests with several parts".
Task kinds: cancel (airline): cancel an eligible reservation, stating its refund; bags: add 1–2 checked bags,
fee on the credit card; passenger: correct one passenger's date of birth; cancel (retail): cancel a pending
order; order_address: ship a pending order elsewhere; return: return one delivered item; exchange: swap one
delivered item for a sibling variant; user_address: change the account's default address (at most once).
Knobs: subtasks (default 3): sub-tasks in the request (2–4); distractors (default 2): other reservations or
orders that must stay untouched; variant (default airline): airline or retail.
Verifier: the gold state hash after every sub-task's write, plus each airline cancellation's refund total as
a required fact; the user states everything in the opening and never reminds the agent.
Failure it targets: the paper's C3 (Appendix F.1): the agent cancels the first reservation, closes with "If
you need any further assistance…" and never attempts the remaining operations.
Example: seed 0 (airline): user yara_smith_4785 asks to cancel insured reservation D5HYEF (ill) and to correct
Omar Wang's date of birth on ATJZI7 and on 4ML04G; the reference looks each up, confirms, writes, and sums up
with the $117 refund; the flawed solution cancels D5HYEF, says "Done" and stops, so the hash differs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core import Capability, Reply, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import AIRLINE_NOW, FREE_BAGS, AirlineRecords, refund_total
from trace_envs.domains.retail.records import RetailRecords, describe_address
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_records import money

POLICY_ADDENDUM = """

## Requests with several parts

- A customer may ask for several things in one message. Handle every part, one at a time, following
  the rules above for each: look the record up, check the rules, confirm the exact change, make it.
- Keep track of what is left. Do not close the conversation while a part is still open; the customer
  will not repeat a request.
- Finish with one summary of everything you did.
"""

ORDINALS = ("first", "second", "third", "fourth")
AIRLINE_KINDS = ("cancel", "cancel", "bags", "passenger")
RETAIL_KINDS = ("cancel", "order_address", "return", "exchange", "user_address")
CANCEL_GROUNDS = {
    "business": "it is a business cabin booking",
    "recent": "it was booked less than 24 hours ago",
    "insured": "it has travel insurance covering your reason",
    "airline": "the airline cancelled one of its flights",
}
Setup = tuple[dict[str, Any], list[ToolCall], list["SubTask"], str, list[UserFact]]


class SubTask(BaseModel):
    """One part of the compound request: what the customer asks, the calls that do it, what to say."""

    kind: str
    request: str
    reads: list[ToolCall]
    confirm: str
    write: ToolCall
    done: str
    facts: list[str] = Field(default_factory=list)


class MultiStepKnobs(Tau2Knobs):
    subtasks: int = Field(default=3, ge=2, le=4, description="Sub-tasks in the customer's compound request.")
    distractors: int = Field(
        default=2, ge=0, le=10, description="Other reservations or orders on the profile that must stay untouched."
    )


class MultiStepEnv(Tau2VariantEnv[MultiStepKnobs]):
    """'Please do A, B and C': every sub-task must be done; the user never reminds the agent."""

    capability = Capability(
        name="multi_step_task_completion",
        description=(
            "Carrying a compound request (several sub-tasks in one conversation) through to the end without being "
            "reminded; lacking when the agent completes part of the request and then stops or closes the "
            "conversation with sub-tasks left untouched."
        ),
        probe="trace_envs.analysis.probes:probe_multi_step",
        tau2_flaw="trace_envs.rollout.tau2_flaws:stop_after_first_write",
        hint=(
            "The user's request has several parts. List every part they asked for and handle them one after "
            "another. After each change, check which parts remain and carry on without waiting to be reminded. "
            "Close the conversation only when every part is done or the user has withdrawn it, and say what was "
            "done for each part."
        ),
    )
    domain = AIRLINE
    max_turns = 40
    policy_addendum = POLICY_ADDENDUM

    def generate(self, rng: random.Random) -> Task:
        setup = self._airline(rng) if self.knobs.variant == "airline" else self._retail(rng)
        state, auth, subtasks, identity, facts = setup
        parts = [f"{ORDINALS[i]}, {s.request}" for i, s in enumerate(subtasks)]
        listing = "; ".join(parts[:-1]) + f"; and {parts[-1]}"
        opening = f"Hi! {identity} I have {len(subtasks)} things to sort out today: {listing}."
        solution: list[ToolCall | str] = [*auth]
        for sub in subtasks:
            solution += [*sub.reads, sub.confirm, sub.write]
        solution.append("All done: " + "; ".join(s.done for s in subtasks) + ".")
        replies: list[Reply] = ["confirm" for _ in subtasks]  # each sub-task's confirmation, then the summary
        replies.append("close")
        first = subtasks[0]  # the paper's failure: the first sub-task only, then closing as if everything were done
        stop = f"Done: {first.done}. If you need any further assistance, feel free to reach out."
        return Task(
            task_id="",
            initial_state=state,
            goal=f"Complete all {len(subtasks)} parts of the request: " + "; ".join(s.request for s in subtasks),
            user=UserScript(opening=opening, facts=facts, replies=replies),
            solution=solution,
            flawed_solution=[*auth, *first.reads, first.confirm, first.write, stop],
            required_facts=[f for s in subtasks for f in s.facts],
            metadata={
                "variant": self.knobs.variant,
                "kinds": [s.kind for s in subtasks],
                "auth": [c.model_dump() for c in auth],
                "subtasks": [s.model_dump(mode="json") for s in subtasks],
            },
        )

    def _airline(self, rng: random.Random) -> Setup:
        """One airline customer, a reservation per sub-task, then the distractors, in a shuffled list."""
        db = AirlineRecords(rng)
        user = db.add_user()
        kinds = [rng.choice(AIRLINE_KINDS) for _ in range(self.knobs.subtasks)]
        subtasks = [AIRLINE_BUILDERS[kind](rng, db, user) for kind in kinds]
        for _ in range(self.knobs.distractors):
            cabin = rng.choice(("basic_economy", "economy", "business"))
            created = AIRLINE_NOW - timedelta(days=rng.randint(2, 30))
            db.add_reservation(user, cabin=cabin, created_at=created, insurance=rng.choice(("yes", "no")))
        rng.shuffle(user["reservations"])
        uid = user["user_id"]
        auth = [ToolCall(name="get_user_details", arguments={"user_id": uid})]
        facts = [UserFact(keys=["user id", "user_id"], answer=f"My user id is {uid}.")]
        return db.state(), auth, subtasks, f"My user id is {uid}.", facts

    def _retail(self, rng: random.Random) -> Setup:
        """One retail customer, an order per sub-task (the account address at most once), then distractors."""
        db = RetailRecords(rng)
        user = db.add_user()
        kinds: list[str] = []
        while len(kinds) < self.knobs.subtasks:
            kind = rng.choice(RETAIL_KINDS)
            if kind != "user_address" or kind not in kinds:
                kinds.append(kind)
        subtasks = [RETAIL_BUILDERS[kind](rng, db, user) for kind in kinds]
        for _ in range(self.knobs.distractors):
            db.add_order(user, rng.choice(("pending", "processed", "delivered", "cancelled")))
        rng.shuffle(user["orders"])
        email, zip_code = user["email"], user["address"]["zip"]
        name = f"{user['name']['first_name']} {user['name']['last_name']}"
        auth = [ToolCall(name="find_user_id_by_email", arguments={"email": email})]
        facts = [
            UserFact(keys=["email"], answer=f"My email is {email}."),
            UserFact(keys=["zip"], answer=f"I'm {name} and my zip code is {zip_code}."),
        ]
        return db.state(), auth, subtasks, f"I'm {name}, my email is {email}.", facts


# ----- sub-task texts: what the customer asks, what the agent confirms, the summary line --------------
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
USER_ADDRESS = (
    "please change the default address on my account to {said}",
    "I will set the default address of your account to {said}.",
    "your default address is now {said}",
)
CANCEL_ORDER = (
    "please cancel order {oid}, {why}",
    "I will cancel order {oid} (reason: {reason}) and refund {refund} to the original payment method.",
    "order {oid} is cancelled and {refund} will be refunded",
)
ORDER_ADDRESS = (
    "please ship order {oid} to {said} instead",
    "I will change the shipping address of order {oid} to {said}.",
    "order {oid} will ship to {said}",
)
RETURN_ITEM = (
    "please return the {name} from order {oid}, refunded to the original payment method",
    "I will request a return of the {name} (item {item_id}) from order {oid}, refunding {refund} to {original}.",
    "the return of the {name} from order {oid} is requested (instructions come by email)",
)
EXCHANGE_ITEM = (
    "please exchange the {name} in order {oid} for the same one with {option} {value}, settling any difference "
    "with the original payment method",
    "I will exchange the {name} (item {item_id}) in order {oid} for item {new_id} ({option} {value}); {settle} via "
    "{original}.",
    "the exchange of the {name} in order {oid} for the {option} {value} one is requested",
)


def _sub(kind: str, texts: tuple[str, str, str], reads: list[ToolCall], write: ToolCall, **values: Any) -> SubTask:
    """A sub-task whose request, confirmation (ending "Shall I proceed?") and summary fill `texts` with `values`."""
    request, confirm, done = (text.format(**values) for text in texts)
    confirm += " Shall I proceed?"
    return SubTask(kind=kind, request=request, reads=reads, confirm=confirm, write=write, done=done)


def _call(name: str, **arguments: Any) -> ToolCall:
    """A tool call written as a Python call; the arguments keep their order."""
    return ToolCall(name=name, arguments=arguments)


# ----- airline sub-tasks -------------------------------------------------------------------------------
def _build_cancel_reservation(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> SubTask:
    """A reservation cancellable on one of four grounds; the refund total is a required fact."""
    why = rng.choice(("business", "recent", "insured", "airline"))
    age = timedelta(hours=rng.randint(1, 23)) if why == "recent" else timedelta(days=rng.randint(2, 30))
    cabin = "business" if why == "business" else rng.choice(("basic_economy", "economy"))
    insured = "yes" if why == "insured" else rng.choice(("yes", "no"))
    res = db.add_reservation(
        user, cabin=cabin, created_at=AIRLINE_NOW - age, insurance=insured, cancelled_segment=why == "airline"
    )
    rid, total = res["reservation_id"], refund_total(res)
    reason = {  # both draws happen whatever `why` is: the golden fingerprints depend on it
        "insured": rng.choice(("I'm ill and can't travel", "a storm is forecast on my travel dates")),
        "airline": "you cancelled one of its flights",
    }.get(why, rng.choice(("my plans changed", "I no longer need the trip")))
    reads = [_call("get_reservation_details", reservation_id=rid)]
    if why == "airline":
        reads += [_call("get_flight_status", flight_number=s["flight_number"], date=s["date"]) for s in res["flights"]]
    write = _call("cancel_reservation", reservation_id=rid)
    values = {"rid": rid, "reason": reason, "grounds": CANCEL_GROUNDS[why], "refund": money(total)}
    sub = _sub("cancel", CANCEL_RESERVATION, reads, write, **values)
    sub.facts = [str(total)]  # the refund total must be stated
    return sub


def _plain_reservation(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """An uninsured reservation in a random cabin, for the sub-tasks that change rather than cancel it."""
    cabin = rng.choice(("basic_economy", "economy", "business"))
    days = rng.randint(1, 30)
    return db.add_reservation(user, cabin=cabin, created_at=AIRLINE_NOW - timedelta(days=days), insurance="no"), cabin


def _build_bags(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> SubTask:
    """Add 1–2 checked bags: the paid count follows the tier × cabin × passengers free allowance."""
    res, cabin = _plain_reservation(rng, db, user)
    rid = res["reservation_id"]
    extra = rng.randint(1, 2)
    free = FREE_BAGS[user["membership"]][cabin] * len(res["passengers"])
    total = res["total_baggages"] + extra
    nonfree = max(0, total - free)
    card = db.credit_card(user)
    fee = 50 * nonfree
    cost = f"{money(fee)} charged to your credit card" if fee else "no charge, within your free allowance"
    reads = [_call("get_reservation_details", reservation_id=rid)]
    bags = {"reservation_id": rid, "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": card}
    write = ToolCall(name="update_reservation_baggages", arguments=bags)
    noun = "bag" if extra == 1 else "bags"
    values = {"rid": rid, "extra": extra, "noun": noun, "total": total, "nonfree": nonfree, "cost": cost}
    return _sub("bags", ADD_BAGS, reads, write, **values)


def _build_passenger(rng: random.Random, db: AirlineRecords, user: dict[str, Any]) -> SubTask:
    """Correct one passenger's date of birth: the write carries the whole passenger list with one change."""
    res, _ = _plain_reservation(rng, db, user)
    rid = res["reservation_id"]
    passengers = res["passengers"]
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
    updated = [dict(p, dob=dob) if i == index else dict(p) for i, p in enumerate(passengers)]
    reads = [_call("get_reservation_details", reservation_id=rid)]
    write = _call("update_reservation_passengers", reservation_id=rid, passengers=updated)
    who = f"{target['first_name']} {target['last_name']}"
    return _sub("passenger", FIX_BIRTH_DATE, reads, write, rid=rid, who=who, dob=dob)


# ----- retail sub-tasks --------------------------------------------------------------------------------
def _build_user_address(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> SubTask:
    """Change the account's default address (drawn at most once per task)."""
    new, uid = db.address(), user["user_id"]
    write = _call("modify_user_address", user_id=uid, **_address_args(new))
    reads = [_call("get_user_details", user_id=uid)]
    return _sub("user_address", USER_ADDRESS, reads, write, said=describe_address(new))


def _new_order(db: RetailRecords, user: dict[str, Any], status: str) -> tuple[dict[str, Any], str, list[ToolCall]]:
    """A fresh order in `status`, its id and the read that looks it up."""
    order = db.add_order(user, status)
    return order, order["order_id"], [_call("get_order_details", order_id=order["order_id"])]


def _build_order_cancel(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> SubTask:
    """Cancel a pending order with one of the two reasons the tool accepts."""
    order, oid, reads = _new_order(db, user, "pending")
    reason = rng.choice(("no longer needed", "ordered by mistake"))
    why = f"it was {reason}" if reason == "ordered by mistake" else "I no longer need it"
    write = _call("cancel_pending_order", order_id=oid, reason=reason)
    refund = money(order["payment_history"][0]["amount"])
    return _sub("cancel", CANCEL_ORDER, reads, write, oid=oid, why=why, reason=reason, refund=refund)


def _build_order_address(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> SubTask:
    """Ship a pending order to a new address."""
    _, oid, reads = _new_order(db, user, "pending")
    new = db.address()
    write = _call("modify_pending_order_address", order_id=oid, **_address_args(new))
    return _sub("order_address", ORDER_ADDRESS, reads, write, oid=oid, said=describe_address(new))


def _build_return(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> SubTask:
    """Return one item of a delivered order, refunded to the original payment method."""
    order, oid, reads = _new_order(db, user, "delivered")
    item = rng.choice(order["items"])
    original = order["payment_history"][0]["payment_method_id"]
    write = _call("return_delivered_order_items", order_id=oid, item_ids=[item["item_id"]], payment_method_id=original)
    values = {"oid": oid, "name": item["name"], "item_id": item["item_id"], "original": original}
    return _sub("return", RETURN_ITEM, reads, write, refund=money(item["price"]), **values)


def _build_exchange(rng: random.Random, db: RetailRecords, user: dict[str, Any]) -> SubTask:
    """Exchange one delivered item for its sibling variant; the price difference settles on the original method."""
    order, oid, reads = _new_order(db, user, "delivered")
    item = rng.choice(order["items"])
    original = order["payment_history"][0]["payment_method_id"]
    option, value, variant = db.sibling_variant(item)
    difference = round(variant["price"] - item["price"], 2)
    settle = f"you pay {money(difference)}" if difference > 0 else f"you get {money(-difference)} back"
    reads = [*reads, _call("get_product_details", product_id=item["product_id"])]
    new_id = variant["item_id"]
    swap = {"order_id": oid, "item_ids": [item["item_id"]], "new_item_ids": [new_id], "payment_method_id": original}
    write = ToolCall(name="exchange_delivered_order_items", arguments=swap)
    values = {"oid": oid, "name": item["name"], "item_id": item["item_id"], "original": original, "new_id": new_id}
    return _sub("exchange", EXCHANGE_ITEM, reads, write, option=option, value=value, settle=settle, **values)


def _address_args(address: dict[str, str]) -> dict[str, str]:
    """The address fields the retail address-changing tools take, in their order."""
    keys = ("address1", "address2", "city", "state", "country", "zip")
    return {key: address[key] for key in keys}


Builder = Callable[[random.Random, Any, dict[str, Any]], SubTask]
AIRLINE_BUILDERS: dict[str, Builder] = {
    "cancel": _build_cancel_reservation,
    "bags": _build_bags,
    "passenger": _build_passenger,
}
RETAIL_BUILDERS: dict[str, Builder] = {
    "cancel": _build_order_cancel,
    "order_address": _build_order_address,
    "return": _build_return,
    "exchange": _build_exchange,
    "user_address": _build_user_address,
}
