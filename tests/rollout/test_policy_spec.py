"""Policy specs are parsed in one place (``PolicySpec``), which every entry point uses; a mistyped
``flawed:<capability>`` is an error listing the valid ones, and plain ``flawed`` plays each env's own
capability (the same in ``play`` and ``rollout``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import trace_envs  # noqa: F401  (registers the envs)
from trace_envs.llm import ModelConfig
from trace_envs.rollout import (
    POLICY_SPEC_FORMS,
    ChatPolicy,
    FlawedPolicy,
    Policy,
    PolicySpec,
    RandomPolicy,
    ScriptedPolicy,
    checked_policy_spec,
    make_jobs,
    make_policy,
    policy_factory,
    run_rollouts,
)
from trace_envs.rollout.scripted import known_capabilities

from .conftest import ENV_ID

NAME = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)


@given(model=NAME, port=st.integers(1, 65535), capabilities=st.lists(NAME, min_size=1, max_size=3))
def test_every_form_round_trips(model: str, port: int, capabilities: list[str]) -> None:
    for spec in ("oracle", "noop", "random", "flawed:" + ",".join(capabilities)):
        parsed = PolicySpec.parse(spec)
        assert parsed.spec == spec and not parsed.is_model and parsed.model is None
    for spec in (f"anthropic:{model}", f"openai:http://127.0.0.1:{port}/v1#{model}", f"hf:./{model}@{model}"):
        parsed = PolicySpec.parse(spec)
        assert parsed.is_model and parsed.kind == "model" and parsed.spec == spec
        assert parsed.model == ModelConfig.parse(spec)
    assert PolicySpec.parse("flawed: a , b").capabilities == ("a", "b")


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("oracel", f"unknown policy spec 'oracel'; expected one of: {POLICY_SPEC_FORMS}"),
        ("", "unknown policy spec ''; expected one of: oracle, noop, random, flawed, flawed:"),
        ("flawed:", "names no capability; write e.g. 'flawed:unit_conversion'"),
        ("openai:http://host/v1", "needs the endpoint and the model"),
        ("hf:path@", "nothing after '@'"),
    ],
)
def test_bad_specs_name_the_valid_forms(spec: str, needle: str) -> None:
    for parse in (PolicySpec.parse, make_policy, checked_policy_spec, policy_factory):
        with pytest.raises(ValueError, match=re.escape(needle)):
            parse(spec)


def test_every_entry_point_builds_from_the_parsed_spec() -> None:
    assert isinstance(make_policy("random", seed=3), RandomPolicy)
    flawed = make_policy(PolicySpec.parse("flawed:precondition_verification,datetime_reasoning"))
    assert isinstance(flawed, FlawedPolicy) and flawed.spec == "flawed:precondition_verification,datetime_reasoning"
    model = make_policy("openai:http://127.0.0.1:9/v1#m", timeout_s=3, sampling={"temperature": 0.5})
    assert isinstance(model, ChatPolicy) and model.sampling == {"temperature": 0.5}
    assert model.model.config.timeout_s == 3  # type: ignore[attr-defined]
    assert checked_policy_spec("openai:http://127.0.0.1:9/v1#m", {"timeout_s": 3}) == "openai:http://127.0.0.1:9/v1#m"
    with pytest.raises(ValueError, match="timeout"):
        checked_policy_spec("anthropic:m", {"timeoutt": 3})


def test_policies_expose_their_model_and_usage() -> None:
    for spec in ("oracle", "noop", "random", "flawed", "flawed:datetime_reasoning"):
        policy = make_policy(spec)
        assert isinstance(policy, Policy) and isinstance(policy, ScriptedPolicy)
        assert policy.model is None and policy.usage.input_tokens == policy.usage.cost_usd == 0
    chat = make_policy("openai:http://127.0.0.1:9/v1#m")
    assert isinstance(chat, Policy) and chat.model is not None and chat.model.spec == "openai:http://127.0.0.1:9/v1#m"


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
