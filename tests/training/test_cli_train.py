"""``trace-envs train / route / make-tiny-model`` end to end on CPU with a tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def cli():  # type: ignore[no-untyped-def]
    from trace_envs.cli import build_app

    return build_app()


def test_train_writes_a_loadable_adapter_and_resumes(cli, tiny_model: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from trace_envs.training import load_metadata

    out = tmp_path / "adapters" / "order-cancel"
    config = tmp_path / "grpo.yaml"
    config.write_text("save_steps: 1\nnum_seeds: 8\nmax_completion_length: 48\n")
    args = [
        "train",
        "--env",
        "trace/order-cancel-v0",
        "--model",
        str(tiny_model),
        "--out",
        str(out),
        "--num-generations",
        "2",
        "--groups",
        "1",
        "--config",
        str(config),
        "--option",
        "distractor_orders=1",
    ]
    result = CliRunner().invoke(cli, [*args, "--max-steps", "2"])
    assert result.exit_code == 0, result.output
    assert "saved" in result.output
    summary = " ".join(result.output.split())
    assert "budget 2 steps x 1 groups x 2 rollouts = 4 rollouts" in summary  # iterations x G x K
    assert "4 rollouts collected (budget 4)" in summary
    meta = load_metadata(out)
    assert (meta.rollout_budget, meta.rollouts_collected) == (4, 4)
    assert meta.status == "complete" and meta.steps_done == 2
    assert meta.capability == "precondition_verification" and meta.env_ids == ["trace/order-cancel-v0"]
    assert meta.base_model == str(tiny_model) and meta.config["max_steps"] == 2
    assert meta.config["env_knobs"] == {"trace/order-cancel-v0": {"distractor_orders": 1}}
    assert meta.example is not None and meta.example.reward == 1.0 and "user:" in meta.example.transcript
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(str(tiny_model)), str(out))
    assert any("lora_" in name for name, _ in model.named_parameters())
    assert [e["step"] for e in meta.curve] == [1, 2]  # one row per step (the run's summary joins step 2)
    assert "train_runtime" in meta.curve[-1] and "loss" in meta.curve[-1]

    # the same command again: --max-steps is a total and the run is finished, so nothing changes
    saved = (out / "trace_adapter.json").read_bytes(), (out / "adapter_model.safetensors").read_bytes()
    again = CliRunner().invoke(cli, [*args, "--max-steps", "2"])
    assert again.exit_code == 0, again.output
    assert "nothing to train" in " ".join(again.output.split())
    assert ((out / "trace_adapter.json").read_bytes(), (out / "adapter_model.safetensors").read_bytes()) == saved
    assert sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]

    # a longer run in the same directory resumes from checkpoint-2 and keeps one curve
    result = CliRunner().invoke(cli, [*args, "--max-steps", "3"])
    assert result.exit_code == 0, result.output
    meta = load_metadata(out)
    assert meta.steps_done == 3
    assert [e["step"] for e in meta.curve] == [1, 2, 3]
    assert [e["step"] for e in meta.curve if "loss" in e] == [1, 2, 3]

    routed = CliRunner().invoke(
        cli, ["route", "--model", str(tiny_model), "--adapter", str(out), "--env", "trace/order-cancel-v0", "--json"]
    )
    assert routed.exit_code == 0, routed.output
    decision = json.loads(routed.stdout)
    assert set(decision["logits"]) == {"A", "B"}
    assert decision["label"] == max(decision["logits"], key=decision["logits"].__getitem__)


def test_bad_config_is_a_usage_error(cli, tiny_model: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.yaml"
    bad.write_text("learning_rat: 1\n")
    result = CliRunner().invoke(
        cli,
        [
            "train",
            "--env",
            "trace/order-cancel-v0",
            "--model",
            str(tiny_model),
            "--out",
            str(tmp_path / "o"),
            "--config",
            str(bad),
        ],
    )
    assert result.exit_code != 0
    assert "learning_rat" in result.output


def test_make_tiny_model_with_warmup(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = tmp_path / "tiny"
    result = CliRunner().invoke(
        cli,
        [
            "make-tiny-model",
            str(directory),
            "--warmup",
            "trace/order-cancel-v0",
            "--warmup-steps",
            "2",
            "--episodes",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "warmed up" in result.output
    assert "oracle episodes" in result.output and "SFT steps" in result.output  # the progress bars
    assert "2/2" in result.output and "loss" in result.output
    assert "{'loss'" not in result.output  # TRL's printed log dicts are replaced by the bar
    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    model = AutoModelForCausalLM.from_pretrained(str(directory))
    assert model.config.model_type == "qwen3" and "<tool_call>" in tokenizer.get_vocab()


def test_another_env_in_a_finished_adapter_directory_is_refused(cli, tiny_model: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from trace_envs.training import AdapterMetadata, save_metadata

    out = tmp_path / "adapter"
    save_metadata(
        out,
        AdapterMetadata(
            capability="precondition_verification", description="d", env_ids=["trace/order-cancel-v0"],
            base_model=str(tiny_model), config={}, status="complete", steps_done=2,
        ),
    )  # fmt: skip
    args = ["train", "-e", "trace/precondition-v0", "--model", str(tiny_model), "-o", str(out), "--max-steps", "2"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "holds an adapter of trace/order-cancel-v0" in " ".join(result.output.replace("│", " ").split())
    same = CliRunner().invoke(cli, [*args[:2], "trace/order-cancel-v0", *args[3:]])
    assert same.exit_code == 0 and "nothing to train" in " ".join(same.output.split()), same.output


def _error(output: str) -> str:
    """A usage error's text without Typer's box or any whitespace (so a long path wrapped mid-word by
    the 80-column console still matches; compare with :func:`_squash`), checked to be no traceback."""
    assert "Traceback" not in output
    return _squash("".join(ch for ch in output if ch not in "│╭╮╰╯─"))


def _squash(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("command", ["train", "route"])
def test_unknown_env_and_missing_model_are_usage_errors(cli, command: str, tiny_model: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    where = ["--out", str(adapter)] if command == "train" else ["--adapter", str(adapter)]
    unknown = CliRunner().invoke(cli, [command, "--env", "trace/nope-v0", "--model", str(tiny_model), *where])
    assert unknown.exit_code == 2
    assert _squash("'trace/nope-v0' is not a registered env") in _error(unknown.output)
    assert _squash("pass --import MODULE") in _error(unknown.output)
    missing = CliRunner().invoke(
        cli, [command, "--env", "trace/order-cancel-v0", "--model", str(tmp_path / "no-model"), *where]
    )
    assert missing.exit_code == 2
    assert _squash(f"no model directory '{tmp_path / 'no-model'}'") in _error(missing.output)
    assert _squash("trace-envs make-tiny-model DIR") in _error(missing.output)
    empty = tmp_path / "empty"
    empty.mkdir()
    unloadable = CliRunner().invoke(cli, [command, "--env", "trace/order-cancel-v0", "--model", str(empty), *where])
    assert unloadable.exit_code == 2
    assert _squash(f"cannot load model '{empty}'") in _error(unloadable.output)


def test_train_refuses_a_target_env_and_an_unknown_knob(cli, tiny_model: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base = ["train", "--model", str(tiny_model), "--out", str(tmp_path / "a")]
    target = CliRunner().invoke(cli, [*base, "--env", "trace/tau2-retail-v0"])
    assert target.exit_code == 2
    assert _squash("'trace/tau2-retail-v0' is a target env, not a capability env") in _error(target.output)
    knob = CliRunner().invoke(cli, [*base, "--env", "trace/order-cancel-v0", "--option", "colour=1"])
    assert knob.exit_code == 2
    assert _squash("colour: Extra inputs are not permitted (unknown key 'colour'") in _error(knob.output)
    assert _squash("for trace/order-cancel-v0") in _error(knob.output)
    assert _squash("its knobs: distractor_orders") in _error(knob.output)
    assert not (tmp_path / "a").exists()
