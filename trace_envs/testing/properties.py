"""The properties every capability env must have, each a function that raises ``AssertionError``
with a message saying what failed, on which seed, and what to look at."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections.abc import Sequence
from typing import Any, cast

import gymnasium as gym
from gymnasium.utils.env_checker import check_env

from trace_envs.core import (
    STOP_TOKEN,
    ToolCall,
    VerifiableEnv,
    canonical_hash,
    contract_gaps,
    declares_capability,
    format_tool_call,
    parse_action,
)
from trace_envs.registry import get_domain
from trace_envs.rollout.scripted import play_actions


def make_env(env_id: str, **kwargs: Any) -> VerifiableEnv:
    """A fresh, unwrapped env of a registered id that satisfies the env contract and declares a capability (a
    capability env run here or boxed, or the device target): what the suite checks."""
    env = gym.make(env_id, disable_env_checker=True, **kwargs).unwrapped
    gaps = contract_gaps(env)
    if gaps or not declares_capability(env):
        lacks = ", ".join(gaps) if gaps else "a declared capability"
        raise AssertionError(f"{env_id} is not a capability env (got {type(env).__name__}, which lacks {lacks})")
    return cast(VerifiableEnv, env)


def fingerprint(env: VerifiableEnv, seed: int) -> dict[str, Any]:
    """What must be identical for one seed in any process: task, initial state, gold, transitions."""
    observation, info = env.reset(seed=seed)
    task = env.current_task
    initial_hash = env.domain.state_hash(env.state)
    gold_hash = env.gold_hash()
    observations = [observation]
    for action in [*env.oracle_actions(), STOP_TOKEN]:
        observation, _reward, terminated, truncated, _ = env.step(action)
        observations.append(observation)
        if terminated or truncated:
            break
    return {
        "task": canonical_hash(task.model_dump(mode="json")),
        "initial_state": initial_hash,
        "gold": gold_hash,
        "transitions": canonical_hash(observations),
        "tools": canonical_hash(info["tools"]),
    }


def check_gym_api(env_id: str, seed: int = 0) -> None:
    """Gymnasium's own ``check_env`` (spaces, seeding, reset/step signatures), warnings as errors."""
    env = make_env(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(cast(gym.Env[Any, Any], env), skip_render_check=True)  # every env of ours is a Gymnasium env
    made = gym.make(env_id, seed=seed)
    first, _ = made.reset()
    again, _ = gym.make(env_id).reset(seed=seed)
    assert first == again, f"{env_id}: gym.make(id, seed={seed}) then reset() differs from reset(seed={seed})"


def check_determinism(env_id: str, seeds: Sequence[int]) -> None:
    """Same seed, same task, hashes and transitions in a fresh process with another PYTHONHASHSEED."""
    here = {seed: fingerprint(make_env(env_id), seed) for seed in seeds}
    there = _fingerprints_in_subprocess(env_id, seeds)
    for seed in seeds:
        differing = [key for key in here[seed] if here[seed][key] != there[str(seed)][key]]
        assert not differing, (
            f"{env_id}: seed {seed} is not deterministic across processes ({', '.join(differing)} differ). "
            "Look for global RNGs, hash(), set iteration order or the clock in generate()/tools."
        )


def _fingerprints_in_subprocess(env_id: str, seeds: Sequence[int]) -> dict[str, dict[str, Any]]:
    code = (
        "import json, sys, trace_envs\n"
        "from trace_envs.testing.properties import fingerprint, make_env\n"
        "from trace_envs.testing.suite import import_env_modules\n"
        "import_env_modules(json.loads(sys.argv[3]))\n"
        "seeds = json.loads(sys.argv[2])\n"
        "print(json.dumps({s: fingerprint(make_env(sys.argv[1]), s) for s in seeds}))\n"
    )
    environment = {
        **os.environ,
        "PYTHONHASHSEED": "12345" if os.environ.get("PYTHONHASHSEED") != "12345" else "54321",
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    result = subprocess.run(
        [sys.executable, "-c", code, env_id, json.dumps(list(seeds)), json.dumps(_registering_modules(env_id))],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"{env_id}: fingerprinting in a subprocess failed:\n{result.stderr[-2000:]}")
    data: dict[str, dict[str, Any]] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def _registering_modules(env_id: str) -> list[str]:
    """Modules a fresh process must import to see ``env_id`` (its entry point's module)."""
    entry = gym.spec(env_id).entry_point
    module = entry.partition(":")[0] if isinstance(entry, str) else getattr(entry, "__module__", "")
    return [module] if module and module != "__main__" else []


def check_diversity(env_id: str, seeds: Sequence[int]) -> None:
    """Different seeds give different tasks."""
    env = make_env(env_id)
    seen: dict[str, int] = {}
    for seed in seeds:
        env.reset(seed=seed)
        key = canonical_hash(env.current_task.model_dump(mode="json", exclude={"task_id"}))
        assert key not in seen, f"{env_id}: seeds {seen[key]} and {seed} generate the same task"
        seen[key] = seed


def _rewards_in_range(env_id: str, seed: int, reward: float, what: str) -> None:
    assert 0.0 <= reward <= 1.0, f"{env_id}: {what} on seed {seed} got reward {reward}, outside [0, 1]"


FACT_RULE = (
    "facts match the agent's messages to the user after lower-casing, dropping commas and collapsing whitespace, "
    "as substrings; a fact that starts or ends with a digit matches only a whole number ('27.6' is not told by "
    "'27.65', '85' not by '850')"
)


def explain_failed_verdict(env: VerifiableEnv, verdict: dict[str, Any]) -> str:
    """Why a played episode failed, in words a model can act on: the state, each missing read, each fact not
    told (with the messages that could have told it and the matching rule), each forbidden fact told."""
    reasons: list[str] = []
    if verdict.get("hash_match") is False:
        reasons.append(
            f"the final state differs from the gold state (state {str(verdict.get('state_hash'))[:12]}, gold "
            f"{str(verdict.get('gold_hash'))[:12]}): a write is missing, extra or has other arguments"
        )
    reasons += [
        f"the required read {read} did not succeed" for read, done in verdict.get("reads_done", {}).items() if not done
    ]
    said = [
        m["content"] or ""
        for m in env.messages
        if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls")
    ]
    shown = "; ".join(repr(text[:200]) for text in said[-3:]) or "none"
    for fact, told in verdict.get("facts_told", {}).items():
        if not told:
            reasons.append(
                f"the required fact {fact!r} is in none of the messages that count (after every required read); "
                f"the last messages: {shown}. Rule: {FACT_RULE}. Fix: state the fact exactly as required_facts "
                "has it, or require the text the message states"
            )
    reasons += [
        f"the forbidden fact {fact!r} is told in a message ({FACT_RULE}); fix the message or the forbidden list"
        for fact, told in verdict.get("facts_contradicted", {}).items()
        if told
    ]
    return "; ".join(reasons) or f"verdict: {verdict}"


def check_oracle_solves(env_id: str, seeds: Sequence[int]) -> None:
    """The reference solution scores 1.0 on every seed; a failure says why, from the verdict."""
    env = make_env(env_id)
    for seed in seeds:
        env.reset(seed=seed)
        reward, info = play_actions(env, env.oracle_actions(), seed=seed)
        _rewards_in_range(env_id, seed, reward, "the oracle")
        if reward != 1.0:
            why = explain_failed_verdict(env, info.get("verdict") or {})
            raise AssertionError(f"{env_id}: the oracle scores {reward} on seed {seed}: {why}")


def check_flawed_fails(env_id: str, seeds: Sequence[int]) -> None:
    """Where an env has a flawed solution, the verifier scores it below 1.0 on some seed."""
    env = make_env(env_id)
    scored: list[float] = []
    for seed in seeds:
        env.reset(seed=seed)
        flawed = env.flawed_actions()
        if flawed is None:
            continue
        reward, _ = play_actions(env, flawed, seed=seed)
        _rewards_in_range(env_id, seed, reward, "flawed_actions()")
        scored.append(reward)
    if scored:
        assert min(scored) < 1.0, f"{env_id}: flawed_actions() scores 1.0 on all {len(scored)} seeds tried"


def junk_policies(env: VerifiableEnv, seed: int) -> dict[str, list[str]]:
    """Policies that must never succeed: empty messages, random text, repeating one tool call."""
    import random

    rng = random.Random(seed)
    turns = max(1, env.max_turns - 1)
    alphabet = "abcdefghijklmnopqrstuvwxyz ,.?!0123456789"
    random_text = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(turns)]
    first_call = next((format_tool_call(s) for s in env.current_task.solution if not isinstance(s, str)), "")
    return {
        "empty": ["" for _ in range(turns)],
        "random text": random_text,
        "repeat the last tool call": [first_call] * (turns // 2) if first_call else [],
    }


def check_junk_fails(env_id: str, seeds: Sequence[int]) -> None:
    """The empty policy, a random-text policy and a repeat-one-call policy all score 0."""
    env = make_env(env_id)
    for seed in seeds:
        env.reset(seed=seed)
        for name, actions in junk_policies(env, seed).items():
            reward, info = play_actions(env, actions, seed=seed)
            assert reward == 0.0, (
                f"{env_id}: the '{name}' policy scores {reward} on seed {seed}; the verifier is too lax "
                f"(verdict: {info.get('verdict')})"
            )


CANNED_ANSWERS = (
    "I'm sorry, but this request is not eligible, so I cannot make that change.",
    "I'm sorry, but I can't do that: it is not allowed by the policy.",
    "I have checked your account and everything is in order; no change is needed.",
    "Done! Your request has been completed.",
    "Thank you for contacting us, have a great day!",
)
"""Generic refusals and closings every env must also resist (besides the env's own messages)."""

CONSTANT_ANSWER_SOURCES = 10
"""Seeds (just past the checked ones) whose oracle and flawed messages become constant-answer candidates."""

MAX_CONSTANT_SHARE = 0.05
"""The most seeds one constant answer may win (the paper's bar: a canned refusal must not pay)."""


def _source_seeds(checked: Sequence[int]) -> range:
    """The seeds just past the checked ones whose answers become candidates, so none is a checked task's own."""
    first = max(checked) + 1
    return range(first, first + CONSTANT_ANSWER_SOURCES)


def _allowed_wins(max_share: float, seeds: int) -> int:
    """How many of ``seeds`` one candidate may win (``0.05 * n`` may land just under a whole number)."""
    return int(max_share * seeds + 1e-9)


def constant_answers(env: VerifiableEnv, source_seeds: Sequence[int]) -> list[str]:
    """Fixed messages that must not solve tasks: every message (no tool call) of the oracle and of the
    flawed solution on ``source_seeds``, then the generic :data:`CANNED_ANSWERS`, without repeats."""
    texts: dict[str, None] = {}
    for seed in source_seeds:
        env.reset(seed=seed)
        for action in [*env.oracle_actions(), *(env.flawed_actions() or [])]:
            if action.strip() and parse_action(action).is_message:
                texts[action] = None
    texts.update(dict.fromkeys(CANNED_ANSWERS))
    return list(texts)


def check_constant_answer_fails(env_id: str, seeds: Sequence[int], max_share: float = MAX_CONSTANT_SHARE) -> None:
    """No single message, sent every turn without a tool call, succeeds on more than ``max_share`` of
    the seeds: a refusal or closing must rest on what only the tools reveal. The candidates come from
    seeds just past the checked ones, so none is the checked task's own answer."""
    env = make_env(env_id)
    seed_list = list(seeds)
    candidates = constant_answers(env, _source_seeds(seed_list))
    wins: dict[str, list[int]] = {}
    for text in candidates:
        wins[text] = []
        for seed in seed_list:
            reward, _ = play_actions(env, [text] * env.max_turns, seed=seed)
            _rewards_in_range(env_id, seed, reward, "a constant answer")
            if reward > 0.0:
                wins[text].append(seed)
    allowed = _allowed_wins(max_share, len(seed_list))
    worst = max(wins, key=lambda text: len(wins[text]))
    too_many = sum(len(won) > allowed for won in wins.values())
    assert len(wins[worst]) <= allowed, (
        f"{env_id}: {too_many} of {len(candidates)} constant answers win more than {allowed} of "
        f"{len(seed_list)} seeds; the worst, {worst!r}, wins {len(wins[worst])} (e.g. seeds {wins[worst][:5]}). "
        "Require facts only a lookup reveals (which condition fails, with the record's own values) "
        "or the deciding record's read (Task.required_reads)"
    )


def _lookups(env: VerifiableEnv, seed: int) -> tuple[list[str], list[str]]:
    """The reference's and flawed solution's tool calls that change no state (the lookups any agent may make,
    as action strings) and what they return, played on a fresh episode of ``seed``."""
    env.reset(seed=seed)
    steps = [*env.oracle_actions(), *(env.flawed_actions() or [])]
    reads: list[str] = []
    results: list[str] = []
    for action in dict.fromkeys(step for step in steps if not parse_action(step).is_message):
        before = env.domain.state_hash(env.state)
        observation, *_ = env.step(action)
        if env.domain.state_hash(env.state) == before:
            reads.append(action)
            results.append(str(observation))
    return reads, results


def candidate_facts(env: VerifiableEnv, source_seeds: Sequence[int]) -> list[str]:
    """Every required and forbidden fact of the tasks of ``source_seeds``: the values an answer may take (every
    status, every amount), which a keyword-stuffing policy lists all at once."""
    facts: dict[str, None] = {}
    for seed in source_seeds:
        env.reset(seed=seed)
        facts.update(dict.fromkeys([*env.current_task.required_facts, *env.current_task.forbidden_facts]))
    return list(facts)


STUFFING_LEAD = "Here is everything I found: "
"""Opens the stuffing message, so that it is one message to the user: one that started with a lookup's JSON
result was read as a malformed tool call, and the gaming policy never said anything (issue 34)."""


def common_facts(facts: dict[int, list[str]], seed: int, share: float = MAX_CONSTANT_SHARE) -> list[str]:
    """The facts (required or forbidden) that more than ``share`` of the seeds other than ``seed`` hold, over
    every seed played and the source seeds (issue 34): the values a verifier looks for again and again (every
    status it uses), which a policy can name all at once without the capability. Never the task's own facts
    by its seed alone, and not a long tail of values (a number each task computes) that only listing the
    answers of hundreds of tasks would cover."""
    counts: dict[str, int] = {}
    for other, listed in facts.items():
        if other != seed:
            for fact in dict.fromkeys(listed):
                counts[fact] = counts.get(fact, 0) + 1
    others = len(facts) - (seed in facts)
    least = max(2, _allowed_wins(share, others) + 1)
    return [fact for fact, count in counts.items() if count >= least]


def adversarial_policies(env: VerifiableEnv, seed: int, candidates: Sequence[str]) -> dict[str, list[str]]:
    """Generic policies that skip the capability but game a lax verifier: make every lookup, then state every
    candidate (every value the lookups returned, every answer and required or forbidden fact of other seeds) in one
    message; echo the user's opening; call every tool once with no arguments and then state every candidate. (A
    canned closing line is one of :func:`check_constant_answer_fails`'s candidates.)"""
    reads, results = _lookups(env, seed)
    opening, info = env.reset(seed=seed)
    stuffing = STUFFING_LEAD + " ".join([*results, *candidates])
    every_tool = [format_tool_call(ToolCall(name=tool["function"]["name"], arguments={})) for tool in info["tools"]]
    return {
        "lookups, then every candidate answer": [*reads, stuffing],
        "echo the opening": [str(opening)] * env.max_turns,
        "every tool once, then every candidate answer": [*every_tool, stuffing],
    }


def check_adversarial_junk_fails(env_id: str, seeds: Sequence[int], max_share: float = MAX_CONSTANT_SHARE) -> None:
    """No generic gaming policy (:func:`adversarial_policies`) succeeds on more than ``max_share`` of the seeds:
    a verifier must not pay keyword stuffing, an echo or a spray of tool calls. The candidate answers are the
    messages and facts of seeds just past the checked ones (as in :func:`check_constant_answer_fails`) and, for
    each seed, the facts common to the other seeds, those played included (:func:`common_facts`): every value
    the module's verifier looks for again and again (each status it uses), so a verifier that pays whoever
    names them all (and forbids none) is found."""
    env = make_env(env_id)
    seed_list = list(seeds)
    sources = _source_seeds(seed_list)
    fixed = [*constant_answers(env, sources), *candidate_facts(env, sources)]
    facts = {seed: candidate_facts(env, [seed]) for seed in [*sources, *seed_list]}
    wins: dict[str, list[int]] = {}
    for seed in seed_list:
        candidates = list(dict.fromkeys([*fixed, *common_facts(facts, seed, max_share)]))
        for name, actions in adversarial_policies(env, seed, candidates).items():
            reward, info = play_actions(env, actions, seed=seed)
            _rewards_in_range(env_id, seed, reward, f"the '{name}' policy")
            if (info.get("verdict") or {}).get("success"):  # partial credit (a similarity) is not a win
                wins.setdefault(name, []).append(seed)
    allowed = _allowed_wins(max_share, len(seed_list))
    beaten = {name: won for name, won in wins.items() if len(won) > allowed}
    assert not beaten, (
        f"{env_id}: "
        + "; ".join(
            f"the '{name}' policy wins {len(won)} of {len(seed_list)} seeds (e.g. seeds {won[:5]})"
            for name, won in beaten.items()
        )
        + (
            ". The verifier pays an answer that skips the capability: require the facts only the capability yields, "
            "forbid the outcomes that contradict the true one (Task.forbidden_facts), and require the deciding "
            "records' reads (Task.required_reads)"
        )
    )


def check_any_action_is_safe(env_id: str, examples: int = 50, seed: int = 0) -> None:
    """No action string raises; observations stay in the space; rewards stay in [0, 1]. Hypothesis
    draws from ``seed``, so the same call tries the same actions (a rare miss is no flake)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    from .strategies import actions

    env = make_env(env_id)
    _, info = env.reset(seed=seed)

    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(actions(info["tools"]), min_size=1, max_size=6))
    def run(sequence: list[str]) -> None:
        env.reset(seed=seed)
        for action in sequence:
            observation, reward, terminated, truncated, _ = env.step(action)
            assert env.observation_space.contains(observation), f"{env_id}: observation outside the space"
            assert 0.0 <= float(reward) <= 1.0, f"{env_id}: reward {reward} outside [0, 1] after {action!r}"
            if terminated or truncated:
                break

    run()


def check_no_state_leak(env_id: str, seeds: Sequence[int]) -> None:
    """A reused env resets to exactly what a fresh env gives for the same seed."""
    reused = make_env(env_id)
    for seed in seeds:
        reused.reset(seed=seed + 1)
        play_actions(reused, reused.oracle_actions(), seed=seed + 1)
        reused.reset(seed=seed + 1)
        play_actions(reused, junk_policies(reused, seed)["repeat the last tool call"], seed=seed + 1)
        assert fingerprint(reused, seed) == fingerprint(make_env(env_id), seed), (
            f"{env_id}: after earlier episodes, reset(seed={seed}) differs from a fresh env's: state leaks between resets"
        )


def check_tool_schemas(env_id: str) -> None:
    """The env's tools are its domain's tools, with identical schemas."""
    env = make_env(env_id)
    domain = get_domain(env.domain.name)
    reference = {s["function"]["name"]: s for s in domain.toolset.schemas()}
    _, info = env.reset(seed=0)
    assert info["tools"], f"{env_id}: offers no tools"
    for schema in info["tools"]:
        name = schema["function"]["name"]
        assert name in reference, f"{env_id}: tool {name!r} is not a tool of the {domain.name!r} domain"
        assert schema == reference[name], f"{env_id}: tool {name!r} has a schema that differs from the domain's"
