"""The GPU recipe's plumbing round (``gpu_recipe.sh run DIR OUT --tiny``): both learning seeds and the micro-scale
TRACE chain run side by side with the tiny model and leave their result files in OUT, named as committed under
benchmarks/results/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "benchmarks" / "gpu_recipe.sh"


@pytest.mark.train
@pytest.mark.slow
def test_the_tiny_round_writes_every_result_file(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("matplotlib")
    env = {**os.environ, "PYTHON": sys.executable, "WORK": str(tmp_path / "work"), "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run(
        ["bash", str(SCRIPT), "run", str(tmp_path / "carry"), str(tmp_path / "out"), "--tiny"],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "PASS: every job finished" in done.stdout
    out = tmp_path / "out"
    results = [json.loads((out / f"learning-seed{seed}.json").read_text(encoding="utf-8")) for seed in (0, 1)]
    for seed, result in enumerate(results):
        assert result["training_seed"] == seed and result["held_out_seeds"] == 3
        assert (out / f"learning-seed{seed}.png").stat().st_size > 0
    # both training seeds start from one base: the same warm-up (seeded by --base-seed)
    assert results[0]["stages"]["warm_up"]["final_loss"] == results[1]["stages"]["warm_up"]["final_loss"]
    micro = json.loads((out / "trace-micro.json").read_text(encoding="utf-8"))
    assert "evaluate" in micro["stages"] or any("eval" in name for name in micro["stages"])


def test_a_step_it_does_not_know_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(SCRIPT), "fly", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "unknown step 'fly'" in done.stdout
