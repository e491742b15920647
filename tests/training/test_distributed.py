"""GRPO under ``torchrun --nproc_per_node 2`` (gloo on CPU) with the tiny model: one writer, world totals equal to
one process's run, disjoint seeds, and a resumed 2-process run that continues where it stopped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trace_envs.training import load_config, load_metadata, save_metadata, train

pytestmark = [pytest.mark.train, pytest.mark.slow]

ENV_ID = "trace/order-cancel-v0"
CONFIG = "save_steps: 1\nnum_seeds: 8\nmax_completion_length: 32\nnum_generations: 2\ngroups_per_step: 2\n"
"""2 steps x G 2 x K 2: each of 2 processes collects one group per step."""


def torchrun_train(model: Path, out: Path, config: Path, steps: int, processes: int = 2) -> str:
    """``torchrun --nproc_per_node N -m trace_envs.cli train …``; its output (both ranks')."""
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(processes),
        "-m", "trace_envs.cli", "train", "--env", ENV_ID, "--model", str(model), "--out", str(out),
        "--config", str(config), "--max-steps", str(steps),
    ]  # fmt: skip
    root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ, "OMP_NUM_THREADS": "1", "TRL_EXPERIMENTAL_SILENCE": "1", "COLUMNS": "200",
        "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
    }  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    return output


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "grpo.yaml"
    path.write_text(CONFIG)
    return path


@pytest.fixture(scope="module")
def two_process_run(tiny_model: Path, config_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-step run on 2 processes (checkpoint every step)."""
    out = tmp_path_factory.mktemp("distributed") / "adapter"
    output = torchrun_train(tiny_model, out, config_file, steps=2)
    assert output.count("saved ") == 1 and output.count("GRPO on") == 1  # rank 0 alone prints
    assert "8 rollouts collected in all 2 processes (budget 8)" in " ".join(output.split())
    return out


def test_two_processes_write_one_adapter_with_the_world_totals_of_one_process(
    two_process_run: Path, tiny_model: Path, config_file: Path, tmp_path: Path
) -> None:
    config = load_config(config_file, env_ids=[ENV_ID], max_steps=2)
    one = train(config, str(tiny_model), tmp_path / "one")
    two = load_metadata(two_process_run)
    assert (two.world_size, one.world_size) == (2, 1)
    assert two.status == "complete" and two.steps_done == 2
    assert two.rollouts_collected == one.rollouts_collected == config.rollout_budget == 8
    assert (two.total_groups, two.identical_reward_groups) == (one.total_groups, one.identical_reward_groups)
    # TRL's sampler gives the world the same seeds, each once, split across the ranks
    assert two.step_groups == one.step_groups
    assert len(two.seeds_used) == len(set(two.seeds_used)) == 4
    assert [e["trace/rollouts_collected"] for e in two.curve] == [4, 8]
    # TRL's token count is gathered from both ranks: the same prompts, completions of at most 32 tokens each
    # (one rank's alone would be about half)
    for mine, theirs in zip(two.curve, one.curve, strict=True):
        assert abs(mine["num_tokens"] / theirs["num_tokens"] - 1) < 0.1
    assert sorted(p.name for p in (two_process_run / "checkpoints").iterdir() if p.is_dir()) == [
        "checkpoint-1",
        "checkpoint-2",
    ]
    assert not list(two_process_run.glob("*.tmp"))
    assert json.loads((two_process_run / "adapter_config.json").read_text())["r"] == config.lora.r


def test_a_killed_two_process_run_resumes_where_it_stopped(
    two_process_run: Path, tiny_model: Path, config_file: Path, tmp_path: Path
) -> None:
    """Resumed with ``constant_groups: resample`` (the tiny model's groups all have reward 0), so step 2 also
    re-collects groups: one per process, on new seeds that differ across the ranks."""
    finished = load_metadata(two_process_run)
    out = tmp_path / "adapter"
    shutil.copytree(two_process_run, out)
    # killed during step 2: checkpoint-1 is the last, the metadata had logged step 2 already
    shutil.rmtree(out / "checkpoints" / "checkpoint-2")
    (out / "adapter_model.safetensors").unlink()
    save_metadata(out, finished.model_copy(update={"status": "training"}))
    first = (out / "checkpoints" / "checkpoint-1" / "adapter_model.safetensors").read_bytes()

    resample = tmp_path / "resample.yaml"
    resample.write_text(CONFIG + "constant_groups: resample\nresample_rounds: 1\n")
    output = torchrun_train(tiny_model, out, resample, steps=2)
    resumed = load_metadata(out)
    assert output.count("saved ") == 1
    assert resumed.status == "complete" and resumed.steps_done == 2 and resumed.world_size == 2
    assert resumed.step_groups[0] == finished.step_groups[0]  # step 1 carried over, not trained again
    step2, fresh = resumed.step_groups[1], 8  # fresh seeds start after the dataset's 8
    assert step2.identical == len(step2.seeds) == 4  # the same 2 dataset seeds as before, then 1 group per rank
    assert step2.seeds[:2] == finished.step_groups[1].seeds and step2.seeds[2:] == [fresh + 2, fresh + 3]
    assert resumed.rollouts_collected == 12 and len(resumed.seeds_used) == len(set(resumed.seeds_used)) == 6
    assert [e["step"] for e in resumed.curve] == [1, 2]
    assert (out / "checkpoints" / "checkpoint-1" / "adapter_model.safetensors").read_bytes() == first
    assert (out / "adapter_model.safetensors").is_file()

    # and a longer run in the same folder on one process takes the next seeds of the same order
    config = load_config(config_file, env_ids=[ENV_ID], max_steps=3)
    longer = train(config, str(tiny_model), out)
    assert longer.world_size == 1 and longer.steps_done == 3 and longer.rollouts_collected == 12 + 4
    assert longer.step_groups[:2] == resumed.step_groups
    assert len(longer.seeds_used) == len(set(longer.seeds_used)) == 8


@pytest.mark.parametrize("processes", [1, 2, 4])
def test_resampled_seeds_are_new_for_every_step_round_group_and_rank_on_any_number_of_processes(
    processes: int,
) -> None:
    from trace_envs.training.grpo import fresh_seed

    groups, rounds, steps, base = 4, 3, 5, 1000
    local = groups // processes

    def seeds(world: int) -> list[int]:
        share = groups // world
        return [
            fresh_seed(base, (step * rounds + r) * share + j, world, rank)
            for step in range(steps) for r in range(rounds) for j in range(share) for rank in range(world)
        ]  # fmt: skip

    mine = seeds(processes)
    assert len(mine) == len(set(mine)) == steps * rounds * local * processes
    assert set(mine) == set(seeds(1))  # the same seeds as one process: a rerun on another W reuses none early
    assert min(mine) == base
