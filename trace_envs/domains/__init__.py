"""Target domains reproduced exactly (tau2-bench airline and retail, ToolSandbox's device) and their shared
machinery, plus what capability envs build tasks from: record builders (``airline.records``,
``retail.records``, ``tau2_records``) and base envs (``tau2_env.Tau2VariantEnv``,
``device.tasks.DeviceTaskEnv``)."""
