"""The writing-an-env guide is generated from the code it describes: docs/writing-an-env.md is exactly
``env_guide()``, it opens with the starter env (on a real target) whole, and its hook list is every hook an env uses."""

from __future__ import annotations

import re

import pytest

from generated_envs import SHIPPED_ENVS
from tests.conftest import REPO_ROOT
from trace_envs.core import CapabilityEnv
from trace_envs.guide import HOOKS, attribute_docs, env_guide, hook_lines
from trace_envs.registry import env_class

DOC = REPO_ROOT / "docs" / "writing-an-env.md"
STARTER = REPO_ROOT / "generated_envs" / "retail_order_cancel.py"


def test_the_docs_page_is_the_generated_guide() -> None:
    assert DOC.read_text(encoding="utf-8") == env_guide(), (
        "docs/writing-an-env.md is stale: run `python -m trace_envs.guide --write docs/writing-an-env.md`"
    )


def test_the_guide_opens_with_the_starter_env_whole() -> None:
    first_block = re.search(r"```python\n(.*?)\n```", env_guide(), re.DOTALL)
    assert first_block is not None
    assert first_block.group(1) == STARTER.read_text(encoding="utf-8").rstrip("\n")
    assert len(STARTER.read_text(encoding="utf-8").splitlines()) <= 100


def test_each_hook_has_one_documented_line() -> None:
    lines = hook_lines(CapabilityEnv)
    assert [line["name"] for line in lines] == list(HOOKS)
    assert all(line["doc"] and "\n" not in line["doc"] for line in lines)
    guide = env_guide()
    assert all(f"- `{line['name']}{line['shape']}`: {line['doc']}" in guide for line in lines)


def test_the_hooks_are_everything_the_shipped_envs_set_or_override() -> None:
    contract = set(dir(CapabilityEnv)) | set(attribute_docs(CapabilityEnv)) | set(CapabilityEnv.__annotations__)
    used: dict[str, str] = {}
    for env_id in SHIPPED_ENVS:
        cls = env_class(env_id)
        assert isinstance(cls, type) and issubclass(cls, CapabilityEnv)
        for klass in cls.__mro__[: cls.__mro__.index(CapabilityEnv)]:
            for name in vars(klass):
                if name in contract and not name.startswith("__"):
                    used.setdefault(name, klass.__name__)
    assert set(used) <= set(HOOKS), {n: c for n, c in used.items() if n not in HOOKS}
    assert {"capability", "domain", "max_turns", "generate", "Knobs", "choose_domain", "policy_text"} <= set(used)


def test_an_undocumented_hook_is_refused() -> None:
    class Undocumented(CapabilityEnv):
        def make_user(self, task):  # type: ignore[no-untyped-def]
            return super().make_user(task)

    with pytest.raises(ValueError, match=r"Undocumented\.make_user is a hook without a docstring"):
        hook_lines(Undocumented)
