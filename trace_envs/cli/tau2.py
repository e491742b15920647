"""``trace-envs tau2-replay | tau2-evaluate``: check tau2 data by replaying gold actions; score external trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .app import app

console = Console()

BASIS_HELP = "Comma-separated reward basis (DB, ENV_ASSERTION, NL_ASSERTION, ACTION, COMMUNICATE) or 'task'."
DomainDirArgument = Annotated[Path, typer.Argument(help="A tau2 domain folder with db.json, tasks.json and policy.md.")]
DomainOption = Annotated[str | None, typer.Option(help="retail or airline (default: the folder's name).")]
RewardBasisOption = Annotated[str, typer.Option("--reward-basis", help=BASIS_HELP)]
JudgeOption = Annotated[str | None, typer.Option(help="Model spec of the NL-assertion judge, if the basis needs one.")]


def _domain_name(domain_dir: Path, domain: str | None) -> str:
    name = domain or domain_dir.name
    if name not in ("retail", "airline"):
        raise typer.BadParameter(
            f"cannot tell the tau2 domain of {domain_dir} (folder name {domain_dir.name!r}); pass --domain retail|airline",
            param_hint="--domain",
        )
    return name


def _setup(domain_dir: Path, domain: str | None, reward_basis: str, judge: str | None) -> tuple[Any, Any, Any]:
    from trace_envs.targets.tau2 import Tau2DataError, Tau2Evaluator, load_domain_data, parse_reward_basis
    from trace_envs.targets.tau2.env import resolve_model, tau2_domain

    name = _domain_name(domain_dir, domain)
    try:
        data = load_domain_data(domain_dir, name)
        data.tasks  # noqa: B018 - parse now so a bad file is reported before any work
    except (Tau2DataError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="DOMAIN_DIR") from None
    try:
        basis = None if reward_basis.strip().lower() == "task" else parse_reward_basis(reward_basis)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--reward-basis") from None
    dom = tau2_domain(name)
    evaluator = Tau2Evaluator(dom, dom.load_file(data.db_path), judge=resolve_model(judge, "judge"))
    return data, evaluator, basis


def _write_json(path: Path, payload: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


@app.command("tau2-replay")
def tau2_replay(
    domain_dir: DomainDirArgument,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the JSON object keyed by task id.")],
    domain: DomainOption = None,
    reward_basis: RewardBasisOption = "DB,COMMUNICATE",
    judge: JudgeOption = None,
) -> None:
    """Replay every task's gold actions on a fresh database and write each final canonical hash.

    OUT holds {"__initial__": {"canonical_hash"}, "<task id>": {"canonical_hash", "reward", "components",
    "success", "gold_errors": [{"action_id", "name", "content"}]}}. Reward and components score the gold
    trajectory (gold actions plus a message stating every communicate-info string) under the basis.
    """
    from trace_envs.targets.tau2 import gold_trajectory

    data, evaluator, basis = _setup(domain_dir, domain, reward_basis, judge)
    results: dict[str, Any] = {"__initial__": {"canonical_hash": evaluator.initial_hash}}
    table = Table(title=f"tau2 {data.domain}: gold replay ({len(data.tasks)} tasks)")
    for column in ("task", "canonical hash", "gold errors", "reward", "components"):
        table.add_column(column)
    for task in data.tasks:
        digest, outputs = evaluator.replay_gold(task)
        try:
            evaluation = evaluator.evaluate(task, gold_trajectory(task, outputs), reward_basis=basis)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--reward-basis / --judge") from None
        errors = [
            {"action_id": action.action_id, "name": action.name, "content": content}
            for action, content, error in outputs
            if error
        ]
        results[task.id] = {
            "canonical_hash": digest,
            "reward": evaluation.reward,
            "success": evaluation.success,
            "reward_basis": evaluation.reward_basis,
            "components": evaluation.components,
            "gold_errors": errors,
        }
        components = ", ".join(f"{k}={_fmt(v)}" for k, v in evaluation.components.items())
        table.add_row(task.id, digest[:16], str(len(errors)), _fmt(evaluation.reward), components)
    _write_json(out, results)
    console.print(table)
    console.print(f"initial canonical hash {evaluator.initial_hash}; wrote {len(data.tasks)} tasks to {out}")


@app.command("tau2-evaluate")
def tau2_evaluate(
    domain_dir: DomainDirArgument,
    cases: Annotated[Path, typer.Argument(help='JSON file {"cases": [{"task_id", "messages": [...]}, ...]}.')],
    out: Annotated[Path, typer.Option("--out", "-o", help='Where to write {"results": [...]} (input order).')],
    domain: DomainOption = None,
    reward_basis: RewardBasisOption = "DB,COMMUNICATE",
    judge: JudgeOption = None,
) -> None:
    """Score trajectories recorded elsewhere with tau2's evaluator (write calls replayed on a fresh database).

    Messages are chat dicts: {"role": "assistant", "content": str|null, "tool_calls": [{"id", "name",
    "arguments"}]}, {"role": "tool", "id", "content", "error"}, {"role": "user", "content"}. A case may
    carry "termination" (default "user_stop"); other unknown keys are ignored. Each result holds task_id,
    reward, success, reward_basis, components (by basis name), final_canonical_hash, db_match and notes.
    """
    from pydantic import ValidationError

    from trace_envs.targets.tau2.cases import load_cases

    data, evaluator, basis = _setup(domain_dir, domain, reward_basis, judge)
    try:
        parsed = load_cases(cases)
    except (OSError, ValueError, ValidationError) as exc:
        raise typer.BadParameter(str(exc), param_hint="CASES") from None
    results = []
    table = Table(title=f"tau2 {data.domain}: {len(parsed)} trajectories")
    for column in ("#", "task", "reward", "components", "final hash"):
        table.add_column(column)
    for index, case in enumerate(parsed):
        try:
            task = data.task(case.task_id)
            evaluation = evaluator.evaluate(task, case.messages, reward_basis=basis, termination=case.termination)
        except (KeyError, ValueError) as exc:
            raise typer.BadParameter(f"case {index} (task {case.task_id!r}): {exc}", param_hint="CASES") from None
        results.append(
            {
                "task_id": case.task_id,
                "reward": evaluation.reward,
                "success": evaluation.success,
                "reward_basis": evaluation.reward_basis,
                "components": evaluation.components,
                "final_canonical_hash": evaluation.final_canonical_hash,
                "db_match": evaluation.db_match,
                "notes": evaluation.notes,
            }
        )
        components = ", ".join(f"{k}={_fmt(v)}" for k, v in evaluation.components.items())
        table.add_row(
            str(index), case.task_id, _fmt(evaluation.reward), components, evaluation.final_canonical_hash[:16]
        )
    _write_json(out, {"results": results})
    console.print(table)
    mean = sum(r["reward"] for r in results) / len(results) if results else 0.0
    console.print(f"mean reward {mean:.4f} over {len(results)} cases; wrote {out}")
