"""Fixtures for analysis tests: hand-built episodes, and scripted rollouts of every shipped capability
env (oracle and ``flawed:<capability>``) generated once per session."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import pytest

from trace_envs.rollout.store import EpisodeRecord

os.environ.setdefault("OMP_NUM_THREADS", "1")

SEEDS = range(12)


def episode(
    user: str | list[str],
    steps: list[Any],
    *,
    success: bool = False,
    seed: int = 0,
    env_id: str = "trace/hand-built-v0",
) -> EpisodeRecord:
    """An episode from a compact script: ``("call", name, args, result[, error])`` or ``("say", text)``
    or ``("user", text)``. Results that are not strings are JSON-encoded."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": u} for u in ([user] if isinstance(user, str) else user)
    ]
    for index, step in enumerate(steps):
        if step[0] == "call":
            _, name, arguments, result, *error = step
            call_id = f"call_{index}"
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}],
                }
            )
            text = result if isinstance(result, str) else json.dumps(result)
            messages.append(
                {"role": "tool", "id": call_id, "name": name, "content": text, "error": bool(error and error[0])}
            )
        elif step[0] == "say":
            messages.append({"role": "assistant", "content": step[1]})
        else:
            messages.append({"role": "user", "content": step[1]})
    return EpisodeRecord(
        env_id=env_id, seed=seed, policy="hand", messages=messages, success=success, reward=float(success)
    )


def shipped_capability_envs() -> dict[str, str]:
    """Registered capability envs whose capability is one of the six known ones: env id -> capability."""
    import trace_envs  # noqa: F401
    from generated_envs import SHIPPED_ENVS
    from trace_envs.analysis import known_capabilities
    from trace_envs.registry.capabilities import capability_envs

    known = known_capabilities()
    found = [(env_id, name) for name, ids in capability_envs().items() for env_id in ids if name in known]
    return {env_id: name for env_id, name in sorted(found) if env_id in SHIPPED_ENVS}


def variants(env_id: str) -> list[dict[str, Any]]:
    """Constructor options for each domain variant an env offers (its ``variant`` knob), else ``[{}]``."""
    from typing import get_args

    from trace_envs.registry import env_class

    knobs = getattr(env_class(env_id), "Knobs", None)
    field = getattr(knobs, "model_fields", {}).get("variant")
    choices = get_args(field.annotation) if field is not None else ()
    return [{"variant": v} for v in choices] or [{}]


@pytest.fixture(scope="session")
def capability_rollouts() -> dict[tuple[str, str], list[EpisodeRecord]]:
    """(env id, 'oracle' | 'flawed') -> episodes over ``SEEDS`` for every domain variant of the env."""
    import gymnasium as gym

    from trace_envs.rollout import make_policy, run_episode

    out: dict[tuple[str, str], list[EpisodeRecord]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for env_id, capability in shipped_capability_envs().items():
            for options in variants(env_id):
                env = gym.make(env_id, disable_env_checker=True, **options)
                for kind, spec in (("oracle", "oracle"), ("flawed", f"flawed:{capability}")):
                    for seed in SEEDS:
                        record = run_episode(env, make_policy(spec, seed=seed), env_id=env_id, seed=seed)
                        record.metadata["env_kwargs"] = options
                        record.sample = len(out.get((env_id, kind), []))  # unique key across variants
                        out.setdefault((env_id, kind), []).append(record)
                env.close()
    return out


def planted_store(
    rollouts: dict[tuple[str, str], list[EpisodeRecord]], planted: set[str], envs: dict[str, str]
) -> list[EpisodeRecord]:
    """An agent with the planted deficits that shows them some of the time: every env's reference
    episodes, plus the ``flawed:<planted…>`` episodes (flawed on envs of a planted capability, the
    reference solution elsewhere)."""
    records = []
    for env_id, capability in envs.items():
        records += rollouts[(env_id, "oracle")]
        flawed = rollouts[(env_id, "flawed" if capability in planted else "oracle")]
        records += [r.model_copy(update={"policy": "flawed:" + ",".join(sorted(planted))}) for r in flawed]
    return records
