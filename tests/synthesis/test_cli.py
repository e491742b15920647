"""`trace-envs validate` and `trace-envs synthesize`: gate tables, JSON reports, exit codes 0/1/2, and
validating an edited module again so that its folder loads."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

from .conftest import CAPABILITY, GOOD_MODULE, REDTEAM, TAU2_DATA, needs_sandbox_and_tau2

pytest.importorskip("typer")
needs_sandbox = needs_sandbox_and_tau2()
FAST = ["--seeds", "5", "--fuzz-examples", "10", "--data", str(TAU2_DATA)]


def invoke(*args: str):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from trace_envs.cli import build_app

    return CliRunner().invoke(build_app(), list(args))


def one_line(output: str) -> str:
    return " ".join(output.split())


@pytest.fixture
def clean_registry() -> Iterator[None]:
    before = set(gym.registry)
    yield
    for env_id in set(gym.registry) - before:
        del gym.registry[env_id]


@needs_sandbox
def test_validate_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = invoke("validate", str(GOOD_MODULE), *FAST, "--json", str(report))
    assert result.exit_code == 0, result.output
    assert "retail_cancel.py: passed in" in result.output and "capability" in result.output
    data = json.loads(report.read_text())
    assert data["passed"] is True and data["stopped_by"] is None and data["target"] == "retail"  # target inferred
    junk = REDTEAM / "flawed_is_junk.py"
    result = invoke("validate", str(GOOD_MODULE), str(junk), *FAST, "--json", str(report), "--capability", CAPABILITY)
    assert result.exit_code == 1, result.output
    assert "flawed_is_junk.py: rejected by capability" in one_line(result.output)
    both = json.loads(report.read_text())
    assert [(r["module"], r["stopped_by"]) for r in both] == [
        ("retail_cancel.py", None),
        ("flawed_is_junk.py", "capability"),
    ]


@needs_sandbox
def test_validate_with_calibration_prints_its_statistics() -> None:
    args = ["--calibrate", "noop", "--calibration-seeds", "2", "--samples", "2"]
    result = invoke("validate", str(GOOD_MODULE), *FAST, *args)
    assert result.exit_code == 1, result.output
    text = one_line(result.output)
    assert "rejected by calibration" in text and "calibration-too-hard" not in text  # the table shows messages
    assert "below the band 20%-60%" in text


def test_validate_bad_input_exits_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = invoke("validate", str(tmp_path / "absent.py"))
    assert missing.exit_code == 2 and "does not exist" in one_line(missing.output)
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n", encoding="utf-8")
    not_an_env = invoke("validate", str(plain))
    assert not_an_env.exit_code == 2 and "plain.py defines no env" in one_line(not_an_env.output)
    assert "--target" not in not_an_env.output  # the file is the problem, not a missing option
    broken = tmp_path / "broken.py"
    broken.write_text("class Env(:\n", encoding="utf-8")
    assert "broken.py is not valid Python (line 1" in one_line(invoke("validate", str(broken)).output)
    no_domain = tmp_path / "no_domain.py"
    no_domain.write_text("from trace_envs.core import CapabilityEnv\n\nclass MyEnv(CapabilityEnv):\n    pass\n")
    unknown = invoke("validate", str(no_domain))
    assert unknown.exit_code == 2 and "cannot tell which target" in one_line(unknown.output)
    wrong = invoke("validate", str(plain), "--target", "shop")
    assert wrong.exit_code == 2 and "unknown target 'shop'" in one_line(wrong.output)
    monkeypatch.delenv("TRACE_ENVS_TAU2_DATA", raising=False)
    no_data = invoke("validate", str(GOOD_MODULE))
    assert no_data.exit_code == 2 and "--data" in one_line(no_data.output)
    assert "Traceback" not in missing.output + unknown.output + no_data.output


def test_synthesize_bad_input_exits_2(analysis_file: Path, tmp_path: Path) -> None:
    """Each check fires in its turn, whether or not the tau2 data exists (a fresh clone has no ../shared):
    the input file first, then the target, the capability and the generator, and the target's data last."""
    no_data = tmp_path / "no-tau2-data"
    base = ["synthesize", str(analysis_file), "-t", "retail", "-o", str(tmp_path), "--data", str(no_data)]
    bad_generator = invoke(*base, "-g", "gpt-4")
    assert bad_generator.exit_code == 2 and "--generator" in one_line(bad_generator.output)
    bad_capability = invoke(*base, "-g", "catalogue", "--capability", "no_such")
    assert bad_capability.exit_code == 2 and "no_such not in the analysis" in one_line(bad_capability.output)
    missing = invoke("synthesize", str(tmp_path / "none.json"), *base[2:], "-g", "catalogue")
    assert missing.exit_code == 2 and "not a readable analysis.json" in one_line(missing.output)
    bad_target = invoke("synthesize", str(tmp_path / "none.json"), "-t", "shop", "-g", "catalogue", "-o", "x")
    assert "not a readable analysis.json" in one_line(bad_target.output)  # the missing file is named first
    no_tau2 = invoke(*base, "-g", "catalogue")
    assert no_tau2.exit_code == 2 and "--data" in one_line(no_tau2.output)
    assert not (tmp_path / "manifest.json").exists()  # nothing was written


