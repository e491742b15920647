"""The local-generation benchmark's short round on the tiny model: the same greedy episodes one at a time and
batched give identical texts, and the last line is the throughput ratio in the documented form."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT


@pytest.mark.train
def test_one_short_round_on_the_tiny_model(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)}
    args = ["--model", "tiny", "--episodes", "4", "--concurrency", "2", "--max-steps", "3", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "local_generation.py"), *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert re.fullmatch(r"batched/sequential throughput: \d+\.\d×", lines[-1])
    result = json.loads("\n".join(lines[:-1]))
    assert result["identical_texts"] is True and result["episodes"] == 4 and result["generated_tokens"] > 0
    starts, peaks = result["rss_start_gib"], result["peak_rss_gib"]
    assert all(0 < start <= peak for start, peak in zip(starts, peaks, strict=True)), (starts, peaks)
