"""Fingerprints of every shipped capability env's tasks, so a refactor can prove it changed none of them.

For each env id and domain variant and each seed, a fingerprint records short digests of what a user of
the env sees and what the verifier compares: the task id, the opening message, the offered tools and
policy, the initial state, the reference and flawed solutions, the required facts, the gold hash, and
the whole transcript (with the scripted user's replies) and verdict of the reference and flawed plays.

``python -m tests.generated_envs.golden`` rewrites ``data/golden.json``; ``test_golden.py`` compares.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any

import gymnasium as gym

from trace_envs.core import CapabilityEnv, canonical_hash
from trace_envs.registry import env_class, list_capability_envs
from trace_envs.rollout import play_actions

GOLDEN_PATH = Path(__file__).parent / "data" / "golden.json"
SEEDS = range(200)


def variants(env_id: str) -> list[dict[str, Any]]:
    """Constructor kwargs for each domain variant of an env (``[{}]`` for an env without variants)."""
    cls = env_class(env_id)
    assert isinstance(cls, type) and issubclass(cls, CapabilityEnv)
    field = cls.Knobs.model_fields.get("variant")
    if field is None:
        return [{}]
    return [{"variant": value} for value in typing.get_args(field.annotation)]


def targets() -> list[tuple[str, dict[str, Any]]]:
    """Every (shipped capability env id, variant kwargs) pair; target envs are not capability envs' tasks."""
    ids = [env_id for env_id in list_capability_envs() if env_id != "trace/device-v0"]
    return [(env_id, kwargs) for env_id in ids for kwargs in variants(env_id)]


def _digest(value: Any) -> str:
    return canonical_hash(value)[:12]


def _play(env: gym.Env[Any, Any], actions: list[str] | None, seed: int) -> str | None:
    if actions is None:
        return None
    _, info = play_actions(env, actions, seed=seed)
    inner = env.unwrapped
    assert isinstance(inner, CapabilityEnv)
    return _digest({"messages": inner.messages, "verdict": info.get("verdict")})


def fingerprint(env: gym.Env[Any, Any], seed: int) -> dict[str, Any]:
    """Short digests of one seed's task, as seen from outside the env."""
    inner = env.unwrapped
    assert isinstance(inner, CapabilityEnv)
    opening, info = env.reset(seed=seed)
    task = inner.task
    assert task is not None
    oracle, flawed = inner.oracle_actions(), inner.flawed_actions()
    return {
        "task_id": info["task_id"],
        "opening": _digest(opening),
        "offer": _digest({"tools": info["tools"], "policy": info["policy"]}),
        "state": _digest(task.initial_state),
        "oracle": _digest(oracle),
        "flawed": None if flawed is None else _digest(flawed),
        "facts": _digest(sorted(task.required_facts)),
        "gold": inner.gold_hash()[:12],
        "oracle_play": _play(env, oracle, seed),
        "flawed_play": _play(env, flawed, seed),
    }


def key(env_id: str, kwargs: dict[str, Any]) -> str:
    return env_id + "".join(f" {name}={value}" for name, value in sorted(kwargs.items()))


def record(env_id: str, kwargs: dict[str, Any], seeds: range = SEEDS) -> list[dict[str, Any]]:
    env = gym.make(env_id, **kwargs)
    try:
        return [fingerprint(env, seed) for seed in seeds]
    finally:
        env.close()


def main() -> None:
    golden = {key(env_id, kwargs): record(env_id, kwargs) for env_id, kwargs in targets()}
    GOLDEN_PATH.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN_PATH.write_text(json.dumps(golden, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"wrote {sum(map(len, golden.values()))} fingerprints of {len(golden)} envs to {GOLDEN_PATH}", file=sys.stderr
    )


if __name__ == "__main__":
    main()
