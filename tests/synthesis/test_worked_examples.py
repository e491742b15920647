"""What the prompt and the guide show a generator passes the gates as it stands: every env module in each
target's generation prompt (its worked examples and the guide's starter), and the guide's starter copied
verbatim from docs/writing-an-env.md, with nothing trusted besides the target's kit."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from trace_envs.synthesis import GateContext, PromptBudget, SynthesisRequest, generation_prompt
from trace_envs.synthesis.gates.validation import infer_target, validate_source
from trace_envs.synthesis.generation.prompt import worked_examples

TARGETS = ("airline", "retail", "device")
CAPABILITY = "precondition_verification"
GUIDE = REPO_ROOT / "docs" / "writing-an-env.md"
FENCED = re.compile(r"```python\n(.*?)\n```", re.DOTALL)


def env_modules(text: str) -> list[str]:
    """Every distinct fenced Python block of ``text`` that is a whole env module (a class with ``generate``)."""
    blocks = [b for b in FENCED.findall(text) if re.search(r"^class \w+\(", b, re.M) and "def generate(" in b]
    return list(dict.fromkeys(blocks))


def prompt_of(target: str) -> str:
    request = SynthesisRequest(
        capability="precondition_verification", description="Check before acting.", target=target
    )
    return generation_prompt(request)


@functools.cache
def failures(source: str, tau2_data: Path) -> list[str]:
    """The gate findings of ``source`` validated as ``trace-envs validate`` does with no --trust (empty: passed)."""
    target = infer_target(source)
    assert target is not None, "validate could not tell the module's target from its imports"
    report = validate_source(source, GateContext(target=target, data=tau2_data, trusted_imports=()))
    return [f"{r.gate}: {f.message}" for r in report.results if r.status == "failed" for f in r.findings]


@pytest.mark.parametrize("target", TARGETS)
def test_every_env_module_in_the_prompt_passes_validate(target: str, tau2_data: Path) -> None:
    modules = env_modules(prompt_of(target))
    assert modules, f"the {target} prompt shows no env module"
    assert any(infer_target(source) == target for source in modules), f"the {target} prompt shows no {target} env"
    shown = worked_examples(target, CAPABILITY, PromptBudget())
    assert all(example["source"] in modules for example in shown), "a worked example was not extracted"
    for source in modules:
        first_line = source.splitlines()[0]
        assert failures(source, tau2_data) == [], first_line


def test_the_guides_starter_is_on_a_real_target_and_passes_validate_verbatim(tau2_data: Path) -> None:
    starter = env_modules(GUIDE.read_text(encoding="utf-8"))[0]
    assert infer_target(starter) == "retail"
    assert "CapabilityEnv[RetailCancelKnobs]" in starter  # the generic knobs form the guide teaches
    assert failures(starter, tau2_data) == []
