"""A skipped sandbox test names what is missing here and where it looked, not everything it could need."""

from __future__ import annotations

from pathlib import Path

from .conftest import sandbox_and_tau2_missing


def test_on_linux_without_the_data_only_the_data_is_named(tmp_path: Path) -> None:
    missing = sandbox_and_tau2_missing("linux", tmp_path / "nowhere")
    assert missing == [
        f"no tau2 data at {tmp_path / 'nowhere'}: put shared/ beside the checkout or set TRACE_ENVS_SHARED"
    ]


def test_off_linux_with_the_data_only_the_platform_is_named(tmp_path: Path) -> None:
    assert sandbox_and_tau2_missing("darwin", tmp_path) == ["the sandbox needs Linux, this is darwin"]


def test_nothing_missing_is_no_skip(tmp_path: Path) -> None:
    assert sandbox_and_tau2_missing("linux", tmp_path) == []
