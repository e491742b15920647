"""``trace-envs baseline merge`` on the tiny model: every method writes a PEFT adapter that loads and changes
the logits as its delta-W says, with baseline.json counting the inputs' rollouts; bad input is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from .conftest import CHECKS, DATES, NARROW

pytestmark = pytest.mark.train

IDS = [[5, 6, 7, 8, 9, 10]]


@pytest.fixture(scope="module")
def cli():  # type: ignore[no-untyped-def]
    from trace_envs.cli import build_app

    return build_app()


def _squash(text: str) -> str:
    """Output without Typer's box and whitespace (a long path wraps mid-word), checked to be no traceback."""
    assert "Traceback" not in text
    return "".join(ch for ch in text if ch not in "│╭╮╰╯─" and not ch.isspace())


def _logits(model: object) -> object:
    import torch

    with torch.no_grad():
        return model(input_ids=torch.tensor(IDS)).logits  # type: ignore[operator]


def _lora_tensors(path: Path) -> tuple[dict[str, object], float]:
    """An adapter's weights and its scaling (alpha / r)."""
    from safetensors.torch import load_file

    config = json.loads((path / "adapter_config.json").read_text())
    return load_file(str(path / "adapter_model.safetensors")), config["lora_alpha"] / config["r"]


def _with_deltas(tiny_model: Path, deltas: dict[str, object]) -> object:
    """The base model with ``deltas`` (keyed by PEFT module name) added to its linear weights."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval()
    modules = dict(model.named_modules())
    with torch.no_grad():
        for name, delta in deltas.items():
            layer = modules[name.removeprefix("base_model.model.")]
            layer.weight += delta.to(layer.weight.dtype)  # type: ignore[union-attr]
    return model


def _merged_logits(tiny_model: Path, out: Path) -> object:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval()
    return _logits(PeftModel.from_pretrained(base, str(out)).eval())


@pytest.mark.parametrize("method", ["linear", "ties", "dare-linear", "dare-ties", "core-tsv"])
def test_each_method_writes_a_loadable_adapter_and_its_record(
    cli, tiny_model: Path, adapters: dict[str, Path], tmp_path: Path, method: str
) -> None:  # type: ignore[no-untyped-def]
    import torch
    from transformers import AutoModelForCausalLM

    from trace_envs.baselines import load_baseline_run
    from trace_envs.training import load_metadata

    out = tmp_path / method
    args = ["baseline", "merge", "--model", str(tiny_model), "--adapter", str(adapters[DATES])]
    args += ["--adapter", str(adapters[CHECKS]), "--budget", "64", "--out", str(out), "--method", method]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "20 of 64 rollouts" in " ".join(result.output.split())
    run = load_baseline_run(out)
    assert (run.method, run.budget, run.rollouts_used, run.artifact) == ("merge", 64, 20, ".")  # 2x4 + 3x4
    assert run.config["method"] == method and run.env_ids == [
        "trace/datetime_reasoning-v0",
        "trace/precondition_verification-v0",
    ]
    meta = load_metadata(out)
    assert meta.status == "merged" and meta.capability == "merged_" + method.replace("-", "_")
    assert meta.config["rollouts_used"] == 20
    config = json.loads((out / "adapter_config.json").read_text())
    assert config["r"] == run.config["rank"] == (6 if method == "linear" else 4)  # linear: exact, 2 + 4
    plain = _logits(AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval())
    merged = _merged_logits(tiny_model, out)
    assert torch.isfinite(merged).all() and not torch.allclose(merged, plain)  # type: ignore[arg-type]
    assert not list(tmp_path.glob(".*.merging"))


def test_linear_merge_changes_logits_exactly_as_the_weighted_sum_of_deltas(
    tiny_model: Path, adapters: dict[str, Path], tmp_path: Path
) -> None:
    """Expected delta-W per layer is computed here from the input files: 0.7 s1 B1 A1 - 0.3 s2 B2 A2."""
    import torch

    from trace_envs.baselines.merge import merge_adapters

    weights = [0.7, -0.3]
    inputs = [_lora_tensors(adapters[DATES]), _lora_tensors(adapters[CHECKS])]
    deltas = {}
    for key in inputs[0][0]:
        if key.endswith(".lora_A.weight"):
            module = key.removesuffix(".lora_A.weight")
            deltas[module] = sum(
                w * s * t[f"{module}.lora_B.weight"] @ t[key]  # type: ignore[operator]
                for w, (t, s) in zip(weights, inputs, strict=True)
            )
    out = tmp_path / "linear"
    merge_adapters(tiny_model, [adapters[DATES], adapters[CHECKS]], out, method="linear", weights=weights)
    torch.testing.assert_close(_merged_logits(tiny_model, out), _logits(_with_deltas(tiny_model, deltas)))


def test_core_tsv_adapter_changes_logits_as_its_merged_delta_predicts(
    tiny_model: Path, adapters: dict[str, Path], tmp_path: Path
) -> None:
    """The delta each layer should get is CORE-TSV of the input factors (A pre-scaled by alpha / r, computed
    here from the files); PEFT loading the written adapter must reproduce exactly those logits. The TIES
    switch changes the result and is recorded."""
    import torch

    from trace_envs.baselines.core_tsv import core_tsv_layer
    from trace_envs.baselines.merge import merge_adapters
    from trace_envs.training import load_metadata

    inputs = [_lora_tensors(adapters[DATES]), _lora_tensors(adapters[CHECKS])]
    written = {}
    for ties in (True, False):
        deltas = {}
        for key in inputs[0][0]:
            if key.endswith(".lora_A.weight"):
                module = key.removesuffix(".lora_A.weight")
                a, b = core_tsv_layer(
                    [t[key] * s for t, s in inputs],  # type: ignore[operator]
                    [t[f"{module}.lora_B.weight"] for t, _ in inputs],  # type: ignore[misc]
                    [1.0, 1.0],
                    rank=4,
                    ties_density=0.5 if ties else None,
                )
                deltas[module] = b @ a
        out = tmp_path / f"core-tsv-{ties}"
        merge_adapters(tiny_model, [adapters[DATES], adapters[CHECKS]], out, method="core-tsv", ties=ties)
        assert load_metadata(out).config["ties"] is ties
        torch.testing.assert_close(_merged_logits(tiny_model, out), _logits(_with_deltas(tiny_model, deltas)))
        written[ties] = _lora_tensors(out)[0]
    assert any(not torch.equal(written[True][k], written[False][k]) for k in written[True])  # type: ignore[arg-type]


def test_dare_is_seeded_and_leaves_the_global_rng_alone(
    tiny_model: Path, adapters: dict[str, Path], tmp_path: Path
) -> None:
    import torch

    from trace_envs.baselines.merge import merge_adapters

    pair = [adapters[DATES], adapters[CHECKS]]
    state = torch.get_rng_state()
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        merge_adapters(tiny_model, pair, tmp_path / name, method="dare-ties", seed=seed)
    assert torch.equal(torch.get_rng_state(), state)
    a, b, c = (_lora_tensors(tmp_path / name)[0] for name in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)  # type: ignore[arg-type]
    assert any(not torch.equal(a[k], c[k]) for k in a)  # type: ignore[arg-type]


def test_budget_counts_the_inputs_rollouts_including_a_merged_input(
    cli, tiny_model: Path, adapters: dict[str, Path], tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from trace_envs.baselines import load_baseline_run

    base = ["baseline", "merge", "--model", str(tiny_model), "--adapter", str(adapters[DATES])]
    over = CliRunner().invoke(
        cli, [*base, "--adapter", str(adapters[CHECKS]), "--budget", "19", "--out", str(tmp_path / "o")]
    )
    assert over.exit_code == 2
    assert _squash("the adapters spent 20 rollouts (dates: 8, checks: 12), more than --budget 19") in _squash(
        over.output
    )
    assert not (tmp_path / "o").exists()
    first = tmp_path / "first"
    done = CliRunner().invoke(cli, [*base, "--adapter", str(adapters[CHECKS]), "--budget", "20", "--out", str(first)])
    assert done.exit_code == 0, done.output
    again = CliRunner().invoke(
        cli, [*base, "--adapter", str(first), "--budget", "28", "--out", str(tmp_path / "again")]
    )
    assert again.exit_code == 0, again.output
    assert load_baseline_run(tmp_path / "again").rollouts_used == 28  # 8 + (8 + 12)


def test_bad_input_is_one_line_and_exit_2(cli, tiny_model: Path, adapters: dict[str, Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from trace_envs.training import load_metadata, save_metadata

    other_base = tmp_path / "other-base"
    shutil.copytree(adapters[CHECKS], other_base)
    save_metadata(other_base, load_metadata(other_base).model_copy(update={"base_model": "Qwen/Qwen3-0.6B"}))
    untracked = tmp_path / "untracked"
    shutil.copytree(adapters[CHECKS], untracked)
    save_metadata(untracked, load_metadata(untracked).model_copy(update={"config": {}}))
    out = tmp_path / "out"
    base = ["baseline", "merge", "--model", str(tiny_model), "--budget", "64", "--out", str(out)]
    cases = {
        "missing": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(tmp_path / "nope")],
            f"--adapter {tmp_path / 'nope'}: no such directory",
        ),
        "one": (["--adapter", str(adapters[DATES])], "give at least two --adapter DIR to merge"),
        "base": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(other_base)],
            f"--adapter {other_base} was trained on Qwen/Qwen3-0.6B but {adapters[DATES]} on {tiny_model}",
        ),
        "targets": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(adapters[NARROW])],
            "adapt different modules (dates only: down_proj, gate_proj, k_proj, o_proj, up_proj; narrow only: none)",
        ),
        "untracked": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(untracked)],
            f"--adapter {untracked}: trace_adapter.json records no training run",
        ),
        "model": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(adapters[CHECKS]), "--model", str(tmp_path)],
            f"--model {tmp_path} but the adapters were trained on {tiny_model}",
        ),
        "weights": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(adapters[CHECKS]), "--weights", "1"],
            "--weights gives 1 weights for 2 adapters",
        ),
        "no-ties": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(adapters[CHECKS]), "--method", "linear", "--no-ties"],
            "--ties/--no-ties switches core-tsv's TIES step",
        ),
        "density": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(adapters[CHECKS]), "--density", "1.5"],
            "--density 1.5 is outside (0, 1]",
        ),
        "rank": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(adapters[CHECKS]), "--rank", "100"],
            "--rank 100 must be between 1 and 32, the smallest adapted layer size",  # k/v_proj: 2 heads x 16
        ),
        "method": (
            ["--adapter", str(adapters[DATES]), "--adapter", str(adapters[CHECKS]), "--method", "sum"],
            "--method 'sum' is not one of linear, ties, dare-linear, dare-ties, core-tsv",
        ),
    }
    for name, (extra, message) in cases.items():
        result = CliRunner().invoke(cli, [*base, *extra])
        assert result.exit_code == 2, (name, result.output)
        assert _squash(message) in _squash(result.output), (name, result.output)
        assert not out.exists(), name
