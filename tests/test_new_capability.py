"""A new capability is one new file and nothing else edited: an env module written to a temporary folder
(its capability, its probe and its generator) rolls out, is analysed with its own probe, trains 2 GRPO
steps on the tiny model and is routed to. The folder is registered with ``trace_envs.load_envs(path,
boxed=False)``, as a user's own, trusted folder of env modules is when its probe and flaw rule (its code) are to
run in the analysis and the flawed policy (a boxed env's capability carries neither).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

pytestmark = pytest.mark.train

ENV_ID = "trace/order-status-v0"
NAME = "order_status_lookup"
MODULE = '''
"""Order-status lookup: tell the user an order's status as the shop's records have it, never a guess."""

from __future__ import annotations

import random

from trace_envs.core import Capability, CapabilityEnv, Plan, Task, UserScript
from trace_envs.domains.probing import Episode, ProbeLabel
from trace_envs.domains.toy_shop import TOY_SHOP, Order, ShopState

ENV_ID = "trace/order-status-v0"
STATUSES = ["pending", "processed", "delivered"]


def status_probe(episode: Episode) -> ProbeLabel:
    """LACKING when the agent tells an order's status before any successful lookup."""
    if not any("#W" in text for text in episode.user_texts):
        return ProbeLabel("NA", "the user asked about no order")
    for calls_before, text in episode.agent_texts:
        if any(status in text for status in STATUSES):
            looked = any(c.name == "get_order_details" and not c.error for c in episode.calls[:calls_before])
            return ProbeLabel("PRESENT", "told after a lookup") if looked else ProbeLabel("LACKING", "told unseen")
    return ProbeLabel("NA", "no status told")


class OrderStatusEnv(CapabilityEnv):
    """'What is the status of my order?': look it up, then tell it."""

    capability = Capability(
        name="order_status_lookup",
        description="Look an order up before telling its status; lacking when a status is told without a lookup.",
        probe=status_probe,
    )
    domain = TOY_SHOP
    max_turns = 6

    def generate(self, rng: random.Random) -> Task:
        order_id, status = f"#W{rng.randrange(1_000_000, 10_000_000)}", rng.choice(STATUSES)
        order = Order(order_id=order_id, user_name="Ava Lee", item="backpack", status=status)
        plan = Plan(TOY_SHOP, ShopState(orders={order_id: order}))
        plan.call("get_order_details", order_id=order_id)
        plan.say(f"Your order {order_id} is {status}.")
        return plan.task(
            goal=f"Tell the status of {order_id}.",
            user=UserScript(opening=f"Hi, what is the status of my order {order_id}?"),
            required_facts=[status],
            flawed_solution=[f"Your order {order_id} is pending."],  # a guess, without the lookup
        )
'''


@pytest.fixture
def new_env(tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "order_status_env.py").write_text(MODULE, encoding="utf-8")
    import trace_envs

    try:
        assert trace_envs.load_envs(folder, boxed=False) == [ENV_ID]
        yield ENV_ID
    finally:
        gym.registry.pop(ENV_ID, None)


def test_a_capability_in_one_file_rolls_out_is_analysed_trains_and_routes(new_env: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("trl")
    pytest.importorskip("peft")
    from trace_envs.analysis import AnalysisConfig, Label, known_dictionary, run_analysis
    from trace_envs.llm.tiny_model import build_tiny_model
    from trace_envs.rollout import TrajectoryStore, make_jobs, run_rollouts
    from trace_envs.routing import CapabilityCard, Router
    from trace_envs.training import TrainConfig, build_run

    # roll out the oracle and the flawed policy named by the new capability
    store_path = tmp_path / "runs.jsonl"
    with TrajectoryStore(store_path) as store:
        oracle = run_rollouts(make_jobs([new_env], range(12)), "oracle", store=store)
        flawed = run_rollouts(make_jobs([new_env], range(12)), f"flawed:{NAME}", store=store)
    assert oracle.pass_rate == 1.0 and 0.0 < flawed.pass_rate < 1.0  # a guessed "pending" is right 1 time in 3

    # analyse with the probes analyst: the new capability is in the dictionary, labelled by its own probe, kept
    assert NAME in [c.name for c in known_dictionary().capabilities]
    result = run_analysis(store_path, AnalysisConfig(analyst="probes", runs=1), tmp_path / "analysis", report=False)
    labels = [row.labels[NAME] for row in result.labels]
    assert {label.label for label in labels} == {Label.PRESENT, Label.LACKING}
    assert sum(label.label == Label.LACKING for label in labels) == 12  # every flawed episode, no oracle one
    assert result.kept == [NAME]

    # train two GRPO steps on the tiny model
    import torch

    torch.set_num_threads(1)
    model = build_tiny_model(tmp_path / "tiny", seed=0)
    config = TrainConfig(
        env_ids=[new_env],
        max_steps=2,
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=32,
        num_seeds=4,
    )
    meta = build_run(config, str(model), tmp_path / "adapter").run()
    assert meta.status == "complete" and meta.steps_done == 2
    assert meta.capability == NAME and meta.description.startswith("Look an order up")

    # route: the router shows the declared description and picks a label by its logits
    from transformers import AutoModelForCausalLM, AutoTokenizer

    card = CapabilityCard.from_adapter(tmp_path / "adapter")
    router = Router(
        AutoModelForCausalLM.from_pretrained(str(model)).eval(), AutoTokenizer.from_pretrained(str(model)), [card]
    )
    assert card.description in router.prompt("What is the status of my order #W1234567?")
    decision = router.route("What is the status of my order #W1234567?")
    assert set(decision.logits) == {"A", "B"}
    assert decision.capability == (NAME if decision.label == "A" else None)
