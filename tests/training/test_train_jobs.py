"""``trace-envs train --synthesis DIR``: one independent training job per capability, printed, written as a
script a scheduler runs one job at a time, or run in turn."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.synthesis.manifest import ModuleEntry, record_module
from trace_envs.training import load_metadata

pytestmark = [pytest.mark.train, pytest.mark.slow]

MODULE = """
from generated_envs.order_cancel import OrderCancelEnv
from trace_envs.core import Capability


class {cls}(OrderCancelEnv):
    capability = Capability(name="{name}", description="Cancel the order the user names ({name}).")
"""
CAPABILITIES = ("cancel_first", "cancel_second")


def synthesis_folder(folder: Path) -> Path:
    """A folder as ``trace-envs synthesize`` leaves it: two validated modules and their manifest."""
    folder.mkdir()
    for index, name in enumerate(CAPABILITIES):
        source = MODULE.format(cls=f"Env{index}", name=name)
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
        record_module(
            folder,
            ModuleEntry(
                module=f"{name}.py", env_id=f"trace/{name.replace('_', '-')}-v0", capability=name, target="retail",
                generator="test", gates=[], source_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
            ),
        )  # fmt: skip
    return folder


def test_one_job_per_capability_is_printed_written_and_run(tiny_model: Path, tmp_path: Path) -> None:
    folder = synthesis_folder(tmp_path / "synthesized")
    out = tmp_path / "adapters"
    config = tmp_path / "grpo.yaml"
    config.write_text("num_seeds: 4\nmax_completion_length: 32\n")
    common = ["train", "--synthesis", str(folder), "--model", str(tiny_model), "--out", str(out), "--max-steps", "1"]
    common += ["--num-generations", "2", "--groups", "1", "--config", str(config)]
    printed = CliRunner().invoke(build_app(), common)
    assert printed.exit_code == 0, printed.output
    lines = printed.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"TRACE_ENVS_PATH={folder}") for line in lines)
    for line, name in zip(lines, CAPABILITIES, strict=True):
        assert f"--env trace/{name.replace('_', '-')}-v0 --out {out / name}" in line and "--max-steps 1" in line
    launched = CliRunner().invoke(build_app(), [*common, "--launcher", "torchrun --nproc_per_node 4"])
    assert launched.stdout.splitlines()[0].split()[1:5] == ["torchrun", "--nproc_per_node", "4", "-m"]

    script = tmp_path / "jobs.sh"
    written = CliRunner().invoke(build_app(), [*common, "--jobs", "script", "--script", str(script)])
    assert written.exit_code == 0 and "2 jobs" in " ".join(written.output.split()), written.output
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TRL_EXPERIMENTAL_SILENCE": "1", "PYTHONPATH": _root()}
    env.pop("SLURM_ARRAY_TASK_ID", None)
    assert subprocess.run(["bash", str(script), "2"], env=env, capture_output=True, check=False).returncode == 2
    one = subprocess.run(["bash", str(script), "1"], env=env, capture_output=True, text=True, check=False)
    assert one.returncode == 0, one.stdout[-2000:] + one.stderr[-2000:]
    assert load_metadata(out / "cancel_second").capability == "cancel_second" and not (out / "cancel_first").exists()

    ran = subprocess.run(
        [sys.executable, "-m", "trace_envs.cli", *common, "--jobs", "run"], env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "nothing to train" in " ".join(ran.stdout.split())  # job 2 was done by the script: it resumes as done
    first = load_metadata(out / "cancel_first")
    assert first.status == "complete" and first.env_ids == ["trace/cancel-first-v0"] and first.steps_done == 1


def test_a_folder_without_a_manifest_or_with_env_is_a_usage_error(tiny_model: Path, tmp_path: Path) -> None:
    args = ["train", "--synthesis", str(tmp_path), "--model", str(tiny_model), "--out", str(tmp_path / "o")]
    missing = CliRunner().invoke(build_app(), args)
    assert missing.exit_code == 2 and "manifest.json" in missing.output
    both = CliRunner().invoke(build_app(), [*args, "--env", "trace/order-cancel-v0"])
    assert both.exit_code == 2 and "either --synthesis DIR or --env" in " ".join(both.output.split())


def _root() -> str:
    return os.pathsep.join([str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])
