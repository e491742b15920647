"""Answer parsing with repair, discovery merging, trajectory rendering (budget, nothing that gives the
answer away), agreement and kappa."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from trace_envs.analysis import Label, agreement, cohen_kappa, episode_id, render_trajectory
from trace_envs.analysis.discovery import discover, merge_capabilities
from trace_envs.analysis.labelling import LabelAnswer, check_complete, label_one, normalize_answer
from trace_envs.analysis.models import CapabilityDictionary, TrajectoryLabels, to_snake_case
from trace_envs.analysis.parsing import AnalystOutputError, extract_json, parse_answer
from trace_envs.llm.base import ChatResponse, Usage

from .conftest import episode


class ScriptedAnalyst:
    """A ChatModel that answers from a list, recording each conversation it was sent."""

    spec = "scripted:analyst"

    def __init__(self, answers: list[str]):
        self.answers = list(answers)
        self.conversations: list[list[dict[str, Any]]] = []

    def chat(self, messages: list[dict[str, Any]], tools: Any = None, **sampling: Any) -> ChatResponse:
        self.conversations.append(messages)
        return ChatResponse(content=self.answers.pop(0), usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.01))

    async def achat(self, messages: list[dict[str, Any]], tools: Any = None, **sampling: Any) -> ChatResponse:
        return self.chat(messages, tools, **sampling)


def test_extract_json_from_fences_prose_and_bare() -> None:
    assert extract_json('Sure!\n```json\n{"a": 1}\n```\nThanks') == {"a": 1}
    assert extract_json('The answer is {"a": [1, 2]} as asked.') == {"a": [1, 2]}
    assert extract_json("[1, 2]") == [1, 2]
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("no json here")


def test_label_answers_in_several_shapes() -> None:
    names = ["a", "b"]
    for data in (
        {"labels": [{"capability": "a", "label": "na"}, {"capability": "b", "label": "LACKING", "rationale": "x\ny"}]},
        [{"capability": "a", "label": "NA"}, {"capability": "b", "label": "LACKING"}],
        {"a": "NA", "b": {"label": "LACKING", "rationale": "r"}},
    ):
        answer = parse_answer(__import__("json").dumps(data), LabelAnswer, normalize_answer)
        labels = check_complete(answer, names)
        assert labels["a"].label == Label.NA and labels["b"].label == Label.LACKING
        assert "\n" not in labels["b"].rationale
    with pytest.raises(ValueError, match=r"no label for capabilities \['b'\]"):
        check_complete(LabelAnswer.model_validate({"labels": [{"capability": "a", "label": "NA"}]}), names)


def test_labelling_repairs_an_invalid_answer_then_gives_up() -> None:
    dictionary = CapabilityDictionary.model_validate({"capabilities": [{"name": "a", "description": "A."}]})
    record = episode("hello", [("say", "hi")])
    good = '{"labels": [{"capability": "a", "label": "PRESENT", "rationale": "ok"}]}'
    analyst = ScriptedAnalyst(['{"labels": [{"capability": "a", "label": "MAYBE"}]}', good])
    row = asyncio.run(label_one(analyst, record, dictionary, run=0, max_repairs=2))  # type: ignore[arg-type]
    assert row.labels["a"].label == Label.PRESENT
    assert row.usage.input_tokens == 20 and row.usage.cost_usd == pytest.approx(0.02)
    repair = analyst.conversations[1][-1]["content"]
    assert "could not be used" in repair and "labels.0.label" in repair
    stubborn = ScriptedAnalyst(["nope"] * 3)
    with pytest.raises(AnalystOutputError, match="after 2 repair"):
        asyncio.run(label_one(stubborn, record, dictionary, run=0, max_repairs=2))  # type: ignore[arg-type]
    assert len(stubborn.conversations) == 3


def test_discovery_normalises_and_merges_duplicates() -> None:
    merged = merge_capabilities(
        [
            {"name": "Tool-calling Precision", "description": "First."},
            {"name": "tool_calling_precision", "description": "Second."},
            {"name": "DateTimeReasoning", "description": ""},
            {"name": "123", "description": "no name"},
        ]
    )
    assert merged.names == ["tool_calling_precision", "date_time_reasoning"]
    assert merged.capabilities[0].description == "First."
    assert to_snake_case("Multi-Step  Task Completion") == "multi_step_task_completion"
    with pytest.raises(ValueError, match="duplicate"):
        CapabilityDictionary.model_validate(
            {"capabilities": [{"name": "a", "description": "x"}, {"name": "a", "description": "y"}]}
        )
    with pytest.raises(ValueError, match="snake_case"):
        CapabilityDictionary.model_validate({"capabilities": [{"name": "Not Snake", "description": "x"}]})


def test_discovery_prompt_shows_trajectories_and_known_names() -> None:
    records = [episode("cancel #W1", [("say", "done")], success=s, seed=i) for i, s in enumerate([True, False, False])]
    analyst = ScriptedAnalyst(['{"capabilities": [{"name": "precondition_verification", "description": "d"}]}'])
    dictionary, usage = asyncio.run(discover(analyst, records, token_budget=5_000, per_trajectory=500))  # type: ignore[arg-type]
    assert dictionary.names == ["precondition_verification"] and usage.output_tokens == 5
    prompt = analyst.conversations[0][0]["content"]
    assert prompt.count("outcome: FAILURE") == 2 and prompt.count("outcome: SUCCESS") == 1
    assert "tool_calling_precision" in prompt  # known names offered for reuse
    with pytest.raises(ValueError, match="empty"):
        asyncio.run(discover(analyst, [], token_budget=5_000))  # type: ignore[arg-type]


def test_rendering_hides_the_answer_and_fits_the_budget() -> None:
    big = {"rows": [{"id": i, "text": "x" * 200} for i in range(200)]}
    steps = [("call", "get_order_details", {"order_id": "#W1"}, big) for _ in range(30)] + [("say", "final words")]
    record = episode("Please cancel #W1", steps).model_copy(
        update={"policy": "flawed:precondition_verification", "env_id": "trace/precondition-v0",
                "task_id": "precondition_verification-3", "capability": "precondition_verification"}
    )  # fmt: skip
    text = render_trajectory(record, token_budget=1_000, show_outcome=False)
    assert len(text) <= 1_000 * 4
    assert "precondition" not in text and "flawed" not in text
    assert text.startswith(f"Trajectory {episode_id(record)}") and "outcome" not in text
    assert "Please cancel #W1" in text and "final words" in text and "elided" in text


def test_kappa_and_agreement() -> None:
    assert cohen_kappa([]) is None
    assert cohen_kappa([(Label.NA, Label.NA)] * 3) is None  # chance agreement is 1
    assert cohen_kappa([(Label.NA, Label.NA), (Label.LACKING, Label.LACKING)]) == pytest.approx(1.0)
    assert cohen_kappa([(Label.NA, Label.LACKING), (Label.LACKING, Label.NA)]) == pytest.approx(-1.0)
    record = episode("Cancel reservation EHGLP3.", [("call", "cancel_reservation", {"reservation_id": "EHGLP3"}, {})])
    row = TrajectoryLabels.model_validate(
        {"run": 0, "episode": episode_id(record), "success": False,
         "labels": {"precondition_verification": {"capability": "precondition_verification", "label": "PRESENT"},
                    "novel_skill": {"capability": "novel_skill", "label": "LACKING"}}}
    )  # fmt: skip
    (result,) = agreement([row], [record])
    assert result.capability == "precondition_verification" and result.compared == 1 and result.accuracy == 0.0
    assert result.confusion["PRESENT"]["LACKING"] == 1