@pytest.mark.usefixtures("no_api_keys")
def test_synthesize_without_a_key_is_one_line_before_anything_is_written(analysis_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    out = tmp_path / "envs"
    result = invoke(
        "synthesize", str(analysis_file), "-t", "device", "-g", "anthropic:claude-sonnet-4-6", "-o", str(out)
    )
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trace-envs synthesize: ") and "$ANTHROPIC_API_KEY" in lines[0]
    assert not out.exists()


@needs_sandbox
@pytest.mark.usefixtures("clean_registry")
def test_an_edited_module_loads_again_once_validated(analysis_file: Path, tmp_path: Path) -> None:
    import trace_envs
    from trace_envs.registry.manifest import UnvalidatedModule

    out = tmp_path / "envs"
    result = invoke("synthesize", str(analysis_file), "-t", "retail", "-g", "catalogue", "-o", str(out), *FAST)
    assert result.exit_code == 0, result.output
    assert "offline: the catalogue generator reused shipped envs" in one_line(result.output)
    module = out / f"{CAPABILITY}.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# tuned by hand\n", encoding="utf-8")
    with pytest.raises(UnvalidatedModule, match="edited since it was validated"):
        trace_envs.load_envs(out)
    validated = invoke("validate", str(module), *FAST)
    assert validated.exit_code == 0, validated.output
    assert "recorded" in validated.output
    assert trace_envs.load_envs(out) == ["trace/precondition-verification-v0"]
    # a hand-written module dropped into the folder is refused until validated, then recorded as such; one that
    # would take the id the folder's first module registered is rejected (issue 34: never shadow a registered id)
    shutil.copy(GOOD_MODULE, out / "hand_written.py")
    with pytest.raises(UnvalidatedModule, match="never validated"):
        trace_envs.load_envs(out)
    taken = invoke("validate", str(out / "hand_written.py"), *FAST)
    assert taken.exit_code == 1 and "trace/precondition-verification-v0 is already registered" in one_line(taken.output)
    source = GOOD_MODULE.read_text(encoding="utf-8")
    (out / "hand_written.py").write_text(source.replace('"precondition_verification"', '"order_status_check"'))
    assert invoke("validate", str(out / "hand_written.py"), *FAST).exit_code == 0
    assert sorted(trace_envs.load_envs(out)) == ["trace/order-status-check-v0", "trace/precondition-verification-v0"]
    from trace_envs.synthesis import read_manifest

    manifest = read_manifest(out)
    assert manifest is not None and manifest.modules["hand_written.py"].generator == "hand-written"


def test_synthesize_passes_its_timeout_to_the_generators_client(
    analysis_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relay or a slow endpoint needs more than the 120 s default: --timeout reaches ModelConfig.timeout_s."""
    import trace_envs.synthesis as synthesis

    seen: list[dict[str, object]] = []

    def spy(spec: str, **options: object) -> None:
        seen.append(options)
        raise ValueError("stop here")

    monkeypatch.setattr(synthesis, "make_generator", spy)
    base = [
        "synthesize",
        str(analysis_file),
        "-t",
        "device",
        "-g",
        "openai:http://127.0.0.1:9/v1#m",
        "-o",
        str(tmp_path),
    ]
    invoke(*base)
    invoke(*base, "--timeout", "2400")
    assert [s["timeout_s"] for s in seen] == [120.0, 2400.0]
