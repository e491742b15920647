"""Running a candidate module's checks: the module in boxes (:mod:`trace_envs.box`), the property suite and the
evidence in the validator, against the boxed env's proxy; nothing of the module runs in the validator."""
