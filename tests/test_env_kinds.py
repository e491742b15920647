"""Env kinds are named where an env is registered (``env_kind``) and consumers read the env contract
(``EnvProtocol``), so almost nothing outside core tests an env's class tree (issue 36, item 3)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import trace_envs
from trace_envs.core import EnvProtocol, VerifiableEnv, contract_gaps, declares_capability
from trace_envs.registry import env_kind, list_capability_envs, list_envs, register_env
from trace_envs.registry.targets import target, target_env_ids
from trace_envs.rollout.scripted import OraclePolicy
from trace_envs.targets.tau2.env import Tau2RetailEnv

from .conftest import REPO_ROOT
from .targets.fake_models import ScriptedUserModel

MAX_CLASS_TESTS = 3
"""``isinstance``/``issubclass`` tests against env classes allowed outside core (finding the env classes a module
defines: ``plugins.defined_envs`` and the synthesis contract gate's trusted bases)."""
ROOT_ENV_CLASSES = {"Env", "ConversationEnv", "CapabilityEnv", "BoxedEnv", "EnvProtocol", "VerifiableEnv"}


def _bases(node: ast.ClassDef) -> set[str]:
    """The names a class derives from (``gym.Env`` and ``Env[str, str]`` both name ``Env``)."""
    names = set()
    for base in node.bases:
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            names.add(base.id)
        elif isinstance(base, ast.Attribute):
            names.add(base.attr)
    return names


def _trees() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted((REPO_ROOT / "trace_envs").rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def env_class_names() -> set[str]:
    """Every class of the library that is an env: the roots and whatever derives from one, to a fixed point."""
    classes = [node for _, tree in _trees() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    names = set(ROOT_ENV_CLASSES)
    while True:
        more = {node.name for node in classes if _bases(node) & names} - names
        if not more:
            return names
        names |= more


def _named(node: ast.expr) -> set[str]:
    """The class names an ``isinstance``/``issubclass`` second argument mentions."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def class_tests(env_classes: set[str]) -> list[str]:
    """``file:line`` of each ``isinstance``/``issubclass`` call outside core whose class argument names an env class."""
    found = []
    for path, tree in _trees():
        rel = path.relative_to(REPO_ROOT).as_posix()
        if rel.startswith("trace_envs/core/"):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass")
                and len(node.args) == 2
                and _named(node.args[1]) & env_classes
            ):
                found.append(f"{rel}:{node.lineno}")
    return found


def test_at_most_three_class_tree_tests_of_envs_outside_core() -> None:
    env_classes = env_class_names()
    assert {"Tau2RetailEnv", "DeviceEnv", "DeviceTaskEnv", "Tau2VariantEnv"} <= env_classes
    found = class_tests(env_classes)
    assert len(found) <= MAX_CLASS_TESTS, (
        f"{len(found)} isinstance/issubclass tests of env classes outside core ({', '.join(found)}): ask "
        "trace_envs.registry.env_kind(env_id) or read the env contract (trace_envs.core.EnvProtocol) instead"
    )


def test_the_scan_finds_a_class_test() -> None:
    source = "if isinstance(env.unwrapped, (CapabilityEnv, str)):\n    pass\nok = isinstance(x, Capability)\n"
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert [bool(_named(c.args[1]) & {"CapabilityEnv"}) for c in calls] == [True, False]


def test_every_registered_id_has_its_kind() -> None:
    kinds = {env_id: env_kind(env_id) for env_id in list_envs()}
    assert kinds["trace/order-cancel-v0"] == "capability"
    assert kinds["trace/tau2-retail-v0"] == kinds["trace/tau2-airline-v0"] == "tau2_target"
    assert kinds["trace/device-v0"] == "device_target"
    assert trace_envs.env_kind is env_kind
    with pytest.raises(gym.error.Error):
        env_kind("trace/no-such-env-v0")


def test_capability_envs_are_never_targets() -> None:
    ids = list_capability_envs()
    assert "trace/order-cancel-v0" in ids
    assert not set(ids) & set(target_env_ids())


def test_an_unknown_kind_is_refused_and_a_plain_registration_has_none() -> None:
    with pytest.raises(ValueError, match="unknown env kind 'robot'"):
        register_env("trace/kinds-test-v0", "m:C", env_kind="robot")  # type: ignore[arg-type]
    gym.register(id="trace/kinds-plain-v0", entry_point="m:C")
    try:
        assert env_kind("trace/kinds-plain-v0") is None
    finally:
        del gym.registry["trace/kinds-plain-v0"]


def test_every_kind_satisfies_the_contract() -> None:
    for env_id in ("trace/order-cancel-v0", "trace/device-v0"):
        env = gym.make(env_id).unwrapped
        assert contract_gaps(env) == [] and declares_capability(env)
        typed: VerifiableEnv = env  # type: ignore[assignment]
        assert typed.capability.name
    assert contract_gaps(Tau2RetailEnv) == ["toolset", "tool_schemas"]  # set per instance, in the constructor
    assert not declares_capability(Tau2RetailEnv)
    assert contract_gaps(gym.make("CartPole-v1").unwrapped)[:2] == ["capability", "toolset"]


def test_the_tau2_targets_oracle_is_its_own(shared_data: Path) -> None:
    user = ScriptedUserModel(["I want to exchange items of my order.", "Yes, please go ahead."])
    env = gym.make("trace/tau2-retail-v0", data_dir=str(shared_data / "tau2"), user_model=user, task_id="0")
    inner: EnvProtocol = env.unwrapped  # type: ignore[assignment]
    assert contract_gaps(inner) == [] and inner.capability is None
    with pytest.raises(RuntimeError, match="call reset"):
        inner.oracle_actions()
    env.reset(seed=0)
    oracle = inner.oracle_actions()
    assert oracle == target("retail").oracle(inner) == target("retail").flawed(inner, [])
    assert OraclePolicy().actions_for(env) == oracle and inner.flawed_actions() is None
    with pytest.raises(RuntimeError, match="evaluated when it ends"):
        inner.verify()
    for action in oracle:
        *_, terminated, truncated, _info = env.step(action)
        if terminated or truncated:
            break
    assert inner.verify().reward == 1.0
