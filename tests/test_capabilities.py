"""The capability registry: one home per capability, its env's declaration, read by analysis, probes,
flawed policies and the CLI (which repeat no capability name or description of their own)."""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator

import gymnasium as gym
import pytest

import trace_envs  # noqa: F401  (registers the shipped envs)
from generated_envs.probes.datetime_reasoning import probe_datetime
from generated_envs.probes.precondition import probe_precondition
from tests.conftest import REPO_ROOT
from trace_envs.analysis import known_capabilities, probe_table
from trace_envs.core import Capability, CapabilityEnv, Task, UserScript
from trace_envs.domains import tau2_flaws as shipped_rules
from trace_envs.domains.device.flaws import date_arithmetic_in_head, give_up_after_blocked_call
from trace_envs.domains.toy_shop import TOY_SHOP
from trace_envs.registry.capabilities import (
    capabilities,
    capability_envs,
    flaw_rules,
    get_capability,
)
from trace_envs.rollout import scripted
from trace_envs.targets.tau2.flaws import tau2_deficits

SHIPPED = {
    "datetime_reasoning": "trace/datetime-v0",
    "multi_step_task_completion": "trace/multi-step-v0",
    "permission_error_recovery": "trace/permission-recovery-v0",
    "precondition_verification": "trace/precondition-v0",
    "structured_data_reasoning": "trace/structured-data-v0",
    "tool_calling_precision": "trace/tool-precision-v0",
}


def test_each_shipped_capability_comes_from_its_envs_declaration() -> None:
    from trace_envs.registry import env_class

    found = capabilities()
    assert set(SHIPPED) <= set(found)
    for name, env_id in SHIPPED.items():
        cls = env_class(env_id)
        assert isinstance(cls, type) and issubclass(cls, CapabilityEnv)
        assert found[name] is cls.capability  # the home: the env that carries the probe
        assert known_capabilities()[name] == cls.capability.description
    # the starter envs declare precondition_verification too, without probe or flaw rule: not its home
    shipped = [e for e in capability_envs()["precondition_verification"] if e.startswith("trace/")]
    assert shipped == ["trace/order-cancel-v0", "trace/precondition-v0", "trace/retail-order-cancel-v0"]
    assert "device_tool_use" not in found  # target-benchmark envs train nothing
    with pytest.raises(KeyError, match=r"declared: (\w+, )*datetime_reasoning"):
        get_capability("nope")


def test_probes_and_flaw_rules_are_the_declared_functions() -> None:
    table = probe_table()
    assert table["precondition_verification"] is probe_precondition
    assert table["datetime_reasoning"] is probe_datetime
    rules = flaw_rules("tau2")
    assert rules == {
        "multi_step_task_completion": shipped_rules.stop_after_first_write,
        "precondition_verification": shipped_rules.skip_lookups_before_write,
        "structured_data_reasoning": shipped_rules.near_miss_argument,
        "tool_calling_precision": shipped_rules.near_miss_argument,
    }
    assert tau2_deficits() == list(rules)
    assert flaw_rules("device") == {
        "datetime_reasoning": date_arithmetic_in_head,
        "permission_error_recovery": give_up_after_blocked_call,
    }


def test_flawed_policy_specs_name_declared_capabilities(registered: list[str]) -> None:
    """``flawed:<capability>`` accepts exactly the registry's names, a user's env outside ``trace/`` included."""
    scripted.check_capabilities(["precondition_verification", "datetime_reasoning"])
    with pytest.raises(ValueError, match=r"unknown capability 'precondition' .*: .*precondition_verification"):
        scripted.check_capabilities(["precondition", "datetime_reasoning"])
    assert "declared_elsewhere" not in scripted.known_capabilities()
    gym.register(id="elsewhere/Declared-v0", entry_point=_env("declared_elsewhere", None))
    registered.append("elsewhere/Declared-v0")
    assert scripted.known_capabilities() == sorted(capabilities())
    assert "declared_elsewhere" in scripted.known_capabilities()


