"""``trace-envs tau2-replay | tau2-evaluate | tau2-generate``: check tau2 data by replaying gold actions; score external
trajectories; write a generated data folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .app import app
from .text import plural

console = Console()

BASIS_HELP = "Comma-separated reward basis (DB, ENV_ASSERTION, NL_ASSERTION, ACTION, COMMUNICATE) or 'task'."
DomainDirArgument = Annotated[
    Path, typer.Argument(metavar="DOMAIN_DIR", help="A tau2 domain folder with db.json, tasks.json and policy.md.")
]
DomainOption = Annotated[
    str | None, typer.Option(metavar="NAME", help="retail or airline (default: the folder's name).")
]
RewardBasisOption = Annotated[str, typer.Option("--reward-basis", metavar="BASIS", help=BASIS_HELP)]
JudgeOption = Annotated[
    str | None, typer.Option(metavar="SPEC", help="Model spec of the NL-assertion judge, if the basis needs one.")
]


def _domain_name(domain_dir: Path, domain: str | None) -> str:
    from trace_envs.registry.targets import select_targets

    name = domain or domain_dir.name
    if name not in [spec.name for spec in select_targets("tau2")]:
        raise typer.BadParameter(
            f"cannot tell the tau2 domain of {domain_dir} (folder name {domain_dir.name!r}); pass --domain retail|airline",
            param_hint="--domain",
        )
    return name


def _setup(domain_dir: Path, domain: str | None, reward_basis: str, judge: str | None) -> tuple[Any, Any, Any]:
    from trace_envs.targets.tau2 import Tau2DataError, Tau2Evaluator, load_domain_data, parse_reward_basis
    from trace_envs.targets.tau2.env import resolve_model, tau2_domain

    name = _domain_name(domain_dir, domain)
    dom = tau2_domain(name)
    try:
        data = load_domain_data(domain_dir, name)
        data.tasks  # noqa: B018 - parse now so a bad file is reported before any work
        db = data.load_db(dom)  # a corrupt db.json, or the other domain's, is one line naming the fix
    except (Tau2DataError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="DOMAIN_DIR / --domain") from None
    try:
        basis = None if reward_basis.strip().lower() == "task" else parse_reward_basis(reward_basis)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--reward-basis") from None
    try:
        judge_model = resolve_model(judge, "judge")
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--judge") from None
    return data, Tau2Evaluator(dom, db, judge=judge_model), basis


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
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="FILE", help="Where to write the JSON object keyed by task id.")
    ],
    domain: DomainOption = None,
    reward_basis: RewardBasisOption = "DB,COMMUNICATE",
    judge: JudgeOption = None,
) -> None:
    """Replay every task's gold actions on a fresh database and write each final canonical hash.

    OUT holds {"__initial__": {"canonical_hash"}, "<task id>": {"canonical_hash", "reward", "components",
    "success", "gold_errors": [{"action_id", "name", "content"}]}}. Reward and components score the gold
    trajectory (gold actions plus a message stating every communicate-info string) under the basis.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from trace_envs.targets.tau2 import gold_trajectory

    data, evaluator, basis = _setup(domain_dir, domain, reward_basis, judge)
    results: dict[str, Any] = {"__initial__": {"canonical_hash": evaluator.initial_hash}}
    columns = (TextColumn(f"[bold]{data.domain} gold replay"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task("replay", total=len(data.tasks))
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
            progress.advance(bar)
    _write_json(out, results)
    _replay_summary(data.domain, {k: v for k, v in results.items() if k != "__initial__"}, evaluator.initial_hash, out)


def _ids(task_ids: list[str], limit: int = 10) -> str:
    shown = ", ".join(task_ids[:limit])
    return shown + (f" and {len(task_ids) - limit} more" if len(task_ids) > limit else "")


def _replay_summary(domain: str, results: dict[str, Any], initial_hash: str, out: Path) -> None:
    """A few lines instead of a row per task: how many replays score 1.0, which do not, which hit errors."""
    total = len(results)
    full = sum(r["reward"] == 1.0 for r in results.values())
    mean = sum(r["reward"] for r in results.values()) / total if total else 0.0
    console.print(
        f"tau2 {domain}: gold replay of {plural(total, 'task')}, reward 1.0 on {full}/{total} (mean {mean:.4f})"
    )
    below = [task_id for task_id, r in results.items() if r["reward"] != 1.0]
    if below:
        console.print(f"  reward below 1.0: {_ids(below)}")
    erred = [task_id for task_id, r in results.items() if r["gold_errors"]]
    if erred:
        console.print(
            f"  {plural(len(erred), 'task')} with a gold action that returns an error, as in tau2: {_ids(erred)}"
        )
    console.print(f"  initial canonical hash {initial_hash}", soft_wrap=True)
    console.print(f"wrote canonical hashes, rewards and gold errors to {out}", soft_wrap=True)


@app.command("tau2-evaluate")
def tau2_evaluate(
    domain_dir: DomainDirArgument,
    cases: Annotated[
        Path, typer.Argument(metavar="CASES", help='JSON file {"cases": [{"task_id", "messages": [...]}, ...]}.')
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="FILE", help='Where to write {"results": [...]} (input order).')
    ],
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
    from trace_envs.problems import validation_problems

    try:
        parsed = load_cases(cases)
    except ValidationError as exc:
        raise typer.BadParameter(f"{cases}: {validation_problems(exc)}", param_hint="CASES") from None
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="CASES") from None
    if not parsed:
        raise typer.BadParameter(
            f'{cases} holds no cases: put {{"task_id", "messages"}} objects in its "cases" list', param_hint="CASES"
        )
    results = []
    table = Table(title=f"tau2 {data.domain}: {plural(len(parsed), 'trajectory', 'trajectories')}")
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
    mean = sum(r["reward"] for r in results) / len(results)
    console.print(f"mean reward {mean:.4f} over {plural(len(results), 'case')}; wrote {out}")


@app.command("tau2-generate")
def tau2_generate(
    out: Annotated[Path, typer.Argument(metavar="DIR", help="Folder to write <domain>/ folders into.")],
    domain: Annotated[
        list[str] | None, typer.Option("--domain", metavar="NAME", help="retail or airline; repeat (default: both).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the generated databases and tasks.")] = 0,
) -> None:
    """Write a generated tau2 data folder: DIR/<domain>/{db.json,tasks.json,policy.md} per domain.

    A seeded database from the domain's generator and tasks drawn from it, each checked by tau2's evaluator
    (docs/tau2.md). Pass DIR as --data to validate, synthesize or evaluate a retail or airline env when
    tau2-bench's own data is not at hand; its tasks are not tau2-bench's, so
    the leakage guard then checks against these. An existing domain folder is kept as it is.
    """
    from trace_envs.registry.targets import select_targets

    known = [spec.name for spec in select_targets("tau2")]
    wanted = list(dict.fromkeys(domain or known))
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise typer.BadParameter(f"unknown tau2 domain {unknown[0]!r}; use {' or '.join(known)}", param_hint="--domain")
    for spec in select_targets("tau2"):
        if spec.name in wanted:
            spec.write_data(out, seed)
            tasks = json.loads((out / spec.name / "tasks.json").read_text(encoding="utf-8"))
            console.print(f"{spec.name}: {plural(len(tasks), 'task')} in {out / spec.name}", soft_wrap=True)
    console.print(
        f"use it with --data {out} (validate, synthesize, evaluate), or export "
        f"TRACE_ENVS_TAU2_DATA={out}; its tasks are generated, not tau2-bench's",
        soft_wrap=True,
        highlight=False,
    )
