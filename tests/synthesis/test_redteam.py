"""Every red-team module is stopped by the right gate, with a message that names the cause."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

from trace_envs.synthesis import ValidationReport, validate_source

from .conftest import REDTEAM, TAU2_DATA, make_context, redteam_source

# file -> (gate that must stop it, a rule it must report, text its findings must contain)
EXPECTED: dict[str, tuple[str, str, str]] = {
    "syntax_error.py": ("parse", "syntax-error", "was never closed"),
    "global_rng.py": ("static_policy", "global-rng", "random.choice"),
    "wall_clock.py": ("static_policy", "wall-clock", "datetime.datetime.now"),
    "wall_clock_time.py": ("static_policy", "forbidden-import", "time: it reads the wall clock"),
    "hash_order.py": ("static_policy", "nondeterministic-builtin", "PYTHONHASHSEED"),
    "eval_exec.py": ("static_policy", "forbidden-name", "eval"),
    "forbidden_import.py": ("static_policy", "forbidden-import", "import of pickle"),
    "fork_bomb.py": ("static_policy", "forbidden-import", "import of os"),
    "write_outside_scratch.py": ("static_policy", "forbidden-name", "open opens files"),
    "read_ssh_keys.py": ("static_policy", "forbidden-name", "open opens files"),
    "api_key_env.py": ("static_policy", "forbidden-import", "import of os"),
    "socket_listener.py": ("static_policy", "forbidden-import", "import of socket"),
    "subprocess_shell.py": ("static_policy", "forbidden-import", "import of subprocess"),
    "ctypes_system.py": ("static_policy", "forbidden-import", "import of ctypes"),
    "getattr_builtins.py": ("static_policy", "dynamic-attribute", "computed attribute name"),
    "dunder_escape.py": ("static_policy", "dunder-attribute", "__subclasses__"),
    "schema_mismatch.py": ("contract", "schema-mismatch", "parameters (order_number)"),
    "tool_not_in_domain.py": ("contract", "tool-not-in-domain", "'refund_everything' is not a tool of the retail"),
    "wrong_capability.py": ("contract", "wrong-capability", "'datetime_reasoning'"),
    "no_env_class.py": ("contract", "no-env-class", "no subclass of CapabilityEnv"),
    "leaked_ids.py": ("leakage", "leaked-evaluation-data", "retail evaluation task 0"),
    "leaked_instruction.py": ("leakage", "leaked-evaluation-data", "retail evaluation task 0"),
    "set_order.py": ("execution", "property-determinism", "not deterministic across processes"),
    "oracle_fails.py": ("execution", "property-oracle_solves", "the oracle scores 0.0"),
    "lax_verifier.py": ("execution", "property-junk_fails", "the verifier is too lax"),
    "flawed_passes.py": ("execution", "property-flawed_fails", "flawed_actions() scores 1.0"),
    "same_task_every_seed.py": ("execution", "property-diversity", "generate the same task"),
    "state_leak.py": ("execution", "property-no_state_leak", "state leaks between resets"),
    "junk_exceptions.py": ("execution", "property-any_action_is_safe", "ValueError: unhandled action"),
    "memory_bomb.py": ("execution", "memory", "ran out of memory"),
    "loop_at_import.py": ("execution", "timeout", "did not finish within 10 s (wall clock) during import"),
    "loop_in_generate.py": ("execution", "timeout", "during reset"),
    "loop_in_step.py": ("execution", "timeout", "during property"),
}
SANDBOXED = {name for name, (gate, _, _) in EXPECTED.items() if gate == "execution"}
LATER_GATES = {"flawed_is_junk.py": "capability"}
"""Modules that only a gate not built yet can stop (issue 15's capability check)."""


def test_the_suite_covers_every_fixture_and_at_least_25() -> None:
    assert {p.name for p in REDTEAM.glob("*.py")} == set(EXPECTED) | set(LATER_GATES)
    assert len(EXPECTED) >= 25


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_module_is_stopped_by_the_right_gate(name: str, leaked: dict[str, str], tmp_path: Path) -> None:
    gate, rule, text = EXPECTED[name]
    if name in SANDBOXED and not sys.platform.startswith("linux"):
        pytest.skip("the sandbox needs Linux")
    if gate in ("leakage", "execution") and not TAU2_DATA.is_dir():
        pytest.skip(f"the leakage gate (run before execution) needs the tau2 data at {TAU2_DATA}")
    source = redteam_source(name, canary=str(tmp_path / "canary"), home=str(tmp_path), port="9", **leaked)
    report = validate_source(source, make_context(name, wall=10.0 if "loop" in name else 60.0))
    assert report.stopped_by == gate, report.table()
    failed = report.result(gate)
    assert rule in {f.rule for f in failed.findings}, report.table()
    assert any(text in f.render() for f in failed.findings if f.rule == rule), report.table()
    # every finding says how to fix it, and the gates after the one that stopped it did not run
    assert all(f.fix for f in failed.findings)
    assert all(r.status == "skipped" for r in report.results[report.results.index(failed) + 1 :])


@functools.cache
def later_gate_report(name: str) -> ValidationReport:
    """One validation per module, shared by the two tests below."""
    if not sys.platform.startswith("linux") or not TAU2_DATA.is_dir():
        pytest.skip(f"needs Linux and the tau2 data at {TAU2_DATA}")
    return validate_source(redteam_source(name), make_context(name))


@pytest.mark.parametrize("name", sorted(LATER_GATES))
def test_modules_for_later_gates_pass_every_gate_built_so_far(name: str) -> None:
    report = later_gate_report(name)
    assert report.passed, report.table()


@pytest.mark.xfail(strict=True, reason="the capability gate (issue 15, gate 5) is not built yet")
@pytest.mark.parametrize("name", sorted(LATER_GATES))
def test_modules_for_later_gates_are_stopped_by_them(name: str) -> None:
    assert later_gate_report(name).stopped_by == LATER_GATES[name]
