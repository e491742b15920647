"""The sandbox on its own, with the static gates bypassed (an attacker may slip past an AST check):
what a hostile module tries is refused and recorded, and nothing happens outside the box."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from trace_envs.box.launch import box_processes, namespace_prefix
from trace_envs.synthesis import SandboxLimits, SandboxOutcome, run_in_sandbox, validate_source
from trace_envs.synthesis.gates.execution import execution_gate

from .conftest import GOOD_MODULE, Listener, make_context, redteam_source

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")


def run_box(source: str, **limits: object) -> SandboxOutcome:
    """Two seeds of the fingerprint run: enough to import the module, reset it and play the oracle."""
    return run_in_sandbox(
        source, mode="fingerprint", seeds=[0, 1], env_id="trace/redteam-v0", limits=SandboxLimits(**limits)
    )


def blocked(outcome: SandboxOutcome) -> list[tuple[str, str]]:
    return [(event.event, event.detail) for event in outcome.blocked]


def assert_nothing_escaped(outcome: SandboxOutcome, canary: Path) -> None:
    assert canary.read_text(encoding="utf-8") == "original"
    assert outcome.run_id.split(), "no box was started"
    assert all(box_processes(run_id) == [] for run_id in outcome.run_id.split()), "processes of a box outlived it"


# fixture -> (the event the audit hook must refuse, text of its reason)
HOSTILE: dict[str, tuple[str, str]] = {
    "fork_bomb.py": ("os.fork", "starting processes"),
    "write_outside_scratch.py": ("open", "outside the scratch directory"),
    "subprocess_shell.py": ("subprocess.Popen", "starting processes"),
    "ctypes_system.py": ("ctypes", "ctypes"),
    "getattr_builtins.py": ("open", "outside the scratch directory"),
    "dunder_escape.py": ("os.system", "starting processes"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_code_is_refused_recorded_and_contained(name: str, canary: Path) -> None:
    outcome = run_box(redteam_source(name, canary=str(canary)))
    event, reason = HOSTILE[name]
    assert any(event in e or event in d for e, d in blocked(outcome)), blocked(outcome)
    assert any(reason in d for _, d in blocked(outcome)), blocked(outcome)
    assert all(e.stage == "import" for e in outcome.blocked)
    # the module caught the error and carried on: the run itself completed
    assert outcome.result is not None and outcome.result.error is None
    assert_nothing_escaped(outcome, canary)


def test_a_module_that_catches_the_refusal_is_still_rejected(canary: Path) -> None:
    source = redteam_source("write_outside_scratch.py", canary=str(canary))
    report = validate_source(source, make_context(), gates=[execution_gate])
    assert report.stopped_by == "execution"
    finding = report.findings()[0]
    assert finding.rule == "sandbox-refused"
    assert "attempted open" in finding.message and str(canary) in finding.message
    assert canary.read_text(encoding="utf-8") == "original"


@pytest.mark.parametrize("namespaces", [True, False])
def test_the_local_listener_is_never_contacted(namespaces: bool, listener: Listener, canary: Path) -> None:
    """With the network namespace, and without any namespace (a weaker box: where unshare is refused)."""
    source = redteam_source("socket_listener.py", port=str(listener.port))
    outcome = run_box(source, namespaces=namespaces, weaker_box=not namespaces)
    assert any(event.startswith("socket.") for event, _ in blocked(outcome)), blocked(outcome)
    assert listener.connections == 0
    assert ("network namespace" in outcome.isolation) == (namespaces and "network namespace" in namespace_prefix()[1])
    assert_nothing_escaped(outcome, canary)


def test_without_a_kernel_layer_no_box_starts_and_the_finding_names_it(canary: Path) -> None:
    """Fail closed: a box lacking its namespaces does not start (not even the module's import), and the run's
    failure names each missing layer and --weaker-box."""
    outcome = run_box(GOOD_MODULE.read_text(encoding="utf-8"), namespaces=False)
    assert outcome.crashed is not None and outcome.result is not None and outcome.result.module is None
    assert "network namespace (turned off" in outcome.crashed and "--weaker-box" in outcome.crashed
    assert outcome.boxes_started == 0 and outcome.run_id == ""


def test_home_and_secrets_stay_out_of_reach(fake_home: Path, canary: Path) -> None:
    ssh = run_box(redteam_source("read_ssh_keys.py", home=str(fake_home)))
    assert any(event == "open" and "home directory" in detail for event, detail in blocked(ssh)), blocked(ssh)
    assert "FAKE-PRIVATE-KEY" not in ssh.stdout_tail + ssh.stderr_tail
    keys = run_box(redteam_source("api_key_env.py"))
    assert "ENV:" in keys.stdout_tail, "the module's print did not run"
    assert "sk-ant-canary" not in keys.stdout_tail + keys.stderr_tail
    assert "HOME" not in keys.stdout_tail and "ANTHROPIC" not in keys.stdout_tail
    assert any("process state" in detail for _, detail in blocked(keys)), blocked(keys)
    assert_nothing_escaped(keys, canary)


def test_a_hang_is_killed_with_its_process_group(canary: Path) -> None:
    outcome = run_box(redteam_source("loop_at_import.py"), wall_seconds=5)
    assert outcome.timed_out and outcome.last_stage == "import"
    assert outcome.result is not None and outcome.result.module is None
    assert_nothing_escaped(outcome, canary)


def test_the_cpu_limit_stops_a_spinning_module_before_the_wall_clock() -> None:
    outcome = run_box(redteam_source("loop_at_import.py"), cpu_seconds=2, wall_seconds=60)
    assert not outcome.timed_out
    assert outcome.signal == "SIGXCPU", (outcome.exit_code, outcome.stderr_tail)


def test_the_environment_is_minimal_and_a_good_module_runs_clean() -> None:
    outcome = run_box(GOOD_MODULE.read_text(encoding="utf-8"))
    assert outcome.blocked == []
    assert outcome.result is not None and outcome.result.error is None
    assert sorted(outcome.result.fingerprints) == [0, 1]
    assert outcome.stages == ["startup", "import", "reset", "fingerprint"]
    assert {"rlimits", "audit hook", "scratch directory", "empty environment"} <= set(outcome.isolation)
    if "mount namespace" in outcome.isolation:
        assert "read-only filesystem" in outcome.isolation
