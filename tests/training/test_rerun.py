"""Training into a directory that already has the steps asked for: ``max_steps`` is a total, so a
finished run is a no-op and a run killed after its last checkpoint is finished without training again."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.training import TrainConfig, build_run, load_metadata, save_metadata, train
from trace_envs.training import trainer as trainer_module
from trace_envs.training.trainer import add_to_curve

pytestmark = pytest.mark.train

ENV_ID = "trace/order-cancel-v0"


def config(max_steps: int) -> TrainConfig:
    return TrainConfig(
        env_ids=[ENV_ID], max_steps=max_steps, num_generations=2, per_device_train_batch_size=2,
        max_completion_length=32, num_seeds=4, save_steps=1,
    )  # fmt: skip


def test_finished_and_half_finished_runs_are_not_trained_again(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "adapter"
    first = train(config(1), str(tiny_model), out)
    assert first.status == "complete" and first.steps_done == 1
    weights = (out / "adapter_model.safetensors").read_bytes()

    # killed after checkpoint-1 was written, before the adapter and the final metadata were
    (out / "adapter_model.safetensors").unlink()
    save_metadata(out, first.model_copy(update={"status": "training"}))
    run = build_run(config(1), str(tiny_model), out)
    finished = run.run()
    assert finished.status == "complete" and finished.steps_done == 1
    assert run.trainer.state.global_step == 0  # no training step was taken
    assert (out / "adapter_model.safetensors").read_bytes() == weights
    assert sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*")) == ["checkpoint-1"]

    # a complete run with the steps asked for: train() returns it without building a trainer
    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("a finished run was set up for training again")

    monkeypatch.setattr(trainer_module, "build_run", no_build)
    assert train(config(1), str(tiny_model), out) == load_metadata(out)
    with pytest.raises(AssertionError, match="set up for training again"):
        train(config(1), str(tiny_model), out, resume=False)  # --no-resume trains from scratch


def test_the_curve_has_one_row_per_step() -> None:
    curve: list[dict[str, float]] = []
    for entry in ({"step": 1, "loss": 0.5}, {"step": 2, "loss": 0.4}, {"step": 2, "train_runtime": 9.0}):
        add_to_curve(curve, dict(entry))
    assert curve == [{"step": 1, "loss": 0.5}, {"step": 2, "loss": 0.4, "train_runtime": 9.0}]
