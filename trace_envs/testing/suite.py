"""``check_capability_env``: run every property over one env and report each result."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from . import properties


class PropertyResult(BaseModel):
    name: str
    passed: bool
    seconds: float
    message: str = ""


class SuiteReport(BaseModel):
    env_id: str
    seeds: list[int]
    results: list[PropertyResult]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def failures(self) -> list[PropertyResult]:
        return [r for r in self.results if not r.passed]


def property_checks(
    env_id: str, seeds: Sequence[int], fuzz_examples: int = 50, subprocess: bool = True
) -> dict[str, Callable[[], None]]:
    """The suite as named zero-argument checks (what the pytest plugin turns into test items)."""
    few = list(seeds)[: min(len(seeds), 10)]
    checks: dict[str, Callable[[], None]] = {
        "gym_api": lambda: properties.check_gym_api(env_id, seed=seeds[0]),
        "tool_schemas": lambda: properties.check_tool_schemas(env_id),
        "diversity": lambda: properties.check_diversity(env_id, seeds),
        "oracle_solves": lambda: properties.check_oracle_solves(env_id, seeds),
        "flawed_fails": lambda: properties.check_flawed_fails(env_id, seeds),
        "junk_fails": lambda: properties.check_junk_fails(env_id, seeds),
        "constant_answer_fails": lambda: properties.check_constant_answer_fails(env_id, seeds),
        "adversarial_junk_fails": lambda: properties.check_adversarial_junk_fails(env_id, seeds),
        "any_action_is_safe": lambda: properties.check_any_action_is_safe(
            env_id, examples=fuzz_examples, seed=seeds[0]
        ),
        "no_state_leak": lambda: properties.check_no_state_leak(env_id, few),
    }
    if subprocess:
        checks["determinism"] = lambda: properties.check_determinism(env_id, few)
    return checks


def require_hypothesis() -> None:
    """The suite's fuzz property needs Hypothesis; without it say which extra installs it, instead of
    reporting the env as failing that property."""
    try:
        import hypothesis  # noqa: F401
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            'the property suite needs hypothesis (the "dev" extra): pip install "trace-envs[dev]"', name="hypothesis"
        ) from exc


def check_capability_env(
    env_id: str,
    seeds: Sequence[int] = range(20),
    *,
    fuzz_examples: int = 50,
    subprocess: bool = True,
    raise_on_failure: bool = True,
) -> SuiteReport:
    """Run the property suite over a registered env id.

    Raises ``AssertionError`` listing every failed property (unless ``raise_on_failure=False``);
    returns a report with each property's outcome and time.
    """
    seed_list = list(seeds)
    if not seed_list:
        raise ValueError("check_capability_env needs at least one seed")
    require_hypothesis()
    results = []
    for name, check in property_checks(env_id, seed_list, fuzz_examples, subprocess).items():
        start = time.perf_counter()
        try:
            check()
            results.append(PropertyResult(name=name, passed=True, seconds=time.perf_counter() - start))
        except Exception as exc:  # any error is that property's failure, reported with its type
            message = str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
            results.append(
                PropertyResult(name=name, passed=False, seconds=time.perf_counter() - start, message=message)
            )
    report = SuiteReport(env_id=env_id, seeds=seed_list, results=results)
    if raise_on_failure and not report.passed:
        lines = [f"- {r.name}: {r.message}" for r in report.failures()]
        raise AssertionError(
            f"{env_id} fails {len(lines)} propert{'y' if len(lines) == 1 else 'ies'}:\n" + "\n".join(lines)
        )
    return report


def import_env_modules(modules: Sequence[str]) -> None:
    """Import modules that register envs (user packages, generated env modules)."""
    import trace_envs  # noqa: F401  (registers the shipped envs)

    for module in modules:
        importlib.import_module(module)
