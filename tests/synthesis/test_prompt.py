"""The generation prompt: every part the issue lists, from analysis.json and the store, within its budget;
the repair prompt; and taking the module out of a reply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trace_envs.analysis.runner import load_analysis
from trace_envs.registry import get_domain
from trace_envs.synthesis import PromptBudget, SynthesisRequest, generation_prompt
from trace_envs.synthesis.generation.evidence import request_from_analysis
from trace_envs.synthesis.generation.extract import extract_module
from trace_envs.synthesis.generation.prompt import contract_guide, repair_prompt, worked_examples

from .conftest import CAPABILITY


@pytest.fixture(scope="module")
def request_(analysis_file: Path) -> SynthesisRequest:
    return request_from_analysis(load_analysis(analysis_file), CAPABILITY, "retail", base=analysis_file.parent)


def test_the_request_carries_what_analysis_saw(request_: SynthesisRequest, analysis_file: Path) -> None:
    analysis = load_analysis(analysis_file)
    assert request_.description == analysis.dictionary.get(CAPABILITY).description  # type: ignore[union-attr]
    assert request_.failure_patterns and all(p.strip() for p in request_.failure_patterns)
    assert len(request_.excerpts) == 3 and all("FAILURE" in e for e in request_.excerpts)
    assert all("AGENT CALLS" in e for e in request_.excerpts)  # real transcripts from the store
    assert request_.notes == []


def test_the_prompt_holds_every_part(request_: SynthesisRequest) -> None:
    prompt = generation_prompt(request_)
    domain = get_domain("retail")
    assert f"Name: {CAPABILITY}" in prompt and request_.description in prompt
    assert request_.failure_patterns[0] in prompt and request_.excerpts[0] in prompt
    assert json.dumps(domain.toolset.schemas(), ensure_ascii=False) in prompt  # tool schemas, exactly
    assert json.dumps(domain.state_model.model_json_schema(), ensure_ascii=False) in prompt  # state model
    assert domain.policy.strip() in prompt
    assert contract_guide().strip() in prompt  # the contract guide, verbatim
    examples = worked_examples("retail", CAPABILITY, PromptBudget())
    assert 1 <= len(examples) <= 2 and examples[0]["env_id"] == "trace/retail-order-cancel-v0"  # same capability first
    assert "trace/precondition-v0" not in {e["env_id"] for e in examples}  # it imports generated_envs: not shown
    assert "generated_envs" not in "".join(e["source"] for e in examples)
    assert all(e["source"] in prompt for e in examples)
    for rule in ("Seed purity", "reference solution", "flawed solution", "evaluation tasks", "at least 20%"):
        assert rule in prompt
    assert prompt.rstrip().endswith("```") and "one fenced Python module and nothing else" in prompt
    assert "from trace_envs.domains.retail import RETAIL" in prompt


def test_the_prompt_is_trimmed_to_its_budget(request_: SynthesisRequest, analysis_file: Path) -> None:
    small = PromptBudget(patterns=1, excerpts=1, excerpt_tokens=200, examples=1, example_chars=20_000)
    trimmed = request_from_analysis(load_analysis(analysis_file), CAPABILITY, "retail", budget=small)
    assert len(trimmed.excerpts) == 1 and len(trimmed.excerpts[0]) <= 200 * 4 + 200
    assert len(trimmed.failure_patterns) == 1
    prompt = generation_prompt(trimmed, small)
    assert len(worked_examples("retail", CAPABILITY, small)) <= 1
    assert len(prompt) < len(generation_prompt(request_))
    none = PromptBudget(examples=0)
    assert "Worked examples" not in generation_prompt(request_, none)


def test_a_missing_store_is_said_not_hidden(analysis_file: Path, tmp_path: Path) -> None:
    request = request_from_analysis(load_analysis(analysis_file), CAPABILITY, "retail", store=tmp_path / "gone.jsonl")
    assert request.excerpts == [] and "was not found" in request.notes[0]
    with pytest.raises(ValueError, match=r"^capability: 'no_such' is not in the analysis dictionary"):
        request_from_analysis(load_analysis(analysis_file), "no_such", "retail")


def test_bad_requests_name_the_field() -> None:
    with pytest.raises(ValueError, match="capability: 'Not Snake'"):
        SynthesisRequest(capability="Not Snake", description="d", target="retail")
    with pytest.raises(ValueError, match="target: unknown target 'shop'"):
        SynthesisRequest(capability="x", description="d", target="shop")


def test_the_repair_prompt_separates_new_and_repeated_findings() -> None:
    text = repair_prompt(["[contract] line 3: new problem"], ["[parse] old problem"], "contract")
    assert "rejected by the contract gate" in text
    assert text.index("line 3: new problem") < text.index("Still not fixed") < text.index("old problem")
    assert "one fenced Python module and nothing else" in text
    assert "Still not fixed" not in repair_prompt(["x"], [], "parse")


@pytest.mark.parametrize(
    ("reply", "module", "rule"),
    [
        ("Here it is:\n```python\nx = 1\n```\nDone.", "x = 1\n", None),
        ("```py\nx = 1\n```", "x = 1\n", None),
        ("x = 1\n", "x = 1\n", None),  # unfenced but Python
        ("```python\nx = 1\n```\n```python\ny = 2\n```", None, "several-modules"),
        ("Sorry, I cannot help with that.", None, "no-module"),
        ("```python\nx = 1\n", None, "no-module"),  # cut off before the closing fence
        ("```json\n{}\n```", None, "no-module"),
    ],
)
def test_taking_the_module_out_of_a_reply(reply: str, module: str | None, rule: str | None) -> None:
    source, result = extract_module(reply)
    assert source == module
    assert result.status == ("passed" if rule is None else "failed")
    if rule is not None:
        assert result.findings[0].rule == rule and "exactly one fenced" in result.findings[0].fix


@pytest.mark.parametrize("target_name", ["airline", "retail", "device"])
def test_the_prompt_documents_the_kits_helpers_from_their_code(target_name: str) -> None:
    """Each helper the target declares is in its kit and shown with its signature and whole docstring."""
    import inspect

    from trace_envs.guide import helper_docs
    from trace_envs.registry import resolve
    from trace_envs.registry.targets import target
    from trace_envs.synthesis.gates.static_policy import allowed_module

    spec = target(target_name)
    assert spec.helpers
    prompt = generation_prompt(SynthesisRequest(capability="some_skill", description="x", target=target_name))
    for reference in spec.helpers:
        module, name = reference.split(":")
        assert allowed_module(module, target_name), f"{reference} is outside the {target_name} kit"
        assert f"`from {module} import {name}`" in prompt
        doc = inspect.getdoc(resolve(reference)) or ""
        assert doc and doc.splitlines()[-1].strip() in prompt
    for entry in helper_docs(spec.helpers):
        assert f"{entry['name']}{entry['shape']}" in prompt
        for method in entry["methods"]:
            assert f"`{method['name']}{method['shape']}`" in prompt
    assert any(word in prompt for word in ("Raises", "raises"))


def test_a_helper_without_a_docstring_is_refused() -> None:
    from trace_envs.guide import helper_docs

    with pytest.raises(ValueError, match="without a docstring"):
        helper_docs((f"{__name__}:undocumented_helper",))
    with pytest.raises(ValueError, match="not a function or class"):
        helper_docs(("trace_envs.domains.retail.records:ADDRESS_FIELDS",))


def undocumented_helper(rng: object) -> None:
    return None


def prompt_for(target_name: str) -> str:
    return generation_prompt(SynthesisRequest(capability="some_skill", description="x", target=target_name))


def test_the_prompt_asks_for_an_illustrative_example_and_says_what_the_line_limit_counts() -> None:
    """A writer that cannot run code cannot know "one concrete seed"; the limits name exactly what is counted."""
    from trace_envs.guide import FUNCTION_MAX_LINES, MODULE_MAX_LINES
    from trace_envs.synthesis.gates.static_policy import MAX_SOURCE_CHARS

    prompt = prompt_for("retail")
    assert "one concrete seed" not in prompt and "`Example:` (an illustrative case" in " ".join(prompt.split())
    flat = " ".join(prompt.split())
    assert f"at most {MODULE_MAX_LINES} lines, counted as `len(source.splitlines())`" in flat
    assert "docstring, comments and blank lines included" in flat
    assert f"over {FUNCTION_MAX_LINES} lines, from its `def` line to its last" in flat
    assert f"caps a file at {MAX_SOURCE_CHARS:,} characters" in flat


def test_tool_names_may_come_in_any_order_as_the_prompt_says() -> None:
    """The worked example names its tools out of the domain's order; the agent sees the domain's order anyway."""
    import gymnasium as gym

    import trace_envs  # noqa: F401  (registers the envs)

    assert "named in any order: the agent sees them in the domain's own order" in " ".join(prompt_for("retail").split())
    env = gym.make("trace/retail-order-cancel-v0").unwrapped
    names = env.tool_names
    domain_order = [s["function"]["name"] for s in env.domain.toolset.schemas() if s["function"]["name"] in names]
    assert list(names) != domain_order  # the example's own order differs...
    assert [s["function"]["name"] for s in env.tool_schemas] == domain_order  # ...and the agent sees the domain's
    shuffled = env.domain.toolset.subset(reversed(names))
    assert [s["function"]["name"] for s in shuffled.schemas()] == domain_order


def test_the_records_docstrings_say_when_and_how_to_change_records() -> None:
    prompt = " ".join(prompt_for("retail").split())
    assert '["variants"][item_id]["available"] = False' in prompt and "leave them alone" in prompt
    airline = " ".join(prompt_for("airline").split())
    assert "records.flights[number] = airline_flight(number, origin, destination" in airline
    assert "leave them alone" in airline


def test_a_record_changed_after_the_plan_is_made_is_not_in_the_reference_s_state() -> None:
    """What the records' docstrings warn of: ``state()`` hands over the same dicts, and the plan runs on a copy."""
    import random

    from trace_envs.core import Plan
    from trace_envs.domains.retail import RETAIL
    from trace_envs.domains.retail.records import RetailRecords

    records = RetailRecords(random.Random(1))
    records.add_order(records.add_user(), "pending")
    plan = Plan(RETAIL, records.state())
    product_id = sorted(records.products)[0]
    item_id = sorted(records.products[product_id]["variants"])[0]
    records.products[product_id]["variants"][item_id]["available"] = False
    assert plan.initial_state["products"][product_id]["variants"][item_id]["available"] is False
    assert RETAIL.dump_state(plan.state)["products"][product_id]["variants"][item_id]["available"] is True


def test_the_prompt_says_how_the_candidate_answers_are_built() -> None:
    """So that an author knows what ``forbidden_facts`` must cover; the count is the property suite's own."""
    from trace_envs.guide import GAMING_SOURCE_SEEDS
    from trace_envs.testing.properties import CONSTANT_ANSWER_SOURCES

    assert GAMING_SOURCE_SEEDS == CONSTANT_ANSWER_SOURCES
    prompt = " ".join(prompt_for("retail").split())
    assert '"lookups, then every candidate answer"' in prompt
    assert f"on the {CONSTANT_ANSWER_SOURCES} seeds just past the checked ones" in prompt
    assert "every `required_facts` and `forbidden_facts` entry of those" in prompt
    assert "`forbidden_facts` covering the other outcomes" in prompt
