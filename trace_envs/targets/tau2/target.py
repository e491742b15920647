"""What the tau2 targets (airline, retail) tell the target registry: their tasks as records, their evaluation
tasks for the leakage guard, their data folder, generated stand-in data and their flaw rules. Each function
takes the :class:`~trace_envs.targets.registry.TargetSpec` first; the spec's name is the tau2 domain."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from trace_envs.targets.registry import LeakageRecords, LeakageTask, TargetSpec, TargetTask, TargetTasks, task_seed


def load_tasks(spec: TargetSpec, data: str | Path | None, split: str, limit: int | None) -> TargetTasks:
    """The tasks of ``split`` in the domain folder under ``data`` (or ``$TRACE_ENVS_TAU2_DATA``); one shared
    env per domain, the task a reset option."""
    from .data import load_domain_data

    domain_data = load_domain_data(data, spec.name)
    every = domain_data.task_ids(split)
    ids = every[:limit]
    env_id = next(iter(spec.envs))
    tasks = [
        TargetTask(
            task_id=task_id,
            domain=spec.name,
            env_id=env_id,
            seed=task_seed(spec.name, task_id),
            env_kwargs={"data_dir": str(domain_data.path)},
            reset_options={"task_id": task_id},
        )
        for task_id in ids
    ]
    return TargetTasks(source=str(domain_data.path.parent), split=split, tasks=tasks, available=len(every))


def check_data(spec: TargetSpec, data: str | Path | None) -> Path:
    """The domain folder under ``data`` (or ``$TRACE_ENVS_TAU2_DATA``), checked to hold the tasks."""
    from .data import Tau2DataError, resolve_domain_dir

    directory = resolve_domain_dir(data, spec.name)
    if not (directory / "tasks.json").exists():
        raise Tau2DataError(f"{directory} holds no tasks.json of the {spec.name} domain; pass the tau2 data folder")
    return directory


def generate_data(spec: TargetSpec, folder: Path, seed: int) -> Path:
    """A tau2 data folder under ``folder`` holding a generated ``<domain>/`` (written once, kept across resumes)."""
    from .generated import write_generated_domain

    if not (folder / spec.name / "tasks.json").exists():
        write_generated_domain(folder, spec.name, seed=seed)
    return folder


def leakage_records(spec: TargetSpec, data: str | Path | None) -> LeakageRecords:
    """The domain's evaluation tasks (its ``tasks.json``) as the leakage guard reads them."""
    from .data import resolve_domain_dir

    return _records(spec.name, str(Path(resolve_domain_dir(data, spec.name)).resolve()))


@lru_cache(maxsize=8)
def _records(domain: str, directory: str) -> LeakageRecords:
    from trace_envs.registry import get_domain

    from .data import load_domain_data

    data = load_domain_data(directory, domain)
    tasks = []
    for task in data.tasks:
        instructions = task.user_scenario.instructions
        texts: list[str | None] = [task.user_scenario.persona]
        if isinstance(instructions, str):
            texts.append(instructions)
        else:
            texts += [
                instructions.reason_for_call,
                instructions.known_info,
                instructions.unknown_info,
                instructions.task_instructions,
            ]
        if task.description is not None:
            texts.append(task.description.purpose)
        values: list[Any] = []
        criteria = task.evaluation_criteria
        if criteria is not None:
            texts += criteria.nl_assertions or []
            values += [action.arguments for action in criteria.actions or []]
            values += [assertion.arguments for assertion in criteria.env_assertions or []]
        if task.initial_state:
            values.append(task.initial_state)
        where = f"{domain} evaluation task {task.id}"
        tasks.append(LeakageTask(where=where, task_ids=(task.id,), texts=tuple(texts), values=tuple(values)))
    return LeakageRecords(
        source=f"{data.path / 'tasks.json'} ({len(data.tasks)} tasks)",
        tasks=tuple(tasks),
        common=get_domain(domain).policy + "\n" + data.policy,
    )


def flawed_actions(env: Any, capabilities: Sequence[str] | None) -> list[str]:
    """The task's gold actions with the capabilities' deficits applied (``[]``: the gold actions, which the env's
    own ``oracle_actions()`` gives); plain ``flawed`` (``None``) has no deficit to apply, since a tau2 task
    declares no capability of its own."""
    from .flaws import tau2_deficits, tau2_env_actions

    if capabilities is None:
        raise ValueError(
            "plain 'flawed' plays an env's own capability, and a tau2 target task has none: name the "
            f"deficits, --policy flawed:<capability> with one of {', '.join(tau2_deficits())}"
        )
    return tau2_env_actions(env, list(capabilities))
