"""``trace-envs baseline gepa`` offline: the task model and the reflection model are a local fake endpoint
reached through the real OpenAI SDK; the fake agent is correct only when its instructions tell it to look
the order up first, so a better candidate exists and the budget is the only limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.baselines import load_baseline_run
from trace_envs.cli import build_app
from trace_envs.llm.fake_server import FakeModelServer
from trace_envs.rollout import iter_episodes, make_jobs

from .gepa_fakes import TIP, reflection_prompts, responder

pytest.importorskip("gepa")
pytest.importorskip("openai")

ENV_ID = "trace/order-cancel-v0"
BUDGET = 40


def gepa(server: FakeModelServer, out: Path, *extra: str, budget: int = BUDGET) -> object:
    args = [
        "baseline", "gepa", "-e", ENV_ID, "--out", str(out), "--budget", str(budget),
        "--policy", f"openai:{server.openai_url}#agent", "--reflection-model", f"openai:{server.openai_url}#reflector",
        "--train-seeds", "0-9", "--val-seeds", "100-105", "--no-cache", *extra,
    ]  # fmt: skip
    return CliRunner().invoke(build_app(), args, catch_exceptions=False)


def stored_episodes(out: Path) -> list[object]:
    return [record for path in sorted((out / "episodes").glob("*.jsonl")) for record in iter_episodes(path)]


def test_a_better_proposal_is_adopted_within_the_budget_and_a_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "gepa"
    with FakeModelServer(responder(TIP)) as server:
        result = gepa(server, out)
        assert result.exit_code == 0, result.output
        task_requests = sum(1 for r in server.requests if r.tool_names)
        prompts = reflection_prompts(server.requests)
        run = load_baseline_run(out)
        summary = json.loads((out / "candidates.json").read_text())
        # the budget: GEPA's metric calls, our count and the episodes in the stores agree, and stay within it
        episodes = stored_episodes(out)
        assert run.method == "gepa" and run.budget == BUDGET and run.env_ids == [ENV_ID]
        assert len(episodes) == run.rollouts_used == summary["gepa_metric_calls"] == summary["episodes_used"]
        assert run.rollouts_used <= BUDGET
        assert run.rollouts_used > BUDGET - 12  # it stops only when one more iteration (3 + 3 + 6) might not fit
        # the proposal raised the validation score from the careless agent's 0.5 to 1.0 and was adopted
        best = summary["candidates"][summary["best_index"]]
        assert best["components"] == {"precondition_verification": TIP} and best["val_score"] == 1.0
        assert summary["candidates"][0]["val_score"] == 0.5 and best["parents"] == [0]
        assert (out / run.artifact).read_text() == TIP + "\n" and run.artifact == "best_instructions.txt"
        # the reflection read transcripts and verdicts, and the policy saw the instructions in its system prompt
        assert prompts and "cancel_order" in prompts[0] and "final database state differs" in prompts[0]
        adopted = [r for r in iter_episodes(out / best["episodes"])]
        assert adopted and all(TIP in r.messages[0]["content"] for r in adopted)
        assert all("<skill_instructions>" in r.messages[0]["content"] for r in adopted)
        assert f"{run.rollouts_used} of {BUDGET} episodes used" in " ".join(result.output.split())

        again = gepa(server, out)  # same search, same endpoint: every episode is in the stores already
        assert again.exit_code == 0, again.output
        assert sum(1 for r in server.requests if r.tool_names) == task_requests
    resumed = json.loads((out / "candidates.json").read_text())
    assert resumed["episodes_rolled_out"] == 0 and resumed["episodes_from_earlier_runs"] == run.rollouts_used
    assert len(stored_episodes(out)) == run.rollouts_used


def test_a_worse_proposal_is_not_adopted_and_the_smallest_budget_holds(tmp_path: Path) -> None:
    from trace_envs.baselines.gepa import GepaConfig, run_gepa

    with FakeModelServer(responder("Be polite and brief.")) as server:
        config = GepaConfig(
            env_ids=[ENV_ID],
            policy=f"openai:{server.openai_url}#agent",
            reflection_model=f"openai:{server.openai_url}#reflector",
            budget=18,
            train_seeds=list(range(10)),
            val_seeds=list(range(100, 106)),
        )
        assert config.minimum_budget() == 18
        outcome = run_gepa(config, tmp_path)
    assert outcome.best_score == outcome.seed_score == 0.5
    assert "Be polite" not in outcome.best_instructions and "refusing when it is not" in outcome.best_instructions
    assert outcome.run.rollouts_used <= 18 and len(stored_episodes(tmp_path)) == outcome.run.rollouts_used


def test_the_budget_refuses_episodes_past_it(tmp_path: Path) -> None:
    from trace_envs.baselines.gepa_adapter import BudgetExceeded, EpisodeBudget, RolloutAdapter
    from trace_envs.llm import make_chat_model

    budget = EpisodeBudget(5)
    budget.take(3)
    with pytest.raises(BudgetExceeded, match="only 2 of the budget of 5"):
        budget.take(3)
    assert budget.used == 3
    adapter = RolloutAdapter(
        make_chat_model("openai:http://127.0.0.1:9/v1#never"), episodes_dir=tmp_path, budget=budget
    )
    with pytest.raises(BudgetExceeded):
        adapter.evaluate(make_jobs([ENV_ID], range(3)), {"c": "text"})
    assert not list(tmp_path.iterdir())  # refused before any episode


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--budget", "17"), "budget 17 fits no GEPA iteration"),
        (("--policy", "oracle"), "scripted and never reads the system prompt"),
        (("--capability", "no_such_capability"), "no_such_capability"),
        (("-e", "trace/device-v0"), "declares no capability"),
        (("--minibatch", "11"), "larger than the training set"),
    ],
)
def test_usage_errors_are_one_line_before_any_episode(tmp_path: Path, extra: tuple[str, ...], message: str) -> None:
    server = FakeModelServer(responder(TIP))  # never started: nothing may be asked of it
    base = {"-e": ENV_ID, "--budget": "40", "--policy": f"openai:{server.openai_url}#agent"}
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        base[flag] = value
    args = ["baseline", "gepa", "--out", str(tmp_path / "o"), "--reflection-model", "openai:http://127.0.0.1:9/v1#r"]
    for flag, value in base.items():
        args += [flag, value]
    args += ["--train-seeds", "0-9", "--val-seeds", "100-105", "--no-cache"]
    result = CliRunner().invoke(build_app(), args, catch_exceptions=False)
    server.stop()
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.replace("│", " ").split())
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()


def test_without_the_gepa_extra_the_command_names_it(tmp_path: Path) -> None:
    from tests.cli.test_missing_extras import run_blocked

    args = ["baseline", "gepa", "-e", ENV_ID, "--policy", "openai:http://127.0.0.1:9/v1#a", "--budget", "40"]
    args += ["--reflection-model", "openai:http://127.0.0.1:9/v1#r", "--out", "o"]
    code = f"sys.argv = ['trace-envs', *{args!r}]\nfrom trace_envs.cli import main\nmain()\n"
    result = run_blocked(["gepa"], code, tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "trace-envs baseline gepa: needs the 'gepa' extra (gepa is not installed): pip install \"trace-envs[gepa]\""
    )
    assert not (tmp_path / "o").exists()


def test_a_failing_reflection_model_stops_the_search_and_exits_1(tmp_path: Path) -> None:
    from trace_envs.llm.fake_server import FakeReply, FakeRequest

    from .gepa_fakes import careless_or_careful_agent

    def broken_reflection(request: FakeRequest) -> FakeReply:
        if request.tool_names:
            return careless_or_careful_agent(request)
        return FakeReply(status=400, error="model not loaded")

    out = tmp_path / "gepa"
    with FakeModelServer(broken_reflection) as server:
        result = gepa(server, out)
    text = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "the reflection model failed" in text and "model not loaded" in text
    run = load_baseline_run(out)
    # seed validation (6) and one minibatch (3): the search stopped at the next check, not at the budget
    assert run.rollouts_used == 9 == len(stored_episodes(out))
    assert json.loads((out / "candidates.json").read_text())["reflection"]["error"].startswith("BadRequest")
