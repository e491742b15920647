"""The property suite passes on every registered env and catches each kind of broken env."""

from __future__ import annotations

import random

import gymnasium as gym
import pytest

from generated_envs.order_cancel import OrderCancelEnv
from trace_envs.core import Task
from trace_envs.registry import list_capability_envs
from trace_envs.rollout import play_actions
from trace_envs.testing import check_capability_env, make_env, property_checks
from trace_envs.testing.properties import (
    CANNED_ANSWERS,
    check_adversarial_junk_fails,
    check_any_action_is_safe,
    check_constant_answer_fails,
    check_oracle_solves,
    constant_answers,
)

from .broken_envs import BROKEN, broken_env_id

SHIPPED = list_capability_envs()


@pytest.mark.parametrize("env_id", SHIPPED)
def test_every_registered_env_passes_the_suite(env_id: str) -> None:
    report = check_capability_env(env_id, seeds=range(200), fuzz_examples=60)
    assert report.passed
    assert {r.name for r in report.results} == set(property_checks(env_id, [0]))


@pytest.mark.parametrize("prop", sorted(BROKEN))
def test_the_suite_catches_a_broken_env(prop: str) -> None:
    env_id = broken_env_id(prop)
    report = check_capability_env(env_id, seeds=range(12), fuzz_examples=40, raise_on_failure=False)
    failed = {r.name for r in report.failures()}
    assert prop in failed, f"{prop} did not catch {env_id}; failures were {failed}"


def test_failures_raise_with_every_failing_property_named() -> None:
    with pytest.raises(AssertionError, match="oracle_solves"):
        check_capability_env(broken_env_id("oracle_solves"), seeds=range(4), subprocess=False, fuzz_examples=5)


def test_no_seeds_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least one seed"):
        check_capability_env("trace/order-cancel-v0", seeds=[])


def test_constant_answers_are_the_envs_own_messages_and_canned_ones() -> None:
    env = make_env("trace/order-cancel-v0")
    candidates = constant_answers(env, range(12, 22))
    own: list[str] = []
    for seed in range(12, 22):
        env.reset(seed=seed)
        own += [a for a in [*env.oracle_actions(), *(env.flawed_actions() or [])] if not a.startswith("{")]
    assert candidates == list(dict.fromkeys([*own, *CANNED_ANSWERS]))
    assert any("already processed" in c for c in candidates)  # a refusal of the env's own


def test_a_constant_answer_failure_names_the_message_and_the_seeds() -> None:
    with pytest.raises(AssertionError, match=r"the worst, .*cannot be cancelled.*, wins [1-9]\d* \(e\.g\. seeds \["):
        check_constant_answer_fails(broken_env_id("constant_answer_fails"), range(12))
    check_constant_answer_fails("trace/order-cancel-v0", range(12))  # the same env with the read rule passes


def test_the_fuzz_tries_the_same_actions_for_the_same_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis draws from the suite's seed: a broken env is caught on every run or on none (its
    draws were random, and the crashing env slipped through about 1 run in 150)."""
    from generated_envs.order_cancel import OrderCancelEnv

    tried: list[object] = []
    step = OrderCancelEnv.step

    def recording_step(self: OrderCancelEnv, action: object) -> object:
        tried.append(action)
        return step(self, action)

    monkeypatch.setattr(OrderCancelEnv, "step", recording_step)
    runs = []
    for _ in range(2):
        tried.clear()
        check_any_action_is_safe("trace/order-cancel-v0", examples=15, seed=3)
        runs.append(list(tried))
    assert runs[0] == runs[1] and len(runs[0]) >= 15


def test_an_adversarial_junk_failure_names_the_policy_and_the_seeds() -> None:
    with pytest.raises(AssertionError, match=r"the 'lookups, then every candidate answer' policy wins [1-9]\d* of 12"):
        check_adversarial_junk_fails(broken_env_id("adversarial_junk_fails"), range(12))
    check_adversarial_junk_fails("trace/order-cancel-v0", range(12))  # the same env forbidding contradictions


def test_a_told_forbidden_fact_fails_the_task_and_the_verdict_says_which() -> None:
    env = make_env("trace/order-cancel-v0")
    seed = next(s for s in range(50) if not (env.reset(seed=s) and env.current_task.metadata["eligible"]))
    env.reset(seed=seed)
    status = env.current_task.metadata["status"]
    other = next(s for s in ("processed", "delivered") if s != status)
    lookup, *_ = env.oracle_actions()
    reward, info = play_actions(env, [lookup, f"It is {status}, or maybe {other}; it cannot be cancelled."], seed=seed)
    assert reward == 0.0
    assert info["verdict"]["facts_contradicted"] == {other: True}
    assert info["verdict"]["facts_told"] == {status: True} and info["verdict"]["hash_match"]


class _RoundedFactEnv(OrderCancelEnv):
    """Requires the fact "27.6" that its reference message states as "27.65" (the real model's case)."""

    def generate(self, rng: random.Random) -> Task:
        task = super().generate(rng)
        solution = [*task.solution[:-1], "Your refund is 27.65 dollars."]
        return task.model_copy(update={"solution": solution, "required_facts": ["27.6"], "required_reads": []})


def test_an_oracle_failure_names_the_fact_the_messages_and_the_matching_rule() -> None:
    if "tracetest/rounded-fact-v0" not in gym.registry:
        gym.register(id="tracetest/rounded-fact-v0", entry_point=f"{__name__}:_RoundedFactEnv")
    with pytest.raises(AssertionError) as caught:
        check_oracle_solves("tracetest/rounded-fact-v0", range(3))
    message = str(caught.value)
    assert "the required fact '27.6' is in none of the messages" in message
    assert "'Your refund is 27.65 dollars.'" in message  # the message that should have held it
    assert "'27.6' is not told by '27.65'" in message and "Fix:" in message


def test_common_facts_are_the_values_other_seeds_share_never_a_seeds_own_alone() -> None:
    """Issue 34: the gaming policy's candidates include the facts common to the seeds played, so a verifier that
    pays whoever names every status it uses is found; a value only the seed itself holds is never handed over."""
    from trace_envs.testing.properties import common_facts

    facts = {0: ["delivered"], 1: ["processed"], 2: ["delivered"], 3: ["processed", "only mine"], 4: ["delivered"]}
    assert common_facts(facts, 3, share=0.05) == ["delivered"]  # "processed" is held by one other seed only
    assert sorted(common_facts(facts | {5: ["processed"]}, 0, share=0.05)) == ["delivered", "processed"]
    assert "only mine" not in common_facts(facts | {6: ["only mine"]}, 3, share=0.05)


def test_the_stuffing_after_json_lookups_is_a_message_to_the_user() -> None:
    """It started with a lookup's JSON result, so the env read it as a malformed tool call and the gaming policy
    never said anything: a verifier that pays "look up, then list every status" passed (issue 34)."""
    from trace_envs.core import parse_action
    from trace_envs.testing.properties import adversarial_policies

    env = make_env("trace/order-cancel-v0")
    env.reset(seed=1)
    for actions in adversarial_policies(env, 1, ["processed", "delivered"]).values():
        assert parse_action(actions[-1]).is_message
