"""``grpo-target`` (device scenarios; tau2 with a user played by the local fake endpoint) and
``multi-capability`` through their commands: 2 GRPO steps on the tiny model, adapter and baseline.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trace_envs.baselines import load_baseline_run
from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest

from .conftest import loads_with_peft

pytestmark = pytest.mark.train
SMALL = ["--num-generations", "2", "--batch-size", "2", "--max-completion-length", "16"]


def _record_groups(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[str, int | None]]]:
    """Every rollout batch's (env id, seed) per rollout, seen where GRPO scores it."""
    from trace_envs.training import GroupTracker

    seen: list[list[tuple[str, int | None]]] = []
    original = GroupTracker.__call__

    def spy(self: GroupTracker, *args: Any, **kwargs: Any) -> list[float]:
        seen.append([(env.env_id, env._seed) for env in kwargs["environments"]])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(GroupTracker, "__call__", spy)
    return seen


def test_grpo_target_on_device_scenarios(cli: Any, tiny_model: Path, tmp_path: Path) -> None:
    from trace_envs.routing import CapabilityCard
    from trace_envs.training import load_metadata

    out = tmp_path / "grpo-target"
    args = ["baseline", "grpo-target", "-e", "trace/device-v0", "--model", str(tiny_model), "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--budget", "5", *SMALL])
    assert result.exit_code == 0, result.output
    run = load_baseline_run(out)
    assert (run.method, run.env_ids, run.budget, run.rollouts_used) == ("grpo-target", ["trace/device-v0"], 5, 4)
    assert run.config["max_steps"] == 2 and run.artifact == "adapter"
    meta = load_metadata(out / "adapter")
    assert meta.status == "complete" and meta.steps_done == 2
    assert CapabilityCard.from_adapter(out / "adapter").name == "device_tool_use"
    assert loads_with_peft(tiny_model, out / "adapter").peft_config["default"].r == 16

    refused = CliRunner().invoke(cli, [*args, "--budget", "1", *SMALL])
    assert refused.exit_code == 2 and "1 rollouts do not buy one GRPO step" in refused.output


def test_grpo_target_on_tau2_with_a_model_played_user(
    cli: Any, tiny_model: Path, tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_envs.training import load_metadata

    user_turns: list[FakeRequest] = []

    def user(request: FakeRequest) -> FakeReply:
        user_turns.append(request)
        return FakeReply(content="Hi, I would like to return the lamp from my last order.")

    groups = _record_groups(monkeypatch)
    out = tmp_path / "tau2"
    with FakeModelServer(user) as server:
        result = CliRunner().invoke(
            cli,
            [
                "baseline", "grpo-target", "-e", "trace/tau2-retail-v0", "--model", str(tiny_model),
                "--out", str(out), "--budget", "4", "--user-model", f"openai:{server.openai_url}#fake",
                "--option", f"data_dir={shared_data / 'tau2' / 'retail'}", *SMALL,
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert user_turns, "the LLM user was never asked"
    assert len(groups) == 2 and all(len({seed for _, seed in batch}) == 1 for batch in groups)
    meta = load_metadata(out / "adapter")
    assert meta.capability == "tau2_retail" and meta.example is None  # a target env has no reference solution
    assert meta.config["env_knobs"]["trace/tau2-retail-v0"]["user_model"].startswith("openai:")
    assert load_baseline_run(out).rollouts_used == 4
    loads_with_peft(tiny_model, out / "adapter")


def test_multi_capability_trains_the_allocated_groups_in_order(
    cli: Any, tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_envs.training import load_metadata

    groups = _record_groups(monkeypatch)
    out = tmp_path / "multi"
    envs = ["-e", "trace/order-cancel-v0", "-e", "trace/datetime-v0"]
    result = CliRunner().invoke(
        cli,
        ["baseline", "multi-capability", *envs, "--weights", "1,2", "--model", str(tiny_model), "--out", str(out),
         "--budget", "6", *SMALL],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # 3 groups, 1:2 -> order-cancel 1, datetime 2, interleaved: datetime at 1/4, order-cancel at 1/2, datetime at 3/4
    expected = [("trace/datetime-v0", 0), ("trace/order-cancel-v0", 0), ("trace/datetime-v0", 1)]
    assert [batch[0] for batch in groups] == expected
    assert all(len(set(batch)) == 1 for batch in groups)  # every group: one env, one seed
    run = load_baseline_run(out)
    assert run.rollouts_used == 6 and run.config["groups"] == {"trace/order-cancel-v0": 1, "trace/datetime-v0": 2}
    meta = load_metadata(out / "adapter")
    assert meta.capability == "multi_capability" and "trace/datetime-v0 x2" in meta.description
    loads_with_peft(tiny_model, out / "adapter")

    bad = CliRunner().invoke(
        cli, ["baseline", "multi-capability", *envs, "--weights", "1", "--model", str(tiny_model), "--out", str(out),
              "--budget", "6"],
    )  # fmt: skip
    assert bad.exit_code == 2 and "--weights has 1 value(s) for 2 env(s)" in bad.output
