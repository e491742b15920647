"""A ``train`` run shows none of the training libraries' known every-run warnings (transformers' renames of
gradient checkpointing, TRL's environment_factory notice), and the filter hides nothing else."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from trace_envs.training.library_warnings import KNOWN_WARNINGS, known_library_warnings

pytestmark = pytest.mark.train


def test_a_train_run_shows_none_of_the_known_warnings(tiny_model: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trace_envs.cli import build_app

    args = ["train", "-e", "trace/order-cancel-v0", "--model", str(tiny_model), "--out", str(tmp_path / "a")]
    args += ["--num-generations", "2", "--groups", "1", "--max-steps", "1", "--max-completion-length", "32"]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    shown = [f"{w.category.__name__}: {w.message}" for w in seen]
    known = [text for text in shown if any(re.search(pattern, text) for _, pattern in KNOWN_WARNINGS)]
    assert known == [], known


def test_the_filter_hides_only_the_known_warnings() -> None:
    rename = "`gradient_checkpointing` is deprecated and will be removed in v6. Use x"
    notice = "You are using 'environment_factory', which is an experimental feature."
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with known_library_warnings():
            warnings.warn(rename, FutureWarning, stacklevel=1)
            warnings.warn(notice, UserWarning, stacklevel=1)
            warnings.warn("something else is deprecated", FutureWarning, stacklevel=1)
        warnings.warn(notice, UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == [
        "something else is deprecated",
        "You are using 'environment_factory', which is an experimental feature.",  # outside the block
    ]
