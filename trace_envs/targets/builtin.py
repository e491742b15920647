"""The shipped targets: tau2-bench airline and retail (the user's task files, an LLM-played customer) and the
ToolSandbox-style device scenarios (built in, scripted users). The only list of targets in the library: every
other module reads :mod:`trace_envs.targets.registry`."""

from __future__ import annotations

from .registry import TargetSpec

TAU2 = "trace_envs.targets.tau2.target"
DEVICE_TARGET = "trace_envs.targets.device.target"


TAU2_HELPERS = {
    "airline": tuple(f"trace_envs.domains.airline.records:{n}" for n in ("AirlineRecords", "airline_flight")),
    "retail": tuple(
        f"trace_envs.domains.retail.records:{n}" for n in ("RetailRecords", "address_arguments", "describe_address")
    ),
}
"""The record builders each tau2 target's prompt documents (all in the domain's ``records`` module)."""


def _tau2(name: str, env_class: str) -> TargetSpec:
    """A tau2-bench domain as a target: its tasks come from ``<data>/<name>/tasks.json``."""
    return TargetSpec(
        name=name,
        description=f"tau2-bench {name}: the tasks of a tau2 data folder, a customer played by a chat model.",
        domains={name: f"trace_envs.domains.{name}:{name.upper()}"},
        envs={f"trace/tau2-{name}-v0": f"trace_envs.targets.tau2.env:{env_class}"},
        tasks=f"{TAU2}:load_tasks",
        evaluation="trace_envs.targets.tau2.evaluator:Tau2Evaluator",
        leakage=f"{TAU2}:leakage_records",
        flaws=f"{TAU2}:flawed_actions",
        kit=("trace_envs.core", f"trace_envs.domains.{name}"),
        helpers=TAU2_HELPERS[name],
        aliases=(f"tau2-{name}",),
        family="tau2",
        default_split="base",
        splits=("base", "train", "test"),
        data_variable="TRACE_ENVS_TAU2_DATA",
        check_data=f"{TAU2}:check_data",
        generate_data=f"{TAU2}:generate_data",
        needs_user_model=True,
    )


AIRLINE = _tau2("airline", "Tau2AirlineEnv")
RETAIL = _tau2("retail", "Tau2RetailEnv")
DEVICE = TargetSpec(
    name="device",
    description="ToolSandbox-style device scenarios (built in, or a scenario file), scored by milestones.",
    domains={"device": "trace_envs.domains.device:DEVICE"},
    envs={"trace/device-v0": "trace_envs.targets.device.env:DeviceEnv"},
    tasks=f"{DEVICE_TARGET}:load_tasks",
    evaluation="trace_envs.targets.device.milestones:evaluate",
    leakage=f"{DEVICE_TARGET}:leakage_records",
    flaws=f"{DEVICE_TARGET}:flawed_actions",
    kit=("trace_envs.core", "trace_envs.domains.device"),
    helpers=("trace_envs.domains.device:generate_device_world", "trace_envs.domains.device.world:random_phone"),
    default_split="all",
    splits=("train", "test", "all"),
    builtin_tasks=True,
    similarity="similarity",
    env_kind="device_target",
)

BUILTIN_TARGETS = (AIRLINE, RETAIL, DEVICE)
"""In listing order (``tau2`` plays airline's tasks, then retail's)."""
