"""The tau2 targets (airline, retail) as :class:`~trace_envs.registry.targets.Target` instances: their tasks as
records, their evaluation tasks for the leakage guard, their data folder, generated stand-in data, their flaw
rules and the scripted customer. A target's name is its tau2 domain. Imports nothing heavy at its top: the
registry imports it when first read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from trace_envs.registry.ids import env_id
from trace_envs.registry.targets import LeakageRecords, LeakageTask, Target, TargetTask, TargetTasks, task_seed

TAU2_HELPERS = {
    "airline": tuple(f"trace_envs.domains.airline.records:{n}" for n in ("AirlineRecords", "airline_flight")),
    "retail": tuple(
        f"trace_envs.domains.retail.records:{n}" for n in ("RetailRecords", "address_arguments", "describe_address")
    ),
}
"""The record builders each tau2 target's prompt documents (all in the domain's ``records`` module)."""


@dataclass(frozen=True, kw_only=True)
class Tau2Target(Target):
    """A tau2-bench domain as a target: its tasks come from ``<data>/<name>/tasks.json``, one shared env per
    domain with the task a reset option, and a customer played by a chat model (else scripted)."""

    def tasks(self, data: str | Path | None, split: str, limit: int | None) -> TargetTasks:
        """The tasks of ``split`` in the domain folder under ``data`` (or ``$TRACE_ENVS_TAU2_DATA``)."""
        from .data import load_domain_data

        domain_data = load_domain_data(data, self.name)
        every = domain_data.task_ids(split)
        env_id = next(iter(self.envs))
        tasks = [
            TargetTask(
                task_id=task_id,
                domain=self.name,
                env_id=env_id,
                seed=task_seed(self.name, task_id),
                env_kwargs={"data_dir": str(domain_data.path)},
                reset_options={"task_id": task_id},
            )
            for task_id in every[:limit]
        ]
        return TargetTasks(source=str(domain_data.path.parent), split=split, tasks=tasks, available=len(every))

    def leakage(self, data: str | Path | None) -> LeakageRecords:
        """The domain's evaluation tasks (its ``tasks.json``) as the leakage guard reads them."""
        from .data import resolve_domain_dir

        return _records(self.name, str(Path(resolve_domain_dir(data, self.name)).resolve()))

    def oracle(self, env: Any) -> list[str]:
        """The task's gold actions and a message with the facts to tell (a tau2 env has no reference of its own)."""
        from .flaws import tau2_env_actions

        return tau2_env_actions(env, [])

    def flawed(self, env: Any, capabilities: Sequence[str] | None) -> list[str] | None:
        """The task's gold actions with the capabilities' deficits applied (``[]``: the gold actions, the oracle);
        plain ``flawed`` (``None``) has no deficit to apply, since a tau2 task declares no capability of its own."""
        from .flaws import tau2_deficits, tau2_env_actions

        if capabilities is None:
            raise ValueError(
                "plain 'flawed' plays an env's own capability, and a tau2 target task has none: name the "
                f"deficits, --policy flawed:<capability> with one of {', '.join(tau2_deficits())}"
            )
        return tau2_env_actions(env, list(capabilities))

    def check_data(self, data: str | Path | None) -> Path:
        """The domain folder under ``data`` (or ``$TRACE_ENVS_TAU2_DATA``), checked to hold the tasks."""
        from .data import Tau2DataError, resolve_domain_dir

        directory = resolve_domain_dir(data, self.name)
        if not (directory / "tasks.json").exists():
            raise Tau2DataError(f"{directory} holds no tasks.json of the {self.name} domain; pass the tau2 data folder")
        return directory

    def write_data(self, folder: Path, seed: int) -> Path:
        """A tau2 data folder under ``folder`` holding a generated ``<domain>/`` (written once, kept across resumes)."""
        from .generated import write_generated_domain

        if not (folder / self.name / "tasks.json").exists():
            write_generated_domain(folder, self.name, seed=seed)
        return folder

    def default_user(self) -> Any:
        """The scripted customer (it plays tau2 tasks without a chat model; scripted policies only)."""
        from .scripted_user import ScriptedCustomer

        return ScriptedCustomer()


def tau2_target(name: str, env_class: str) -> Tau2Target:
    """The tau2-bench domain ``name`` as a target, played by the env class ``env_class`` of :mod:`.env`."""
    return Tau2Target(
        name=name,
        description=f"tau2-bench {name}: the tasks of a tau2 data folder, a customer played by a chat model.",
        domains={name: f"trace_envs.domains.{name}:{name.upper()}"},
        envs={env_id(f"tau2-{name}"): f"trace_envs.targets.tau2.env:{env_class}"},
        kit=("trace_envs.core", f"trace_envs.domains.{name}"),
        helpers=TAU2_HELPERS[name],
        aliases=(f"tau2-{name}",),
        family="tau2",
        default_split="base",
        splits=("base", "train", "test"),
        needs_user_model=True,
    )


AIRLINE = tau2_target("airline", "Tau2AirlineEnv")
RETAIL = tau2_target("retail", "Tau2RetailEnv")


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
