"""Capability environments shipped with trace-envs, one module per capability.

A plugin like any third-party env package: ``pyproject.toml`` names :func:`register` in the
``trace_envs.envs`` entry-point group, and ``import trace_envs`` calls it. It registers the ids of
``SHIPPED_ENVS`` without importing the env modules (that happens on ``gym.make``).
"""

SHIPPED_ENVS: dict[str, str] = {
    "trace/order-cancel-v0": "generated_envs.order_cancel:OrderCancelEnv",
    "trace/retail-order-cancel-v0": "generated_envs.retail_order_cancel:RetailOrderCancelEnv",
    "trace/structured-data-v0": "generated_envs.structured_data:StructuredDataEnv",
    "trace/tool-precision-v0": "generated_envs.tool_precision:ToolPrecisionEnv",
    "trace/multi-step-v0": "generated_envs.multi_step:MultiStepEnv",
    "trace/precondition-v0": "generated_envs.precondition:PreconditionEnv",
    "trace/permission-recovery-v0": "generated_envs.permission_recovery:PermissionRecoveryEnv",
    "trace/datetime-v0": "generated_envs.datetime_reasoning:DatetimeEnv",
}

SHIPPED_DOMAINS: dict[str, str] = {}
"""Domains the shipped envs define themselves (none: they use ``trace_envs.domains``)."""


def register() -> None:
    """The ``trace_envs.envs`` entry point: register the shipped domains and envs (idempotent)."""
    from trace_envs.registry import register_domain, register_env  # here: ``import trace_envs`` calls this

    for name, factory in SHIPPED_DOMAINS.items():
        register_domain(name, factory)
    for env_id, entry_point in SHIPPED_ENVS.items():
        register_env(env_id, entry_point)
