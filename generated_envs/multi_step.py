"""Multi-step task completion: a compound request of 2–4 sub-tasks that must all be done.

The customer lists every sub-task in the opening message (cancel two reservations and add a bag to a
third; cancel one order, reroute another and exchange an item) and never reminds the agent: the
scripted user ends the conversation as soon as the agent makes a statement instead of asking. The
paper's failure is the agent that completes the first sub-task, says goodbye and never does the rest;
the state hash catches it.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core import Capability, Reply, Task, ToolCall, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import (
    AIRLINE_NOW,
    FREE_BAGS,
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
    )
    domain = AIRLINE
    max_turns = 40
    policy_addendum = POLICY_ADDENDUM

    # ----- task generation ---------------------------------------------------------------------------
    def generate(self, rng: random.Random) -> Task:
        if self.knobs.variant == "airline":
            state, auth, subtasks, identity, facts = self._airline(rng)
        else:
            state, auth, subtasks, identity, facts = self._retail(rng)
        parts = [f"{ORDINALS[i]}, {s.request}" for i, s in enumerate(subtasks)]
        listing = "; ".join(parts[:-1]) + f"; and {parts[-1]}"
        opening = f"Hi! {identity} I have {len(subtasks)} things to sort out today: {listing}."
        solution: list[ToolCall | str] = [*auth]
        for sub in subtasks:
            solution += [*sub.reads, sub.confirm, sub.write]
        solution.append("All done: " + "; ".join(s.done for s in subtasks) + ".")
        replies: list[Reply] = ["confirm" for _ in subtasks]  # each sub-task's confirmation, then the summary
        replies.append("close")
        return Task(
            task_id="",
            initial_state=state,
            goal=f"Complete all {len(subtasks)} parts of the request: " + "; ".join(s.request for s in subtasks),
            user=UserScript(opening=opening, facts=facts, replies=replies),
            solution=solution,
            # the paper's failure: the first sub-task only, then closing as if everything were done
            flawed_solution=[
                *auth,
                *subtasks[0].reads,
                subtasks[0].confirm,
                subtasks[0].write,
                f"Done: {subtasks[0].done}. If you need any further assistance, feel free to reach out.",
            ],
            required_facts=[f for s in subtasks for f in s.facts],
            metadata={
                "variant": self.knobs.variant,
                "kinds": [s.kind for s in subtasks],
                "auth": [c.model_dump() for c in auth],
                "subtasks": [s.model_dump(mode="json") for s in subtasks],
            },
        )

    def _airline(self, rng: random.Random) -> tuple[dict[str, Any], list[ToolCall], list[SubTask], str, list[UserFact]]:
        db = AirlineRecords(rng)
        user = db.add_user()
        kinds = [rng.choice(AIRLINE_KINDS) for _ in range(self.knobs.subtasks)]
        subtasks = [self._airline_subtask(rng, db, user, kind) for kind in kinds]
        for _ in range(self.knobs.distractors):
            db.add_reservation(
                user,
                cabin=rng.choice(("basic_economy", "economy", "business")),
                created_at=AIRLINE_NOW - timedelta(days=rng.randint(2, 30)),
                insurance=rng.choice(("yes", "no")),
            )
        rng.shuffle(user["reservations"])
        uid = user["user_id"]
        auth = [ToolCall(name="get_user_details", arguments={"user_id": uid})]
        facts = [UserFact(keys=["user id", "user_id"], answer=f"My user id is {uid}.")]
        return db.state(), auth, subtasks, f"My user id is {uid}.", facts

    def _airline_subtask(self, rng: random.Random, db: AirlineRecords, user: dict[str, Any], kind: str) -> SubTask:
        if kind == "cancel":
            why = rng.choice(("business", "recent", "insured", "airline"))
            created = AIRLINE_NOW - (
                timedelta(hours=rng.randint(1, 23)) if why == "recent" else timedelta(days=rng.randint(2, 30))
            )
            cabin = "business" if why == "business" else rng.choice(("basic_economy", "economy"))
            res = db.add_reservation(
                user,
                cabin=cabin,
                created_at=created,
                insurance="yes" if why == "insured" else rng.choice(("yes", "no")),
                cancelled_segment=why == "airline",
            )
            rid, total = res["reservation_id"], refund_total(res)
            reason = {
                "insured": rng.choice(("I'm ill and can't travel", "a storm is forecast on my travel dates")),
                "airline": "you cancelled one of its flights",
            }.get(why, rng.choice(("my plans changed", "I no longer need the trip")))
            reads = [ToolCall(name="get_reservation_details", arguments={"reservation_id": rid})]
            if why == "airline":
                reads += [
                    ToolCall(
                        name="get_flight_status", arguments={"flight_number": s["flight_number"], "date": s["date"]}
                    )
                    for s in res["flights"]
                ]
            grounds = {
                "business": "it is a business cabin booking",
                "recent": "it was booked less than 24 hours ago",
                "insured": "it has travel insurance covering your reason",
                "airline": "the airline cancelled one of its flights",
            }[why]
            return SubTask(
                kind="cancel",
                request=f"please cancel reservation {rid} because {reason}",
                reads=reads,
                confirm=(
                    f"Reservation {rid} can be cancelled because {grounds}. I will cancel the whole reservation and "
                    f"refund {money(total)} to the original payment method. Shall I proceed?"
                ),
                write=ToolCall(name="cancel_reservation", arguments={"reservation_id": rid}),
                done=f"reservation {rid} is cancelled and {money(total)} will be refunded in 5 to 7 business days",
                facts=[str(total)],
            )
        cabin = rng.choice(("basic_economy", "economy", "business"))
        res = db.add_reservation(
            user, cabin=cabin, created_at=AIRLINE_NOW - timedelta(days=rng.randint(1, 30)), insurance="no"
        )
        rid = res["reservation_id"]
        reads = [ToolCall(name="get_reservation_details", arguments={"reservation_id": rid})]
        if kind == "bags":
            extra = rng.randint(1, 2)
            free = FREE_BAGS[user["membership"]][cabin] * len(res["passengers"])
            total_bags = res["total_baggages"] + extra
            nonfree = max(0, total_bags - free)
            card = db.credit_card(user)
            fee = 50 * nonfree
            cost = f"{money(fee)} charged to your credit card" if fee else "no charge, within your free allowance"
            noun = "bag" if extra == 1 else "bags"
            return SubTask(
                kind="bags",
                request=f"please add {extra} checked {noun} to reservation {rid}, with any fee on my credit card",
                reads=reads,
                confirm=(
                    f"Reservation {rid} will have {total_bags} checked bags, {nonfree} of them paid at $50 each: "
                    f"{cost}. Shall I proceed?"
                ),
                write=ToolCall(
                    name="update_reservation_baggages",
                    arguments={
                        "reservation_id": rid,
                        "total_baggages": total_bags,
                        "nonfree_baggages": nonfree,
                        "payment_id": card,
                    },
                ),
                done=f"reservation {rid} now has {total_bags} checked bags ({cost})",
            )
        passengers = res["passengers"]
        names = [(p["first_name"], p["last_name"]) for p in passengers]
        unique = [i for i, n in enumerate(names) if names.count(n) == 1]
        index = rng.choice(unique) if unique else 0
        target = passengers[index]
        if not unique:  # every name appears twice: make the one the customer talks about distinguishable
            target["first_name"] = next(
                f for f in ("Alex", "Robin", "Sam", "Jordan") if (f, target["last_name"]) not in names
            )
        new_dob = db.person()["dob"]
        while new_dob == target["dob"]:
            new_dob = db.person()["dob"]
        updated = [dict(p, dob=new_dob) if i == index else dict(p) for i, p in enumerate(passengers)]
        who = f"{target['first_name']} {target['last_name']}"
        return SubTask(
            kind="passenger",
            request=f"on reservation {rid}, please correct {who}'s date of birth to {new_dob}",
            reads=reads,
            confirm=f"I will change {who}'s date of birth on reservation {rid} to {new_dob}. Shall I proceed?",
            write=ToolCall(
                name="update_reservation_passengers", arguments={"reservation_id": rid, "passengers": updated}
            ),
            done=f"{who}'s date of birth on reservation {rid} is now {new_dob}",
        )

    def _retail(self, rng: random.Random) -> tuple[dict[str, Any], list[ToolCall], list[SubTask], str, list[UserFact]]:
        db = RetailRecords(rng)
        user = db.add_user()
        kinds: list[str] = []
        while len(kinds) < self.knobs.subtasks:
            kind = rng.choice(RETAIL_KINDS)
            if kind != "user_address" or kind not in kinds:
                kinds.append(kind)
        subtasks = [self._retail_subtask(rng, db, user, kind) for kind in kinds]
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

    def _retail_subtask(self, rng: random.Random, db: RetailRecords, user: dict[str, Any], kind: str) -> SubTask:
        uid = user["user_id"]
        if kind == "user_address":
            new = db.address()
            said = describe_address(new)
            return SubTask(
                kind=kind,
                request=f"please change the default address on my account to {said}",
                reads=[ToolCall(name="get_user_details", arguments={"user_id": uid})],
                confirm=f"I will set the default address of your account to {said}. Shall I proceed?",
                write=ToolCall(name="modify_user_address", arguments={"user_id": uid, **_address_args(new)}),
                done=f"your default address is now {said}",
            )
        status = "pending" if kind in ("cancel", "order_address") else "delivered"
        order = db.add_order(user, status)
        oid = order["order_id"]
        reads = [ToolCall(name="get_order_details", arguments={"order_id": oid})]
        if kind == "cancel":
            reason = rng.choice(("no longer needed", "ordered by mistake"))
            total = order["payment_history"][0]["amount"]
            return SubTask(
                kind=kind,
                request=f"please cancel order {oid}, it was {reason}" if reason == "ordered by mistake"
                else f"please cancel order {oid}, I no longer need it",
                reads=reads,
                confirm=(
                    f"I will cancel order {oid} (reason: {reason}) and refund {money(total)} to the original payment "
                    "method. Shall I proceed?"
                ),
                write=ToolCall(name="cancel_pending_order", arguments={"order_id": oid, "reason": reason}),
                done=f"order {oid} is cancelled and {money(total)} will be refunded",
            )  # fmt: skip
        if kind == "order_address":
            new = db.address()
            said = describe_address(new)
            return SubTask(
                kind=kind,
                request=f"please ship order {oid} to {said} instead",
                reads=reads,
                confirm=f"I will change the shipping address of order {oid} to {said}. Shall I proceed?",
                write=ToolCall(name="modify_pending_order_address", arguments={"order_id": oid, **_address_args(new)}),
                done=f"order {oid} will ship to {said}",
            )
        item = rng.choice(order["items"])
        original = order["payment_history"][0]["payment_method_id"]
        if kind == "return":
            return SubTask(
                kind=kind,
                request=f"please return the {item['name']} from order {oid}, refunded to the original payment method",
                reads=reads,
                confirm=(
                    f"I will request a return of the {item['name']} (item {item['item_id']}) from order {oid}, "
                    f"refunding {money(item['price'])} to {original}. Shall I proceed?"
                ),
                write=ToolCall(
                    name="return_delivered_order_items",
                    arguments={"order_id": oid, "item_ids": [item["item_id"]], "payment_method_id": original},
                ),
                done=f"the return of the {item['name']} from order {oid} is requested (instructions come by email)",
            )
        option, value, variant = db.sibling_variant(item)
        difference = round(variant["price"] - item["price"], 2)
        settle = f"you pay {money(difference)}" if difference > 0 else f"you get {money(-difference)} back"
        return SubTask(
            kind="exchange",
            request=(
                f"please exchange the {item['name']} in order {oid} for the same one with {option} {value}, "
                "settling any difference with the original payment method"
            ),
            reads=[*reads, ToolCall(name="get_product_details", arguments={"product_id": item["product_id"]})],
            confirm=(
                f"I will exchange the {item['name']} (item {item['item_id']}) in order {oid} for item "
                f"{variant['item_id']} ({option} {value}); {settle} via {original}. Shall I proceed?"
            ),
            write=ToolCall(
                name="exchange_delivered_order_items",
                arguments={
                    "order_id": oid,
                    "item_ids": [item["item_id"]],
                    "new_item_ids": [variant["item_id"]],
                    "payment_method_id": original,
                },
            ),
            done=f"the exchange of the {item['name']} in order {oid} for the {option} {value} one is requested",
        )


def _address_args(address: dict[str, str]) -> dict[str, str]:
    keys = ("address1", "address2", "city", "state", "country", "zip")
    return {key: address[key] for key in keys}
