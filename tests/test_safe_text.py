"""Text from an env module reaches terminals, report files and repair prompts without control characters."""

from __future__ import annotations

import pytest

from trace_envs.safe_text import clean_text

HOSTILE = {
    "OSC 52 clipboard write (BEL)": ("copy\x1b]52;c;ZWNobyBvd25lZA==\x07done", "copydone"),
    "OSC 52 clipboard write (ST)": ("copy\x1b]52;c;ZWNobw==\x1b\\done", "copydone"),
    "OSC 8 hyperlink": ("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),
    "unterminated OSC": ("ok\x1b]52;c;ZWNobw==", "ok"),
    "CSI cursor up and erase line": ("FAILED\x1b[1A\x1b[2K passed", "FAILED passed"),
    "CSI colour": ("\x1b[32mpassed\x1b[0m", "passed"),
    "8-bit CSI": ("\x9b2Jcleared", "cleared"),
    "8-bit OSC": ("\x9d52;c;abc\x9cafter", "after"),
    "DCS string": ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),
    "carriage return overwrite": ("rejected\rpassed  ", "rejectedpassed  "),
    "backspaces": ("rejected\x08\x08\x08", "rejected"),
    "bell and NUL": ("a\x07b\x00c", "abc"),
    "DEL and C1": ("a\x7fb\x85c", "abc"),
    "lone escape": ("end\x1b", "end"),
    "charset switch": ("a\x1b(0b", "ab"),
    "bidi override": ("user\u202eexe.txt", "userexe.txt"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_control_sequences_are_removed(name: str) -> None:
    text, expected = HOSTILE[name]
    cleaned = clean_text(text)
    assert cleaned == expected
    assert not any((ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in cleaned)


def test_ordinary_text_is_unchanged() -> None:
    text = "Order #W123 for Zoë: 2 × $3.50 ✓ 日本\n\tindented line\n"
    assert clean_text(text) == text
    assert clean_text("a\r\nb") == "a\nb"


def test_findings_reports_and_repair_prompts_carry_no_control_characters() -> None:
    """A module's own text (here a refused string literal with escape sequences in it) is quoted by the
    static gate's finding: the finding, the report's table and JSON, and the repair prompt are clean."""
    from trace_envs.synthesis import GateContext, validate_source
    from trace_envs.synthesis.generation.prompt import repair_prompt

    source = 'text = "{0.name}\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b[1A\x1b[2K passed"\n'
    report = validate_source(source, GateContext(target="retail"))
    assert report.stopped_by == "static_policy"
    (finding,) = report.result("static_policy").findings
    assert finding.rule == "format-reach" and finding.subject.startswith('"{0.name}')
    outputs = [finding.render(), report.table(), report.model_dump_json()]
    outputs.append(repair_prompt(["\x1b[2J" + finding.render()], ["\x1b]0;title\x07x"], "static\x1b[1m_policy"))
    for text in outputs:
        assert "\x1b" not in text and "\x07" not in text and "\\u001b" not in text


def test_the_described_example_task_is_clean() -> None:
    from trace_envs.description import ExampleTask

    task = ExampleTask(
        seed=0,
        task_id="t\x1b[2J",
        goal="goal\x1b]52;c;eA==\x07",
        opening="hi\rPASSED",
        solution=["say \x1b[31mhi"],
        required_facts=["fact\x9b1A"],
    )
    assert (task.task_id, task.goal, task.opening) == ("t", "goal", "hiPASSED")
    assert task.solution == ["say hi"] and task.required_facts == ["fact"]


def test_envs_play_prints_the_envs_messages_without_their_control_sequences(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    from trace_envs.cli import envs

    out = io.StringIO()
    monkeypatch.setattr(envs, "console", Console(file=out, force_terminal=True, width=200))
    envs._print_message({"role": "user", "content": "hi\x1b]52;c;ZWNobw==\x07\x1b[1A\x1b[2K [green]passed"})
    envs._print_message({"role": "assistant", "tool_calls": [{"name": "x\x1b[2J", "arguments": {"a": "\x1b]0;t\x07"}}]})
    printed = out.getvalue()
    assert "]52;" not in printed and "[1A" not in printed and "[2K" not in printed and "[2J" not in printed
    assert "]0;" not in printed and "[green]passed" in printed  # the env's text is shown, not interpreted


def test_gate_evidence_is_cleaned_too() -> None:
    from trace_envs.synthesis.gates.reports import GateResult

    result = GateResult(
        gate="execution", status="passed", details={"seconds": {"oracle\x1b[2K": 1.0}, "note": ["a\x1b]52;c;eA==\x07"]}
    )
    assert result.details == {"seconds": {"oracle": 1.0}, "note": ["a"]}
    assert "\x1b" not in result.model_dump_json()


# ----- shown: the one sanitizer for text a person sees (issue 34, item 4) -----------------------------------

ATTACK = (
    "boom\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b]0;trace-envs: all passed\x07"
    "\x1b]8;;https://evil.example\x1b\\docs\x1b]8;;\x1b\\\r\x1b[32m100% passed\x1b[0m\n"
    "parse          passed      0.00\nexecution      passed      0.01"
)
"""An exception text as issue 34's module raised it: clipboard write, window title, link, a carriage return
and a green "100%", then fake gate rows on lines of their own."""


def _harmless(text: str) -> bool:
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029\u202e" for c in text)


def test_shown_keeps_plain_text_and_quotes_text_with_control_characters_on_one_line() -> None:
    from trace_envs.safe_text import shown

    assert shown("Order #W123 for Zoë: 2 × $3.50 ✓") == "Order #W123 for Zoë: 2 × $3.50 ✓"
    assert shown('a\n"b"\\') == '"a\\n\\"b\\"\\\\"'
    assert shown("x\u202ey\u2028z") == '"x\\u202ey\\u2028z"'
    text = shown(ATTACK)
    assert _harmless(text) and text.startswith('"') and text.endswith('"')
    assert "\\x1b]52;c;" in text and "\\r" in text and "\\n" in text  # what was tried stays visible
    assert shown(text) == text  # idempotent: shown twice is shown once
    assert shown("abcdef", limit=4) == "abc…"


def test_a_finding_and_the_gate_table_stay_one_row_each_whatever_the_module_raised() -> None:
    from trace_envs.synthesis.gates.reports import Finding, GateResult, ValidationReport

    finding = Finding(rule="property-any_action_is_safe", message=ATTACK, fix="Handle every action.", subject=ATTACK)
    assert "\n" not in finding.render() and _harmless(finding.render())
    results = [
        GateResult(gate="parse", status="passed"),
        GateResult(gate="execution", status="failed", findings=[finding]),
    ]
    table = ValidationReport(module="m\n.py", source_sha256="0", target="retail", results=results).table()
    assert len(table.splitlines()) == 1 + len(results) + 1, table  # header, one row per gate, verdict
    assert _harmless(table.replace("\n", ""))


def test_the_rollout_error_printer_and_first_errors_escape_a_boxs_text() -> None:
    """``cli/rollout.py``'s error printer wrote an OSC 52 clipboard write, a window title, a link and a fake green
    "100%" row straight to the operator's terminal."""
    import io

    from rich.console import Console

    from trace_envs.cli.rollout import print_errors
    from trace_envs.rollout import first_errors
    from trace_envs.rollout.store import EpisodeRecord

    record = EpisodeRecord.model_construct(env_id="trace/x-v0", seed=3, error=ATTACK)
    lines, _ = first_errors([record])
    assert lines and all(_harmless(line) for line in lines)
    out = io.StringIO()
    print_errors(Console(file=out, force_terminal=True, width=300), [record])
    printed = out.getvalue()
    assert "\x1b]52" not in printed and "\x1b]0;" not in printed and "\x1b]8;" not in printed and "\r" not in printed
    assert "\\x1b]52;c;" in printed


def test_print_error_shows_a_message_with_escapes_as_one_escaped_line(capsys: pytest.CaptureFixture[str]) -> None:
    from trace_envs.cli.errors import print_error

    print_error(ATTACK, "rollout stopped:")
    out = capsys.readouterr().out
    assert "\x1b]52" not in out and "\r" not in out and "parse          passed" not in out.splitlines()[-1:]
    assert "\\x1b]52;c;" in out and len(out.strip().splitlines()) == 1


def test_a_report_cell_holding_a_modules_text_is_one_escaped_line() -> None:
    from trace_envs.report.markdown import table_markdown
    from trace_envs.report.sections import Table

    lines = table_markdown(Table(["reason"], [[ATTACK]]))
    assert len(lines) == 4 and _harmless("".join(lines))


def test_a_pipeline_progress_row_shows_a_boxs_text_escaped() -> None:
    import io

    from rich.console import Console
    from rich.progress import Progress, TextColumn

    from trace_envs.cli.pipeline import ProgressDisplay

    out = io.StringIO()
    with Progress(
        TextColumn("{task.fields[status]}"), console=Console(file=out, force_terminal=False, width=400)
    ) as bar:
        display = ProgressDisplay(bar, ("rollout",))
        display.stage_status("rollout", ATTACK, 1, 2)
        status = bar.tasks[0].fields["status"]
    assert _harmless(status) and "\\x1b]52;c;" in status and status.endswith(" 1/2")
