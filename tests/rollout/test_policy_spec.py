"""Scripted policy specs: a mistyped ``flawed:<capability>`` is an error listing the valid ones, and
plain ``flawed`` plays each env's own capability (the same in ``play`` and ``rollout``)."""

from __future__ import annotations

import pytest

import trace_envs  # noqa: F401  (registers the envs)
from trace_envs.rollout import make_jobs, make_policy, policy_factory, run_rollouts
from trace_envs.rollout.scripted import known_capabilities

from .conftest import ENV_ID


def test_known_capabilities_are_those_of_the_registered_envs_and_the_tau2_rules() -> None:
    known = known_capabilities()
    assert known == sorted(known)
    for name in ("precondition_verification", "datetime_reasoning", "permission_error_recovery"):
        assert name in known  # shipped envs
    assert "structured_data_reasoning" in known  # a tau2 deficit rule (and a shipped env)


@pytest.mark.parametrize(
    "spec", ["flawed:precondition_verificatio", "flawed:precondition_verification,bogus", "flawed:Datetime"]
)
def test_a_mistyped_capability_is_an_error_listing_the_valid_ones(spec: str) -> None:
    with pytest.raises(ValueError, match="unknown capability") as caught:
        make_policy(spec)
    message = str(caught.value)
    assert "precondition_verification, " in message and "datetime_reasoning" in message
    assert "\n" not in message
    with pytest.raises(ValueError, match="unknown capability"):
        policy_factory(spec)  # rollouts validate the spec before the first episode


def test_plain_flawed_plays_each_envs_own_capability() -> None:
    seeds = range(16)
    plain = run_rollouts(make_jobs([ENV_ID], seeds), "flawed")
    named = run_rollouts(make_jobs([ENV_ID], seeds), "flawed:precondition_verification")
    assert plain.failed == 0 and plain.episodes == 16
    assert plain.successes == named.successes < 16
    assert make_policy("flawed").spec == "flawed"
