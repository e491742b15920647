"""Reports of the validation gates: one finding per problem, one result per gate, one report per module.

A finding names where (line, seed), what (the construct, event or property) and the fix, so that a person
or the repair loop can act on it without rerunning anything.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field, field_validator

from trace_envs.safe_text import clean_text, shown

GateStatus = Literal["passed", "failed", "skipped"]


class Finding(BaseModel):
    """One problem a gate found in a module."""

    rule: str = Field(description="Short stable code of the rule broken, e.g. 'forbidden-import'.")
    message: str = Field(description="What is wrong, in one sentence.")
    fix: str = Field(description="What to change so the gate passes.")
    line: int | None = Field(default=None, description="1-based line in the module, where known.")
    subject: str = Field(default="", description="The offending construct: source text, event or property.")
    seed: int | None = Field(default=None, description="The seed that shows the problem, where one does.")

    @field_validator("rule", "message", "fix", "subject")
    @classmethod
    def _clean(cls, text: str) -> str:
        """Findings quote the module (its source, its exception messages): no control characters reach a
        terminal, a report file or a repair prompt."""
        return clean_text(text)

    def render(self) -> str:
        """``line 12: random.choice: <message> Fix: <fix>`` (the parts that are known), on one line: a part
        that holds a newline or another control character is shown quoted and escaped (:func:`shown`), so a
        module's exception text cannot print rows of its own under the gate table."""
        where = [
            f"line {self.line}" if self.line is not None else "",
            f"seed {self.seed}" if self.seed is not None else "",
        ]
        prefix = ", ".join(part for part in where if part)
        head = f"{prefix}: " if prefix else ""
        subject = f"{shown(self.subject)}: " if self.subject else ""
        return f"{head}{subject}{shown(self.message)} Fix: {shown(self.fix)}"


class GateResult(BaseModel):
    """The outcome of one gate on one module."""

    gate: str
    status: GateStatus
    seconds: float = 0.0
    findings: list[Finding] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict, description="Measurements and evidence (gate-specific).")

    @field_validator("details")
    @classmethod
    def _clean_details(cls, details: dict[str, Any]) -> dict[str, Any]:
        """Evidence can come from the module's process too: its text is cleaned like a finding's."""
        cleaned: dict[str, Any] = _cleaned(details)
        return cleaned

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def summary(self) -> str:
        """The first finding (or how many), for one line of the gate table."""
        if not self.findings:
            return shown(clean_text(str(self.details.get("note", ""))))
        first = self.findings[0].render()
        more = len(self.findings) - 1
        return first + (f" (+{more} more)" if more else "")


class ValidationReport(BaseModel):
    """Every gate's result for one module, and which gate stopped it."""

    module: str = Field(description="The module's file name (or '<source>').")
    source_sha256: str
    target: str
    capability: str | None = None
    results: list[GateResult]
    seconds: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Whether every gate passed (the JSON form carries it too)."""
        return all(r.status == "passed" for r in self.results)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def stopped_by(self) -> str | None:
        """The first gate that failed (``None`` when every gate passed)."""
        return next((r.gate for r in self.results if r.status == "failed"), None)

    def result(self, gate: str) -> GateResult:
        for result in self.results:
            if result.gate == gate:
                return result
        raise KeyError(f"no gate {gate!r} in this report; gates: {[r.gate for r in self.results]}")

    def findings(self) -> list[Finding]:
        return [finding for result in self.results for finding in result.findings]

    def table(self) -> str:
        """A plain-text table: gate, status, seconds, first finding."""
        rows = [(r.gate, r.status, f"{r.seconds:.2f}", r.summary()) for r in self.results]
        width = max(len("gate"), *(len(row[0]) for row in rows))
        lines = [f"{'gate':<{width}}  status   seconds  finding"]
        lines += [
            f"{gate:<{width}}  {status:<7}  {secs:>7}  {summary}".rstrip() for gate, status, secs, summary in rows
        ]
        verdict = "passed" if self.passed else f"rejected by {self.stopped_by}"
        lines.append(f"{shown(self.module)}: {verdict} in {self.seconds:.2f} s")
        return clean_text("\n".join(lines))


def _cleaned(value: Any) -> Any:
    """``value`` with every string in it (keys included) passed through :func:`clean_text`."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {_cleaned(key): _cleaned(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cleaned(item) for item in value)
    return value
