"""``trace-envs tau2-generate``: the generated tau2 data folder that a retail or airline env needs to validate,
written by a command (it used to take a Python call), and named by the error that asks for data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.synthesis.module_checks import ModuleInputError, read_module

REPO = Path(__file__).parents[2]
STARTER = REPO / "generated_envs" / "retail_order_cancel.py"


def one_line(output: str) -> str:
    return " ".join(output.replace("│", " ").split())


def test_it_writes_a_folder_that_validate_takes_as_tau2_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACE_ENVS_TAU2_DATA", raising=False)
    with pytest.raises(ModuleInputError, match="trace-envs tau2-generate DIR") as missing:
        read_module(STARTER)
    assert missing.value.field == "data" and "--data DIR" in str(missing.value)
    out = tmp_path / "tau2-data"
    result = CliRunner().invoke(build_app(), ["tau2-generate", str(out), "--domain", "retail"])
    assert result.exit_code == 0, result.output
    assert f"--data {out}" in one_line(result.output)
    tasks = json.loads((out / "retail" / "tasks.json").read_text(encoding="utf-8"))
    assert tasks and (out / "retail" / "db.json").is_file() and not (out / "airline").exists()
    assert read_module(STARTER, data=out).target == "retail"  # the data check validate runs passes


def test_an_unknown_domain_is_named(tmp_path: Path) -> None:
    result = CliRunner().invoke(build_app(), ["tau2-generate", str(tmp_path / "d"), "--domain", "shop"])
    assert result.exit_code == 2 and "unknown tau2 domain 'shop'" in one_line(result.output)
    assert not (tmp_path / "d").exists()
