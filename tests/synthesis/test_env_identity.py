"""The env id a boxed module registers as is read from its text, checked against what its box declares, and never
an id already registered (issue 34: a module took trace/order-cancel-v0, and with its folder on
$TRACE_ENVS_PATH every trace-envs command failed at import)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import trace_envs
from trace_envs.synthesis.gates.env_identity import env_id_findings, source_env_id

from ..conftest import vouching_entry
from .conftest import GOOD_MODULE, REDTEAM

GOOD = GOOD_MODULE.read_text(encoding="utf-8")
SQUAT = (REDTEAM / "env_id_squat.py").read_text(encoding="utf-8")


def rules(source: str, box_env_id: str | None, capability: str = "precondition_verification") -> list[str]:
    return [f.rule for f in env_id_findings(source, ast.parse(source), box_env_id, capability)]


def test_the_id_comes_from_the_text_by_the_loaders_rule() -> None:
    assert source_env_id(ast.parse(GOOD)) == "trace/precondition-verification-v0"
    assert source_env_id(ast.parse(SQUAT)) == "trace/order-cancel-v0"
    assert source_env_id(ast.parse('ENV_ID = "trace/" + "order-cancel-v0"\n')) is None  # built at run time
    assert source_env_id(ast.parse("capability = Capability(name=NAME)\n")) is None


def test_a_new_id_that_the_box_declares_too_passes() -> None:
    assert rules(GOOD, None) == []


def test_a_taken_id_a_mismatch_and_an_unreadable_id_are_refused() -> None:
    import trace_envs  # noqa: F401  (registers the shipped envs)

    assert "trace/order-cancel-v0" in gym.registry
    assert rules(SQUAT, "trace/order-cancel-v0") == ["env-id-taken"]
    assert rules(GOOD, "trace/order-cancel-v0") == ["env-id-mismatch"]  # the box says what the text does not
    assert rules(GOOD, None, capability="order_cancel") == ["env-id-mismatch"]
    computed = GOOD.replace("REASONS = (", 'ENV_ID = "trace/" + "x-v0"\nREASONS = (')
    assert rules(computed, "trace/x-v0") == ["env-id-not-literal"]


def test_an_id_that_looks_like_a_registered_one_is_refused() -> None:
    """Issue 34, third red team: a Cyrillic letter, or an ASCII look-alike, of a shipped id."""
    import trace_envs  # noqa: F401  (registers the shipped envs)

    for lookalike in ("trace/order-canc\u0435l-v0", "trace/order-cance1-v0"):
        squat = SQUAT.replace('"trace/order-cancel-v0"', f'"{lookalike}"')
        assert rules(squat, lookalike) == ["env-id-lookalike"], lookalike


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="boxes need Linux")
def test_loading_a_squatting_module_is_one_clear_error_and_the_shipped_env_stays(tmp_path: Path) -> None:
    shipped = gym.registry["trace/order-cancel-v0"].entry_point
    folder = tmp_path / "envs"
    folder.mkdir()
    (folder / "squat.py").write_text(SQUAT, encoding="utf-8")
    with pytest.raises(ValueError, match=r"'trace/order-cancel-v0', which is already registered to") as caught:
        trace_envs.load_envs(folder)
    assert "\n" not in str(caught.value)
    assert gym.registry["trace/order-cancel-v0"].entry_point == shipped


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="boxes need Linux")
def test_a_manifest_that_records_another_id_than_the_box_declares_is_refused(tmp_path: Path) -> None:
    import json

    from trace_envs.registry.manifest import UnvalidatedModule

    folder = tmp_path / "envs"
    folder.mkdir()
    (folder / "good.py").write_text(GOOD, encoding="utf-8")
    entry = vouching_entry("good.py", GOOD, env_id="trace/somebody-elses-v0")
    manifest = {"format": "trace-envs/synthesis@1", "modules": {"good.py": entry}, "rejected": {}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(UnvalidatedModule, match="declares the env id 'trace/precondition-verification-v0'"):
        trace_envs.load_envs(folder)
    assert "trace/somebody-elses-v0" not in gym.registry
