"""A tau2-format domain folder on a generated database: a stand-in target when no tau2 data is given.

``write_generated_domain(root, "retail")`` writes ``root/retail/{db.json,tasks.json,policy.md}`` and
``root/user_simulator/simulation_guidelines.md``: a seeded database from the domain's generator, our own policy
text, and a handful of tasks with gold actions drawn from that database. Each task is kept only if tau2's own
evaluator (:class:`Tau2Evaluator`) scores its gold trajectory 1.0 and, for a task that writes, the gold
actions change the database. The tasks come in three kinds, so that planted deficits show: look-ups that only
tell the user a fact, one write, and two writes (multi-step). This is not the benchmark: its ids, texts and
tasks are ours, and pass rates on it say nothing about tau2-bench itself.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from trace_envs.domains.tau2_common import file_db_dump

from .data import GUIDELINES_NAME, load_domain_data, tau2_domain
from .evaluator import Tau2Evaluator, gold_trajectory
from .tasks import Tau2Task

GUIDELINES = """You play a customer talking to a support agent. State your request in your first message, answer
questions with what you know, and end the conversation with ###STOP### once the agent has handled it.
"""
TaskDraft = dict[str, Any]


def _task(
    task_id: str, reason: str, known: str, actions: list[tuple[str, dict[str, Any]]], info: list[str]
) -> TaskDraft:
    return {
        "id": task_id,
        "user_scenario": {
            "instructions": {
                "domain": "",
                "reason_for_call": reason,
                "known_info": known,
                "unknown_info": None,
                "task_instructions": "Be brief.",
            }
        },
        "evaluation_criteria": {
            "actions": [
                {"action_id": f"{task_id}_{i}", "name": name, "arguments": arguments}
                for i, (name, arguments) in enumerate(actions)
            ],
            "communicate_info": info,
            "reward_basis": ["DB", "COMMUNICATE"],
        },
    }


def retail_drafts(db: Any, rng: random.Random) -> Iterator[TaskDraft]:
    """Order status (look-ups), cancel one pending order, cancel two pending orders of one user."""
    users = sorted(db.users.values(), key=lambda u: u.user_id)
    rng.shuffle(users)
    for user in users:
        orders = [db.orders[o] for o in user.orders]
        pending = [o.order_id for o in orders if o.status == "pending"]
        known = f"Your email is {user.email}."
        find = ("find_user_id_by_email", {"email": user.email})
        first = orders[0].order_id
        yield _task(
            "", f"You want to know the status of your order {first}.", known,
            [find, ("get_order_details", {"order_id": first})], [orders[0].status],
        )  # fmt: skip
        if pending:
            order = pending[0]
            yield _task(
                "", f"You want to cancel your pending order {order} because you no longer need it.", known,
                [find, ("get_order_details", {"order_id": order}),
                 ("cancel_pending_order", {"order_id": order, "reason": "no longer needed"})], [],
            )  # fmt: skip
        if len(pending) >= 2:
            one, two = pending[:2]
            yield _task(
                "", f"You want to cancel both of your pending orders {one} and {two} because you no longer need them.",
                known,
                [find, ("get_order_details", {"order_id": one}),
                 ("cancel_pending_order", {"order_id": one, "reason": "no longer needed"}),
                 ("get_order_details", {"order_id": two}),
                 ("cancel_pending_order", {"order_id": two, "reason": "no longer needed"})], [],
            )  # fmt: skip


def airline_drafts(db: Any, rng: random.Random) -> Iterator[TaskDraft]:
    """Trip origin (look-ups), cancel one reservation, cancel two reservations of one user."""
    users = sorted(db.users.values(), key=lambda u: u.user_id)
    rng.shuffle(users)
    for user in users:
        open_ids = [r for r in user.reservations if r in db.reservations and db.reservations[r].status is None]
        if not open_ids:
            continue
        known = f"Your user id is {user.user_id}."
        details = ("get_user_details", {"user_id": user.user_id})
        first = db.reservations[open_ids[0]]
        yield _task(
            "", f"You want to know which airport your reservation {first.reservation_id} departs from.", known,
            [details, ("get_reservation_details", {"reservation_id": first.reservation_id})], [first.origin],
        )  # fmt: skip
        yield _task(
            "", f"You want to cancel your reservation {first.reservation_id}; your plans changed.", known,
            [details, ("get_reservation_details", {"reservation_id": first.reservation_id}),
             ("cancel_reservation", {"reservation_id": first.reservation_id})], [],
        )  # fmt: skip
        if len(open_ids) >= 2:
            one, two = open_ids[:2]
            yield _task(
                "", f"You want to cancel both of your reservations {one} and {two}; your plans changed.", known,
                [details, ("get_reservation_details", {"reservation_id": one}), ("cancel_reservation", {"reservation_id": one}),
                 ("get_reservation_details", {"reservation_id": two}), ("cancel_reservation", {"reservation_id": two})], [],
            )  # fmt: skip


def _retail_db(rng: random.Random) -> Any:
    from trace_envs.domains.retail import generate_retail_db

    return generate_retail_db(rng, users=12, products=6, orders_per_user=(2, 4))


def _airline_db(rng: random.Random) -> Any:
    from trace_envs.domains.airline.generator import generate_airline_db

    return generate_airline_db(rng, num_flights=20, num_users=12, num_reservations=30, num_days=10)


GENERATORS: dict[str, tuple[Callable[[random.Random], Any], Callable[[Any, random.Random], Iterator[TaskDraft]]]] = {
    "retail": (_retail_db, retail_drafts),
    "airline": (_airline_db, airline_drafts),
}


def _writes(draft: TaskDraft) -> int:
    return sum(a["name"].startswith("cancel_") for a in draft["evaluation_criteria"]["actions"])


def write_generated_domain(root: str | Path, domain: str, *, seed: int = 0, per_kind: int = 3) -> Path:
    """Write a tau2-format ``domain`` folder under ``root`` (database, policy, verified tasks); return it.

    ``per_kind`` tasks of each kind (look-ups, one write, two writes) are kept, in a seeded order. Raises
    ``ValueError`` if the generated database yields no verified task of some kind.
    """
    if domain not in GENERATORS:
        raise ValueError(f"no generator for tau2 domain {domain!r}; use one of {', '.join(GENERATORS)}")
    make_db, drafts = GENERATORS[domain]
    rng = random.Random(seed)
    db = make_db(rng)
    target = tau2_domain(domain)
    folder = Path(root) / domain
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "db.json").write_text(json.dumps(file_db_dump(db)), encoding="utf-8")
    (folder / "policy.md").write_text(target.policy, encoding="utf-8")
    guidelines = Path(root) / "user_simulator" / GUIDELINES_NAME
    guidelines.parent.mkdir(parents=True, exist_ok=True)
    guidelines.write_text(GUIDELINES, encoding="utf-8")
    evaluator = Tau2Evaluator(target, target.load_file(folder / "db.json"))
    kept: dict[int, list[TaskDraft]] = {0: [], 1: [], 2: []}
    for draft in drafts(db, rng):
        kind = _writes(draft)
        if len(kept[kind]) >= per_kind:
            continue
        draft["id"] = str(sum(map(len, kept.values())))
        draft["user_scenario"]["instructions"]["domain"] = domain
        if _verified(Tau2Task.model_validate(draft), evaluator, writes=kind > 0):
            kept[kind].append(draft)
    missing = [kind for kind, found in kept.items() if not found]
    if missing:
        raise ValueError(f"the generated {domain} database (seed {seed}) gave no verified task with {missing} writes")
    tasks = [draft for kind in sorted(kept) for draft in kept[kind]]
    for index, draft in enumerate(tasks):
        draft["id"] = str(index)
        for number, action in enumerate(draft["evaluation_criteria"]["actions"]):
            action["action_id"] = f"{index}_{number}"
    (folder / "tasks.json").write_text(json.dumps(tasks, indent=1), encoding="utf-8")
    load_domain_data(folder, domain)  # the folder reads back as a tau2 domain
    return folder


def _verified(task: Tau2Task, evaluator: Tau2Evaluator, *, writes: bool) -> bool:
    """tau2's evaluator gives the gold trajectory 1.0, no gold call errs, and a writing task changes the database."""
    digest, outputs = evaluator.replay_gold(task)
    if any(error for _, _, error in outputs):
        return False
    if writes == (digest == evaluator.initial_hash):
        return False
    return evaluator.evaluate(task, gold_trajectory(task, outputs)).reward == 1.0
