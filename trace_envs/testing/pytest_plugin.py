"""Pytest plugin: ``pytest --trace-env trace/my-env-v0`` runs the property suite as test items.

Loaded for every pytest session of anyone who installs trace-envs, so it imports nothing of
ours until ``--trace-env`` is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("trace-envs", "trace-envs capability env property suite")
    group.addoption(
        "--trace-env",
        action="append",
        default=[],
        metavar="ENV_ID",
        help="Run the trace-envs property suite over this registered env id (repeatable).",
    )
    group.addoption(
        "--trace-env-import",
        action="append",
        default=[],
        metavar="MODULE",
        help="Import this module first, e.g. the package that registers your envs (repeatable).",
    )
    group.addoption("--trace-env-seeds", type=int, default=20, metavar="N", help="Seeds 0..N-1 to check (default 20).")
    group.addoption(
        "--trace-env-fuzz",
        type=int,
        default=50,
        metavar="N",
        help="Hypothesis examples of random actions (default 50).",
    )


class EnvPropertyItem(pytest.Item):
    """One property of one env."""

    def __init__(self, *, check: Callable[[], None], **kwargs: Any):
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        self.check()

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, AssertionError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"trace-env {self.name}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    env_ids: list[str] = config.getoption("trace_env")
    if not env_ids:
        return
    from trace_envs.testing.suite import import_env_modules, property_checks

    import_env_modules(config.getoption("trace_env_import"))
    seeds = list(range(config.getoption("trace_env_seeds")))
    for env_id in env_ids:
        for name, check in property_checks(env_id, seeds, config.getoption("trace_env_fuzz")).items():
            items.append(EnvPropertyItem.from_parent(session, name=f"{env_id}::{name}", check=check))
