"""The typed env-author contract: knobs typed by the class's type argument, the current task as a public
accessor, the flawed solution as a typed field of the task, and no private hook used outside core."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from tests.conftest import REPO_ROOT
from trace_envs.core import Capability, CapabilityEnv, NoKnobs, Task, ToolCall, UserScript
from trace_envs.core.env import format_steps
from trace_envs.domains.toy_shop import TOY_SHOP


class SizeKnobs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    size: int = 2


class SizedEnv(CapabilityEnv[SizeKnobs]):
    """An env whose knobs model comes from its type argument alone."""

    capability = Capability(name="sized", description="Says its size.")
    domain = TOY_SHOP

    def generate(self, rng: random.Random) -> Task:
        size = self.knobs.size  # typed: no assert isinstance
        return Task(
            initial_state={"orders": {}},
            goal="Say the size.",
            user=UserScript(opening="What size?"),
            solution=[f"The size is {size}."],
            flawed_solution=[ToolCall(name="get_order_details", arguments={"order_id": "#W1"}), "No idea."],
            required_facts=[str(size)],
        )


class SubSizedEnv(SizedEnv):
    """A subclass keeps its parent's knobs."""


class PlainEnv(SizedEnv):
    """``Knobs = ...`` still works, and wins over the type argument."""

    Knobs = NoKnobs


def test_the_type_argument_is_the_knobs_model() -> None:
    assert SizedEnv.Knobs is SizeKnobs and SubSizedEnv.Knobs is SizeKnobs and PlainEnv.Knobs is NoKnobs
    env = SizedEnv(size=5)
    assert isinstance(env.knobs, SizeKnobs) and env.knobs.size == 5
    with pytest.raises(ValueError, match="invalid options for SizedEnv"):
        SizedEnv(colour="red")


def test_current_task_is_public_and_says_when_there_is_none() -> None:
    env = SizedEnv(size=3)
    with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
        _ = env.current_task
    env.reset(seed=1)
    assert env.current_task.task_id == "sized-1" and env.current_task is env.task


def test_flawed_actions_format_the_tasks_flawed_solution() -> None:
    env = SizedEnv()
    env.reset(seed=0)
    assert env.flawed_actions() == format_steps(env.current_task.flawed_solution or [])
    assert env.flawed_actions() == ['{"name": "get_order_details", "arguments": {"order_id": "#W1"}}', "No idea."]
    env.task = env.current_task.model_copy(update={"flawed_solution": None})
    assert env.flawed_actions() is None


def test_shipped_envs_do_not_override_flawed_actions() -> None:
    from generated_envs import SHIPPED_ENVS
    from trace_envs.registry import env_class

    for env_id in SHIPPED_ENVS:
        cls = env_class(env_id)
        assert isinstance(cls, type) and issubclass(cls, CapabilityEnv)
        assert cls.flawed_actions is CapabilityEnv.flawed_actions, f"{env_id} overrides flawed_actions()"


def _private_names(paths: list[Path]) -> set[str]:
    """Methods and ``self._x`` attributes with one leading underscore that these modules' classes define."""
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                if isinstance(node.ctx, ast.Store):
                    names.add(node.attr)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


NOT_PYTHON = {"tests/synthesis/redteam/syntax_error.py"}
"""Files that do not parse on purpose (a synthesis gate must stop them)."""


def test_no_private_hook_of_core_is_used_outside_core() -> None:
    """``grep`` finds no use of core's private methods or attributes (``_require_task``, ``_talk``, …) elsewhere."""
    core = sorted((REPO_ROOT / "trace_envs" / "core").glob("*.py"))
    private = _private_names(core)
    assert {"_gold_hash", "_pending_seed", "_unanswered"} <= private  # the scan sees core's privates
    outside = [
        p
        for folder in ("trace_envs", "generated_envs", "examples", "benchmarks", "tests")
        for p in sorted((REPO_ROOT / folder).rglob("*.py"))
        if "core" not in p.relative_to(REPO_ROOT).parts[:2] and p.relative_to(REPO_ROOT).as_posix() not in NOT_PYTHON
    ]
    uses = []
    for path in outside:
        own = _private_names([path])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private and node.attr not in own:
                uses.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} .{node.attr}")
    assert not uses, "private core names used outside core:\n" + "\n".join(uses)
