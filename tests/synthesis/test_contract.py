"""The contract gate on variations of a correct module."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.synthesis import GateContext
from trace_envs.synthesis.gates.contract import contract_gate, domain_attribute

from .conftest import GOOD_MODULE

GOOD = GOOD_MODULE.read_text(encoding="utf-8")


def check(source: str, **context: object) -> set[str]:
    settings: dict[str, object] = {"target": "retail", "capability": "precondition_verification", **context}
    return {f.rule for f in contract_gate(source, GateContext(**settings)).findings}  # type: ignore[arg-type]


def test_the_good_module_keeps_the_contract() -> None:
    result = contract_gate(GOOD, GateContext(target="retail", capability="precondition_verification"))
    assert result.passed
    assert result.details == {"env_class": "RetailCancelEnv", "tools": ["get_order_details", "cancel_pending_order"]}


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("    domain = RETAIL\n", "", "no-domain"),
        ("    domain = RETAIL\n", "    domain = RETAIL.toolset\n", "wrong-domain"),
        ('name="precondition_verification"', 'name="Precondition Verification"', "capability-name"),
        ('name="precondition_verification"', "name=NAME", "capability-not-literal"),
        (
            '    tool_names = ("get_order_details", "cancel_pending_order")\n',
            "    tool_names = TOOLS\n",
            "tool-names-not-literal",
        ),
        ("    max_turns = 10\n", "    max_turns = 10\n    tool_schemas = []\n", "schema-override"),
        (
            "    max_turns = 10\n",
            "    max_turns = 10\n\n    def choose_domain(self):\n        return RETAIL\n",
            "domain-variant",
        ),
        (
            "class RetailCancelEnv(CapabilityEnv):",
            "class Base(CapabilityEnv):\n    pass\n\n\nclass Other(Base):\n    pass\n\n\nclass RetailCancelEnv(Base):",
            "several-env-classes",
        ),
    ],
)
def test_each_breach_is_named(old: str, new: str, rule: str) -> None:
    assert old in GOOD
    assert rule in check(GOOD.replace(old, new))


def test_an_env_may_inherit_from_its_own_base_class() -> None:
    source = GOOD.replace(
        "class RetailCancelEnv(CapabilityEnv):",
        "class Base(CapabilityEnv):\n    max_turns = 8\n\n\nclass RetailCancelEnv(Base):",
    )
    assert check(source) == set()


def test_building_a_domain_or_assigning_schemas_at_run_time_is_refused() -> None:
    source = GOOD + "\n\nMINE = Domain('retail', None, Toolset([]))\n\n\ndef patch(env):\n    env.tool_schemas = []\n"
    source = source.replace(
        "from trace_envs.core import Capability,", "from trace_envs.core import Domain, Toolset, Capability,"
    )
    assert {"own-domain", "schema-override"} <= check(source)


def test_no_requested_capability_accepts_any_snake_case_name() -> None:
    assert check(GOOD.replace("precondition_verification", "order_triage"), capability=None) == set()
    assert "wrong-capability" in check(GOOD.replace("precondition_verification", "order_triage"))


@pytest.mark.parametrize(("target", "name"), [("retail", "RETAIL"), ("airline", "AIRLINE"), ("device", "DEVICE")])
def test_the_fix_names_the_targets_domain_object(target: str, name: str) -> None:
    assert domain_attribute(target) == name


KNOBS = (
    "from pydantic import BaseModel\n\n\n"
    "class CancelKnobs(BaseModel):\n    users: int = 3\n\n\n"
    "class RetailCancelEnv(CapabilityEnv[CancelKnobs]):"
)
SUBCLASS_FORMS = {
    "generic knobs": ("class RetailCancelEnv(CapabilityEnv):", KNOBS),
    "alias": ("class RetailCancelEnv(CapabilityEnv):", "Env = CapabilityEnv\n\n\nclass RetailCancelEnv(Env):"),
    "generic alias": (
        "class RetailCancelEnv(CapabilityEnv):",
        KNOBS.replace("class RetailCancelEnv(CapabilityEnv[CancelKnobs]):", "")
        + "Env = CapabilityEnv[CancelKnobs]\n\n\nclass RetailCancelEnv(Env):",
    ),
    "annotated alias": (
        "class RetailCancelEnv(CapabilityEnv):",
        "Env: type = CapabilityEnv\n\n\nclass RetailCancelEnv(Env):",
    ),
    "module attribute": (
        "class RetailCancelEnv(CapabilityEnv):",
        "import trace_envs.core as core\n\n\nclass RetailCancelEnv(core.CapabilityEnv):",
    ),
    "generic in-module base": (
        "class RetailCancelEnv(CapabilityEnv):",
        KNOBS.replace("class RetailCancelEnv(CapabilityEnv[CancelKnobs]):", "")
        + "class Base(CapabilityEnv[CancelKnobs]):\n    max_turns = 8\n\n\nclass RetailCancelEnv(Base):",
    ),
}


@pytest.mark.parametrize("form", sorted(SUBCLASS_FORMS))
def test_every_valid_way_of_subclassing_the_contract_is_accepted(form: str) -> None:
    old, new = SUBCLASS_FORMS[form]
    source = GOOD.replace(old, new)
    result = contract_gate(source, GateContext(target="retail", capability="precondition_verification"))
    assert result.passed, [f.message for f in result.findings]
    assert result.details["env_class"] == "RetailCancelEnv"


@pytest.mark.parametrize("form", sorted(SUBCLASS_FORMS))
def test_validate_sees_an_env_in_every_form_the_contract_accepts(form: str) -> None:
    """Both ask the one base resolver (gates/env_classes.py); validate used to miss ``CapabilityEnv[K]``."""
    from trace_envs.synthesis.module_checks import defines_no_env

    old, new = SUBCLASS_FORMS[form]
    assert defines_no_env(Path("m.py"), GOOD.replace(old, new)) is None


def test_a_subscripted_class_that_is_not_the_contract_is_not_an_env() -> None:
    source = GOOD.replace("class RetailCancelEnv(CapabilityEnv):", "class RetailCancelEnv(dict[str, int]):")
    assert "no-env-class" in check(source)


def test_an_env_base_the_targets_kit_exports_is_the_contract_without_trust() -> None:
    """The device kit's DeviceTaskEnv is a CapabilityEnv: a module subclassing it is an env, nothing trusted;
    the same base from outside the target's kit is not."""
    from generated_envs import permission_recovery

    source = Path(permission_recovery.__file__).read_text(encoding="utf-8")
    assert "from trace_envs.domains.device.tasks import DeviceTaskEnv" in source
    passed = contract_gate(source, GateContext(target="device", capability="permission_error_recovery"))
    assert passed.status == "passed", [f.render() for f in passed.findings]
    elsewhere = source.replace("trace_envs.domains.device.tasks import", "trace_envs.domains.retail.records import")
    rejected = contract_gate(elsewhere, GateContext(target="device", capability="permission_error_recovery"))
    assert rejected.status == "failed" and "no subclass of CapabilityEnv" in rejected.findings[0].message
