"""The property suite every capability env must pass, usable on your own envs.

    from trace_envs.testing import check_capability_env
    check_capability_env("trace/my-env-v0", seeds=range(50))

or from pytest: ``pytest --trace-env trace/my-env-v0 --trace-env-import mypackage.envs``.
"""

from .properties import fingerprint, make_env
from .suite import PropertyResult, SuiteReport, check_capability_env, property_checks

__all__ = ["PropertyResult", "SuiteReport", "check_capability_env", "fingerprint", "make_env", "property_checks"]
