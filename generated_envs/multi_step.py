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
from datetime import timedelta
from typing import Any

from pydantic import Field

from generated_envs.kits.multi_step.airline_requests import AIRLINE_PARTS
from generated_envs.kits.multi_step.retail_requests import RETAIL_PARTS
from generated_envs.probes.multi_step import probe_multi_step
from trace_envs.core import Capability, Plan, Task, UserFact, UserScript
from trace_envs.domains.airline import AIRLINE
from trace_envs.domains.airline.records import AIRLINE_NOW, AirlineRecords
from trace_envs.domains.retail.records import RetailRecords
from trace_envs.domains.tau2_env import Tau2Knobs, Tau2VariantEnv
from trace_envs.domains.tau2_flaws import stop_after_first_write
from trace_envs.domains.tau2_requests import Part, SubTask

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
Setup = tuple[dict[str, Any], tuple[str, dict[str, Any]], list[Part], str, list[UserFact]]
"""A drawn task: the state, the identifying read (tool and arguments), the parts, who the customer says
they are, and what the customer answers."""


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
        probe=probe_multi_step,
        flaws={"tau2": stop_after_first_write},
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
        state, (auth_tool, auth_arguments), parts, identity, facts = setup
        plan = Plan(self.domain, state)  # the parts read and write with the real tools, in order
        customer = plan.call(auth_tool, **auth_arguments)
        auth = plan.steps[:1]
        subtasks: list[SubTask] = [part(plan, customer) for part in parts]
        plan.say("All done: " + "; ".join(s.done for s in subtasks) + ".")
        listing = [f"{ORDINALS[i]}, {s.request}" for i, s in enumerate(subtasks)]
        opening = f"Hi! {identity} I have {len(subtasks)} things to sort out today: " + "; ".join(listing[:-1])
        first = subtasks[0]  # the paper's failure: the first sub-task only, then closing as if everything were done
        stop = f"Done: {first.done}. If you need any further assistance, feel free to reach out."
        return plan.task(
            goal=f"Complete all {len(subtasks)} parts of the request: " + "; ".join(s.request for s in subtasks),
            user=UserScript(opening=f"{opening}; and {listing[-1]}.", facts=facts),
            flawed_solution=[*auth, *first.reads, first.confirm, first.write, stop],
            required_facts=[f for s in subtasks for f in s.facts],
            metadata={
                "variant": self.knobs.variant,
                "kinds": [s.kind for s in subtasks],
                "auth": [c.model_dump() for c in auth if not isinstance(c, str)],
                "subtasks": [s.model_dump(mode="json") for s in subtasks],
            },
        )

    def _airline(self, rng: random.Random) -> Setup:
        """One airline customer, a reservation per sub-task, then the distractors, in a shuffled list."""
        db = AirlineRecords(rng)
        user = db.add_user()
        kinds = [rng.choice(AIRLINE_KINDS) for _ in range(self.knobs.subtasks)]
        parts = [AIRLINE_PARTS[kind](rng, db, user) for kind in kinds]
        for _ in range(self.knobs.distractors):
            cabin = rng.choice(("basic_economy", "economy", "business"))
            created = AIRLINE_NOW - timedelta(days=rng.randint(2, 30))
            db.add_reservation(user, cabin=cabin, created_at=created, insurance=rng.choice(("yes", "no")))
        rng.shuffle(user["reservations"])
        uid = user["user_id"]
        facts = [UserFact(keys=["user id", "user_id"], answer=f"My user id is {uid}.")]
        return db.state(), ("get_user_details", {"user_id": uid}), parts, f"My user id is {uid}.", facts

    def _retail(self, rng: random.Random) -> Setup:
        """One retail customer, an order per sub-task (the account address at most once), then distractors."""
        db = RetailRecords(rng)
        user = db.add_user()
        kinds: list[str] = []
        while len(kinds) < self.knobs.subtasks:
            kind = rng.choice(RETAIL_KINDS)
            if kind != "user_address" or kind not in kinds:
                kinds.append(kind)
        parts = [RETAIL_PARTS[kind](rng, db, user) for kind in kinds]
        for _ in range(self.knobs.distractors):
            db.add_order(user, rng.choice(("pending", "processed", "delivered", "cancelled")))
        rng.shuffle(user["orders"])
        email, zip_code = user["email"], user["address"]["zip"]
        name = f"{user['name']['first_name']} {user['name']['last_name']}"
        facts = [
            UserFact(keys=["email"], answer=f"My email is {email}."),
            UserFact(keys=["zip"], answer=f"I'm {name} and my zip code is {zip_code}."),
        ]
        return (
            db.state(),
            ("find_user_id_by_email", {"email": email}),
            parts,
            f"I'm {name}, my email is {email}.",
            facts,
        )
