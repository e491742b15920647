"""The static classes of issue 26, one hostile module each: every one is stopped by the parse or static
gate with a finding that names the line, what was seen and the fix, and the same module without its
payload passes both gates (so it is the payload, and nothing else, that the gates refuse)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trace_envs.synthesis import GateContext, validate_file, validate_source
from trace_envs.synthesis.gates.static_policy import parse_gate, static_policy_gate

from .conftest import REDTEAM, TAU2_DATA

ALLOWLIST = REDTEAM / "allowlist"
CONTEXT = GateContext(target="retail")

# file -> (rule, text its finding must contain)
EXPECTED: dict[str, tuple[str, str]] = {
    "typing_sys_modules.py": ("name-not-allowed", "typing.sys reaches interpreter internals"),
    "dataclasses_builtins_open.py": ("name-not-allowed", "dataclasses.builtins reaches open, exec and eval"),
    "enum_bltns.py": ("name-not-allowed", "enum.bltns is the builtins module"),
    "statistics_sys.py": ("name-not-allowed", "statistics.sys reaches interpreter internals"),
    "core_importlib.py": ("forbidden-import", "import of trace_envs.core.capability"),
    "core_jinja2.py": ("name-not-allowed", "trace_envs.core.templates"),
    "core_numpy.py": ("forbidden-import", "import of trace_envs.core.spaces"),
    "core_import_by_string.py": ("name-not-allowed", "trace_envs.core.register_env"),
    "pydantic_import_string.py": ("name-not-allowed", "imports whatever module a string names"),
    "pydantic_v1_settings.py": ("forbidden-import", "fills fields from the environment"),
    "module_rebound.py": ("module-as-value", "the module json is used as a value"),
    "attrgetter_computed.py": ("name-not-allowed", "operator.attrgetter reaches attributes by computed names"),
    "format_attribute.py": ("format-reach", "{0.modules} walks attributes"),
    "del_finalizer.py": ("dunder-method", "__del__ runs when the interpreter chooses"),
    "patch_verify.py": ("patches-import", "this changes CapabilityEnv, which the module imported"),
    # issue 34: names and templates built at run time, and rules switched off by a local of a builtin's name
    "audit_reentry_str.py": ("class-built-at-run-time", "type() with a name, bases and a namespace"),
    "getattr_parameter.py": ("dynamic-attribute", "getattr with a computed attribute name"),
    "type_computed_dunder.py": ("class-built-at-run-time", "named at run time"),
    "setattr_computed_dunder.py": ("dynamic-attribute", "setattr with a computed attribute name"),
    "enum_functional_dunder.py": ("class-built-at-run-time", "Enum(name, members) builds an enum at run time"),
    "format_built_at_run_time.py": ("format-reach", "cannot trace to string literals"),
}


def without_payload(source: str) -> str:
    return "".join(line for line in source.splitlines(keepends=True) if "# payload" not in line)


def test_every_fixture_is_listed() -> None:
    assert {p.name for p in ALLOWLIST.glob("*.py")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_hostile_module_is_stopped_by_the_static_gate(name: str) -> None:
    rule, text = EXPECTED[name]
    source = (ALLOWLIST / name).read_text(encoding="utf-8")
    report = validate_source(source, GateContext(target="retail", filename=name))
    assert report.stopped_by == "static_policy", report.table()
    findings = [f for f in report.result("static_policy").findings if f.rule == rule]
    assert any(text in f.render() for f in findings), report.table()
    payload_lines = {n for n, line in enumerate(source.splitlines(), start=1) if "# payload" in line}
    assert all(f.line in payload_lines and f.fix for f in findings), report.table()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_same_module_without_its_payload_passes(name: str) -> None:
    source = without_payload((ALLOWLIST / name).read_text(encoding="utf-8"))
    for gate in (parse_gate, static_policy_gate):
        result = gate(source, CONTEXT)
        assert result.passed, [f.render() for f in result.findings]


CLEAN = without_payload((ALLOWLIST / "enum_bltns.py").read_text(encoding="utf-8"))
UTF7 = b"# -*- coding: utf-7 -*-\n# +AAo-import os\n"
UNICODE_ESCAPE = b"# coding: unicode_escape\n# \\nimport os\n"
LATIN1 = b"\n# vim: set coding=latin-1\n"


def imported(tree: ast.Module) -> set[str]:
    return {alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names}


@pytest.mark.parametrize(("prefix", "line"), [(UTF7, 1), (UNICODE_ESCAPE, 1), (LATIN1, 2)])
def test_a_coding_cookie_is_refused_by_the_parse_gate(prefix: bytes, line: int, tmp_path: Path) -> None:
    data = prefix + CLEAN.encode("utf-8")
    executed = compile(data, "m", "exec", ast.PyCF_ONLY_AST)  # what the importer would run (not executed)
    read = ast.parse(data.decode("utf-8"))  # what a UTF-8 reader sees
    if prefix != LATIN1:
        hidden = imported(executed) - imported(read)
        assert hidden == {"os"}, "the cookie no longer changes what Python runs: the fixture is stale"
    path = tmp_path / "cookie.py"
    path.write_bytes(data)
    report = validate_file(path, GateContext(target="retail"))
    assert report.stopped_by == "parse", report.table()
    (finding,) = report.result("parse").findings
    assert (finding.rule, finding.line) == ("coding-cookie", line)
    assert "Delete the coding line" in finding.fix


def test_even_a_utf8_cookie_is_refused() -> None:
    result = parse_gate("# -*- coding: utf-8 -*-\n" + CLEAN, CONTEXT)
    assert [f.rule for f in result.findings] == ["coding-cookie"]


def test_a_byte_order_mark_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + CLEAN.encode("utf-8"))
    report = validate_file(path, GateContext(target="retail"))
    assert report.stopped_by == "parse", report.table()
    assert [(f.rule, f.line) for f in report.result("parse").findings] == [("byte-order-mark", 1)]


def test_a_byte_that_is_not_utf8_is_refused_by_line_and_the_report_keeps_the_files_bytes(tmp_path: Path) -> None:
    data = CLEAN.encode("utf-8").replace(b"Check the policy", b"Check the p\xf6licy")
    path = tmp_path / "latin1.py"
    path.write_bytes(data)
    report = validate_file(path, GateContext(target="retail"))
    assert report.stopped_by == "parse", report.table()
    (finding,) = report.result("parse").findings
    assert finding.rule == "not-utf8" and finding.subject == "byte 0xf6"
    assert finding.line == CLEAN.splitlines().index(next(x for x in CLEAN.splitlines() if "Check the" in x)) + 1
    import hashlib

    assert report.source_sha256 == hashlib.sha256(data).hexdigest()


def test_validate_names_the_line_of_a_byte_that_is_not_utf8_and_refuses_a_cookie(tmp_path: Path) -> None:
    pytest.importorskip("typer")
    if not TAU2_DATA.is_dir():
        pytest.skip(f"validate --target retail needs the tau2 data at {TAU2_DATA}")
    from typer.testing import CliRunner

    from trace_envs.cli import build_app

    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes(b"x = 1\n# caf\xe9\n")
    result = CliRunner().invoke(build_app(), ["validate", str(latin1), "--target", "retail"])
    assert result.exit_code == 2
    assert "is not UTF-8: line 2 holds byte 0xe9" in " ".join(result.output.split())
    cookie = tmp_path / "cookie.py"
    cookie.write_bytes(UTF7 + CLEAN.encode("utf-8"))
    data = ["--data", str(TAU2_DATA)]
    result = CliRunner().invoke(build_app(), ["validate", str(cookie), "--target", "retail", *data])
    assert result.exit_code == 1, result.output
    assert "rejected by parse" in result.output and "coding declaration" in " ".join(result.output.split())


def test_a_lone_surrogate_in_a_generated_text_is_refused_not_a_gate_error() -> None:
    report = validate_source("x = 1\ny = '\ud800'\n", GateContext(target="retail"))
    assert report.stopped_by == "parse", report.table()
    assert [(f.rule, f.line, f.subject) for f in report.result("parse").findings] == [("not-utf8", 2, "U+D800")]
