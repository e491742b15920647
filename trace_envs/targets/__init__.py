"""Target benchmarks run as Gymnasium episodes (tau2-bench airline and retail, the device scenarios), each one
registered :class:`~trace_envs.targets.registry.TargetSpec` (see :mod:`trace_envs.targets.registry`)."""
