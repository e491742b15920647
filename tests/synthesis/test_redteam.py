"""Every red-team module is stopped by the right gate, with a message that names the cause."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from trace_envs.synthesis import validate_source

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
    "schema_mismatch.py": ("static_policy", "forbidden-import", "import of trace_envs.domains.tools"),
    "tool_not_in_domain.py": ("contract", "tool-not-in-domain", "'refund_everything' is not a tool of the retail"),
    "wrong_capability.py": ("contract", "wrong-capability", "'datetime_reasoning'"),
    "no_env_class.py": ("contract", "no-env-class", "no subclass of CapabilityEnv"),
    "leaked_ids.py": ("leakage", "leaked-evaluation-data", "retail evaluation task 0"),
    "leaked_instruction.py": ("leakage", "leaked-evaluation-data", "retail evaluation task 0"),
    "leaked_at_runtime.py": ("execution", "leaked-evaluation-data", "retail evaluation task 0"),
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
    "flawed_is_junk.py": ("capability", "flawed-not-a-near-miss", "keeps no step of the reference"),
    "leaked_policy.py": ("execution", "leaked-evaluation-data", "policy: the id"),
    "leaked_reply.py": ("execution", "leaked-evaluation-data", "reply to reference step"),
    "terminal_escapes.py": ("execution", "property-any_action_is_safe", "unhandled action"),
    "env_id_squat.py": ("execution", "env-id-taken", "trace/order-cancel-v0 is already registered"),
    "keyword_stuffing.py": (
        "execution",
        "property-adversarial_junk_fails",
        "the 'lookups, then every candidate answer' policy wins",
    ),
    "seed_keyed_reward.py": ("execution", "property-junk_fails", "the verifier is too lax"),
    "model_user_keyed.py": ("execution", "property-model_user", "with a model-played user the 'empty' policy"),
}
SANDBOXED = {name for name, (gate, _, _) in EXPECTED.items() if gate in ("execution", "capability")}


def test_the_suite_covers_every_fixture_and_at_least_25() -> None:
    assert {p.name for p in REDTEAM.glob("*.py")} == set(EXPECTED)
    assert len(EXPECTED) >= 25


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_module_is_stopped_by_the_right_gate(name: str, leaked: dict[str, str], tmp_path: Path) -> None:
    gate, rule, text = EXPECTED[name]
    if name in SANDBOXED and not sys.platform.startswith("linux"):
        pytest.skip("the sandbox needs Linux")
    if gate in ("leakage", "execution", "capability") and not TAU2_DATA.is_dir():
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


def test_a_redefined_tool_is_explained_by_the_contract_gate_where_its_import_is_trusted() -> None:
    """``@tool`` is outside every target's kit, so the static gate stops ``schema_mismatch.py``; a caller that
    trusts the decorator's module still gets the contract gate's account of the redefined tool."""
    context = make_context("schema_mismatch.py", trusted_imports=("trace_envs.domains.tools",))
    report = validate_source(redteam_source("schema_mismatch.py"), context)
    assert report.stopped_by == "contract", report.table()
    failed = report.result("contract")
    assert any(f.rule == "schema-mismatch" and "parameters (order_number)" in f.render() for f in failed.findings)


def test_a_modules_terminal_escapes_and_fake_rows_stay_one_escaped_line(tmp_path: Path) -> None:
    """Issue 34: a rejected module's exception text printed multi-line fake gate rows, a clipboard write (OSC 52),
    a window title and a link in ``validate``. The table has one row per gate, and nothing in it acts on a tty."""
    if not sys.platform.startswith("linux") or not TAU2_DATA.is_dir():
        pytest.skip("the sandbox needs Linux and the leakage gate the tau2 data")
    report = validate_source(redteam_source("terminal_escapes.py"), make_context("terminal_escapes.py"))
    table = report.table()
    assert len(table.splitlines()) == len(report.results) + 2, table
    assert not any((ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F for c in table), table
    assert "terminal_escapes.py: rejected by execution" in table.splitlines()[-1]
    assert "\\n" in table  # the module's newlines are shown, escaped, inside one quoted line
