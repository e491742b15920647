"""``trace-envs train --synthesis DIR``: one independent ``trace-envs train`` job per capability of a synthesis
output folder, printed, written as a script a scheduler can run one job at a time (``bash SCRIPT N``, or a SLURM
array task), or run here one after another. Each job trains one adapter into ``OUT/<capability>`` and resumes
like any ``trace-envs train``; ``--launcher`` puts ``torchrun``/``accelerate launch`` in front of every job."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from trace_envs.registry.sources import PATH_VARIABLE


class TrainJob(BaseModel):
    """One capability's training job: the command line and the env folder it loads."""

    capability: str
    env_id: str
    out: Path
    argv: list[str]
    env_path: str

    def shell(self) -> str:
        """The job as one shell command line."""
        return f"{PATH_VARIABLE}={shlex.quote(self.env_path)} {shlex.join(self.argv)}"


def capability_jobs(folder: Path, out: Path, launcher: str | None, options: list[str]) -> list[TrainJob]:
    """One job per validated module of ``folder`` (in capability order); ``options`` go to every job's command."""
    from trace_envs.synthesis.manifest import read_manifest

    manifest = read_manifest(folder)
    if manifest is None or not manifest.modules:
        raise ValueError(
            f"{folder} has no validated env module in a manifest.json: pass the folder `trace-envs synthesize` "
            "wrote (its --out), once at least one capability passed"
        )
    env_path = os.pathsep.join([str(folder.resolve()), *filter(None, [os.environ.get(PATH_VARIABLE)])])
    command = shlex.split(launcher) if launcher else [sys.executable]
    jobs = []
    for entry in sorted(manifest.modules.values(), key=lambda e: e.capability):
        target = out / entry.capability
        argv = [*command, "-m", "trace_envs.cli", "train", "--env", entry.env_id, "--out", str(target), *options]
        jobs.append(
            TrainJob(capability=entry.capability, env_id=entry.env_id, out=target, argv=argv, env_path=env_path)
        )
    return jobs


def job_script(jobs: list[TrainJob], folder: Path) -> str:
    """A bash script of the jobs: no argument runs them all in turn, ``N`` (or ``$SLURM_ARRAY_TASK_ID``) job N."""
    lines = [
        "#!/usr/bin/env bash",
        f"# One independent `trace-envs train` job per capability of {folder} (trace-envs train --synthesis).",
        "#   bash SCRIPT      runs every job, one after another",
        f"#   bash SCRIPT N    runs job N only (0 to {len(jobs) - 1}); under a SLURM array, $SLURM_ARRAY_TASK_ID:",
        f"#   sbatch --array=0-{len(jobs) - 1} SCRIPT",
        "set -euo pipefail",
    ]
    for index, job in enumerate(jobs):
        lines.append(f"job_{index}() {{  # {job.capability} -> {job.out}")
        lines.append(f"  {job.shell()}")
        lines.append("}")
    lines += [
        f"count={len(jobs)}",
        'index="${1:-${SLURM_ARRAY_TASK_ID:-all}}"',
        'if [ "$index" = all ]; then',
        '  for ((i = 0; i < count; i++)); do "job_$i"; done',
        'elif [[ "$index" =~ ^[0-9]+$ ]] && [ "$index" -lt "$count" ]; then',
        '  "job_$index"',
        "else",
        '  echo "job index $index: expected 0 to $((count - 1)), or no argument for all" >&2',
        "  exit 2",
        "fi",
    ]
    return "\n".join(lines) + "\n"


def run_job(job: TrainJob) -> int:
    """Run one job to its end (its output goes to this terminal); its exit status."""
    environment = {**os.environ, PATH_VARIABLE: job.env_path}
    return subprocess.run(job.argv, env=environment, check=False).returncode
