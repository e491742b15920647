"""``sft-synthetic``: the episodes it rolls out count against the budget, the loss covers only the
assistant's tokens, and its command writes a PEFT adapter with ``trace_adapter.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trace_envs.baselines import load_baseline_run
from trace_envs.baselines.sft_data import ROLLOUTS_FILE, collect, collection_jobs

from .conftest import loads_with_peft

pytestmark = pytest.mark.train
ENVS = ["trace/order-cancel-v0", "trace/datetime-v0"]


def test_every_episode_counts_successful_or_not_and_the_store_resumes(tmp_path: Path) -> None:
    jobs = collection_jobs(ENVS, 4)
    failing = collect(jobs, "noop", tmp_path / "noop")
    assert (failing.episodes, failing.successes, failing.rows) == (4, 0, [])
    first = collect(jobs, "oracle", tmp_path / "oracle")
    assert (first.episodes, first.successes, len(first.rows), first.dropped) == (4, 4, 4, 0)
    lines = (tmp_path / "oracle" / ROLLOUTS_FILE).read_text().splitlines()
    again = collect(jobs, "oracle", tmp_path / "oracle")  # resumed: nothing rolled out twice
    assert (tmp_path / "oracle" / ROLLOUTS_FILE).read_text().splitlines() == lines and len(lines) == 4
    assert again.rows == first.rows
    row = first.rows[0]
    assert row["messages"][-1]["role"] == "assistant" and not row["messages"][-1].get("tool_calls")
    calls = [(i, m["tool_calls"][0]["function"]["name"]) for i, m in enumerate(row["messages"]) if m.get("tool_calls")]
    assert calls and all(
        row["messages"][i + 1] == {**row["messages"][i + 1], "role": "tool", "name": n} for i, n in calls
    )
    assert {t["function"]["name"] for t in row["tools"]} >= {"send_message_to_user", "get_order_details"}


def _spans(ids: list[int], tokenizer: Any) -> list[bool]:
    """For each token: whether it lies in an assistant turn (after ``<|im_start|>assistant``, up to the next
    ``<|im_start|>``: the turn's text, its ``<|im_end|>`` and the newline after it)."""
    start = tokenizer.convert_tokens_to_ids("<|im_start|>")
    inside, out = False, []
    for i, token in enumerate(ids):
        if token == start:
            inside = tokenizer.decode(ids[i + 1 : i + 8]).startswith("assistant")
            out.append(False)
            continue
        out.append(inside)
    return out


def test_the_loss_covers_only_assistant_tokens(tiny_model: Path, tmp_path: Path) -> None:
    from trace_envs.baselines.sft_synthetic import SFTSettings, build_sft_trainer

    rows = collect(collection_jobs(["trace/order-cancel-v0"], 1), "oracle", tmp_path).rows
    trainer = build_sft_trainer(rows, str(tiny_model), tmp_path / "adapter", SFTSettings(max_steps=1))
    tokenizer = trainer.processing_class
    example = trainer.train_dataset[0]
    ids = list(example["input_ids"])
    mask = [label != -100 for label in example["labels"]]  # TRL's labels: -100 where no loss is taken
    assistant = _spans(ids, tokenizer)
    assert sum(mask) > 0
    assert all(a for a, m in zip(assistant, mask, strict=True) if m), "loss on a token outside the assistant's turns"
    learned = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
    messages = rows[0]["messages"]
    assert messages[-1]["content"] in learned  # the final message to the user is learned ...
    for message in messages:
        if message["role"] in ("system", "user", "tool"):  # ... the prompt, user turns and tool results are not
            assert message["content"][:40] not in learned, message


def test_command_writes_an_adapter_that_peft_loads(cli: Any, tiny_model: Path, tmp_path: Path) -> None:
    from trace_envs.routing import CapabilityCard
    from trace_envs.training import load_metadata

    out = tmp_path / "sft"
    envs = [arg for env in ENVS for arg in ("-e", env)]
    args = ["baseline", "sft-synthetic", *envs, "--model", str(tiny_model), "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--budget", "6", "--max-steps", "2", "--batch-size", "2"])
    assert result.exit_code == 0, result.output
    run = load_baseline_run(out)
    assert (run.method, run.budget, run.rollouts_used, run.config["trained_on"]) == ("sft-synthetic", 6, 6, 6)
    meta = load_metadata(out / "adapter")
    assert meta.status == "complete" and meta.steps_done == 2 and meta.example is not None
    assert [e["step"] for e in meta.curve if "loss" in e] == [1, 2]
    assert CapabilityCard.from_adapter(out / "adapter").name == "sft_synthetic"
    model = loads_with_peft(tiny_model, out / "adapter")
    assert any("lora_" in name for name, _ in model.named_parameters())

    nothing = CliRunner().invoke(
        cli, [*args[:-2], "--out", str(tmp_path / "noop"), "--budget", "2", "--policy", "noop"]
    )
    assert nothing.exit_code == 2 and "no successful trajectory to train on" in nothing.output


def test_each_row_is_trained_as_it_renders_alone(tiny_model: Path, tmp_path: Path) -> None:
    """Rows of two envs (other tools, other call arguments) are tokenized one by one: none gains the keys of
    another row's calls or schemas (an Arrow table of the rows would add them, as null)."""
    from trace_envs.baselines.sft_synthetic import SFTSettings, build_sft_trainer

    rows = collect(collection_jobs(ENVS, 2), "oracle", tmp_path).rows
    trainer = build_sft_trainer(rows, str(tiny_model), tmp_path / "adapter", SFTSettings(max_steps=1))
    tokenizer = trainer.processing_class
    assert len(trainer.train_dataset) == len(rows) == 2
    for row, example in zip(rows, trainer.train_dataset, strict=True):
        alone = tokenizer.apply_chat_template(row["messages"], tools=row["tools"], tokenize=True, return_dict=True)
        assert list(example["input_ids"]) == list(alone["input_ids"])
        assert "null" not in tokenizer.decode(example["input_ids"])
