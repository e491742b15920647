"""Capability environments shipped with trace-envs, one module per capability.

``SHIPPED_ENVS`` maps each Gymnasium id to its entry point; ``trace_envs`` registers them on import
without importing the modules themselves (that happens on ``gym.make``).
"""

SHIPPED_ENVS: dict[str, str] = {
    "trace/order-cancel-v0": "generated_envs.order_cancel:OrderCancelEnv",
    "trace/structured-data-v0": "generated_envs.structured_data:StructuredDataEnv",
    "trace/tool-precision-v0": "generated_envs.tool_precision:ToolPrecisionEnv",
    "trace/multi-step-v0": "generated_envs.multi_step:MultiStepEnv",
    "trace/precondition-v0": "generated_envs.precondition:PreconditionEnv",
    "trace/permission-recovery-v0": "generated_envs.permission_recovery:PermissionRecoveryEnv",
    "trace/datetime-v0": "generated_envs.datetime_reasoning:DatetimeEnv",
}

SHIPPED_DOMAINS: dict[str, str] = {}
"""Domains the shipped envs define themselves (none: they use ``trace_envs.domains``)."""
