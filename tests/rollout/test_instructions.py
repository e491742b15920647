"""Extra instructions for a model policy: they reach the model's system prompt and the episode record,
and a scripted policy (which never reads the prompt) refuses them."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.llm.fake_server import FakeModelServer, order_cancel_agent
from trace_envs.rollout import (
    TrajectoryStore,
    load_episodes,
    make_jobs,
    make_policy,
    policy_factory,
    run_rollouts,
    with_instructions,
)

from .conftest import ENV_ID

pytest.importorskip("openai")

TIP = "Look the order up before you cancel it."


def test_with_instructions_appends_a_block_to_the_system_prompt() -> None:
    messages = [{"role": "system", "content": "<policy>\nP\n</policy>\n"}, {"role": "user", "content": "hi"}]
    out = with_instructions(messages, f"  {TIP}\n")
    assert out[0]["content"] == f"<policy>\nP\n</policy>\n<skill_instructions>\n{TIP}\n</skill_instructions>\n"
    assert out[1] == messages[1] and messages[0]["content"] == "<policy>\nP\n</policy>\n"  # input untouched
    assert with_instructions(messages, " \n") == messages
    bare = with_instructions([{"role": "user", "content": "hi"}], TIP)
    assert bare[0] == {"role": "system", "content": f"<skill_instructions>\n{TIP}\n</skill_instructions>\n"}


def test_model_sees_the_instructions_and_the_record_shows_them(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    with FakeModelServer(order_cancel_agent) as server:
        spec = f"openai:{server.openai_url}#agent-model"
        with TrajectoryStore(path) as store:
            summary = run_rollouts(make_jobs([ENV_ID], range(2)), spec, store=store, instructions=TIP)
        assert summary.episodes == 2 and summary.pass_rate == 1.0
        systems = {r.messages[0]["content"] for r in server.requests}
    assert len(systems) == 1
    (system,) = systems
    assert system.endswith(f"<skill_instructions>\n{TIP}\n</skill_instructions>\n") and "<policy>" in system
    for record in load_episodes(path):
        assert record.messages[0]["content"] == system  # what the model saw, not the env's bare prompt


def test_scripted_policies_refuse_instructions() -> None:
    with pytest.raises(ValueError, match="scripted and never reads the system prompt"):
        policy_factory("oracle", instructions=TIP)
    with pytest.raises(ValueError, match="scripted and never reads the system prompt"):
        make_policy("flawed", instructions=TIP)
    with pytest.raises(ValueError, match="workers > 1 takes no instructions"):
        run_rollouts(make_jobs([ENV_ID], range(2)), "oracle", workers=2, instructions=TIP)