def _env(name: str, probe: str | None) -> type[CapabilityEnv]:
    class Declaring(CapabilityEnv):
        capability = Capability(name=name, description="A test capability.", probe=probe)
        domain = TOY_SHOP

        def generate(self, rng: random.Random) -> Task:
            return Task(initial_state={"orders": {}}, goal="g", user=UserScript(opening="Hi"), solution=["Done."])

    return Declaring


@pytest.fixture
def registered() -> Iterator[list[str]]:
    ids: list[str] = []
    yield ids
    for env_id in ids:
        del gym.registry[env_id]


def test_a_capability_with_two_different_homes_is_an_error(registered: list[str]) -> None:
    for index, probe in enumerate(
        (
            "generated_envs.probes.datetime_reasoning:probe_datetime",
            "generated_envs.probes.tool_precision:probe_precision",
        )
    ):
        env_id = f"trace/test-twice-{index}-v0"
        gym.register(id=env_id, entry_point=_env("declared_twice", probe))
        registered.append(env_id)
    with pytest.raises(ValueError, match=r"'declared_twice' is declared with different probes.*test-twice-0-v0"):
        capabilities()


def test_a_new_registration_is_seen(registered: list[str]) -> None:
    assert "seen_later" not in capabilities()
    gym.register(id="trace/test-seen-later-v0", entry_point=_env("seen_later", None))
    registered.append("trace/test-seen-later-v0")
    assert capabilities()["seen_later"].description == "A test capability."
    assert "seen_later" not in known_capabilities()  # no probe: not one the probes analyst can label


def test_analysis_and_rollout_repeat_no_capability_name() -> None:
    """The modules that used to keep their own tables of names (or mention one) hold none as string values."""
    modules = (
        "analysis/known.py",
        "analysis/probes.py",
        "targets/tau2/flaws.py",
        "targets/device/flaws.py",
        "domains/tau2_flaws.py",
        "domains/device/flaws.py",
        "rollout/scripted.py",
        "cli/rollout.py",
    )
    for module in (f"trace_envs/{m}" for m in modules):
        tree = ast.parse((REPO_ROOT / module).read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        strings = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
        ]
        assert not [s for s in strings for name in SHIPPED if name in s], module


SHIPPED_NAME = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, SHIPPED)) + r")(?![A-Za-z0-9_])")
"""A shipped capability's name as a word of a string (``envs/precondition_verification.py`` too)."""


def docstring_ids(tree: ast.AST) -> set[int]:
    """The ``id`` of every module, class and function docstring node of ``tree``."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }


def shipped_names_in(source: str, cli: bool) -> list[tuple[int, str]]:
    """(line, name) of every string of ``source`` that names a shipped capability: messages, help texts and
    field descriptions included; docstrings only in the cli, where a command's docstring is its help."""
    tree = ast.parse(source)
    skip = set() if cli else docstring_ids(tree)
    return [
        (node.lineno, match.group(1))
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        for match in SHIPPED_NAME.finditer(node.value)
    ]


def test_the_name_scan_reads_help_texts_and_messages_but_not_library_docstrings() -> None:
    source = (
        '"""Module doc: precondition_verification."""\n'
        'def command() -> None:\n    """Example: trace-envs validate envs/precondition_verification.py"""\n'
        'HELP = "e.g. flawed:tool_calling_precision"\nOTHER = "tool_calling_precision_v2"\n'
    )
    assert shipped_names_in(source, cli=False) == [(4, "tool_calling_precision")]
    assert sorted(shipped_names_in(source, cli=True)) == [
        (1, "precondition_verification"), (3, "precondition_verification"), (4, "tool_calling_precision"),
    ]  # fmt: skip


def test_no_module_of_the_library_uses_a_shipped_capability_name_as_a_value() -> None:
    """A shipped capability is named in code only by its env (and the demo's planted deficits): no table, key,
    comparison, message, field description or help text elsewhere holds its name (examples use a neutral one)."""
    found = []
    for path in sorted((REPO_ROOT / "trace_envs").rglob("*.py")):
        name = path.relative_to(REPO_ROOT).as_posix()
        if name == "trace_envs/pipeline/demo.py":
            continue
        for line, capability in shipped_names_in(path.read_text(encoding="utf-8"), name.startswith("trace_envs/cli/")):
            found.append(f"{name}:{line} {capability}")
    assert not found, "\n".join(found)
