"""The property suite passes on every registered env and catches each kind of broken env."""

from __future__ import annotations

import pytest

from trace_envs.registration import list_capability_envs
from trace_envs.testing import check_capability_env, property_checks

from .broken_envs import BROKEN, broken_env_id

SHIPPED = list_capability_envs()


@pytest.mark.parametrize("env_id", SHIPPED)
def test_every_registered_env_passes_the_suite(env_id: str) -> None:
    report = check_capability_env(env_id, seeds=range(200), fuzz_examples=60)
    assert report.passed
    assert {r.name for r in report.results} == set(property_checks(env_id, [0]))


@pytest.mark.parametrize("prop", sorted(BROKEN))
def test_the_suite_catches_a_broken_env(prop: str) -> None:
    env_id = broken_env_id(prop)
    report = check_capability_env(env_id, seeds=range(12), fuzz_examples=40, raise_on_failure=False)
    failed = {r.name for r in report.failures()}
    assert prop in failed, f"{prop} did not catch {env_id}; failures were {failed}"


def test_failures_raise_with_every_failing_property_named() -> None:
    with pytest.raises(AssertionError, match="oracle_solves"):
        check_capability_env(broken_env_id("oracle_solves"), seeds=range(4), subprocess=False, fuzz_examples=5)


def test_no_seeds_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least one seed"):
        check_capability_env("trace/order-cancel-v0", seeds=[])
