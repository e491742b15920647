"""The synthesis section: the gate table over every synthesis manifest of the run (one row per validated
module and target, one column per gate in the order the gates ran) and the capabilities whose synthesis
never passed, with why."""

from __future__ import annotations

from trace_envs.synthesis.manifest import ModuleEntry, Rejection

from .inputs import ReportInputs
from .sections import Section, Table

STATUS_MARK = {"passed": "passed", "failed": "FAILED", "skipped": "skipped"}
"""How a gate's status reads in a cell (a failure in capitals so it stands out in plain Markdown too)."""


def _by_target(inputs: ReportInputs) -> tuple[list[ModuleEntry], list[Rejection]]:
    """Every module and rejection of every manifest, in target order (then by name)."""
    entries = [entry for m in inputs.manifests for entry in m.manifest.modules.values()]
    rejected = [r for m in inputs.manifests for r in m.manifest.rejected.values()]
    entries.sort(key=lambda e: (inputs.target_rank(e.target), e.module))
    rejected.sort(key=lambda r: (inputs.target_rank(r.target), r.capability))
    return entries, rejected


def _counts(entries: list[ModuleEntry], rejected: list[Rejection]) -> str:
    """``device 2, retail 1`` validated (and rejected) per target."""
    targets = list(dict.fromkeys([*(e.target for e in entries), *(r.target for r in rejected)]))
    parts = []
    for target in targets:
        valid = sum(e.target == target for e in entries)
        failed = sum(r.target == target for r in rejected)
        parts.append(f"{target} {valid}" + (f" ({failed} rejected)" if failed else ""))
    return ", ".join(parts)


def synthesis_section(inputs: ReportInputs) -> Section:
    """The section (``missing`` when the run folder has no synthesis ``manifest.json``)."""
    section = Section("synthesis", "Synthesis gate table")
    if not inputs.manifests:
        section.missing = "no synthesis manifest.json: run `trace-envs synthesize ANALYSIS --out DIR`"
        return section
    entries, rejected = _by_target(inputs)
    files = ", ".join(f"`{inputs.relative(m.path)}`" for m in inputs.manifests)
    section.paragraphs.append(
        f"{len(entries)} module(s) validated and {len(rejected)} capability(ies) rejected in "
        f"{len(inputs.manifests)} manifest(s) ({files}); by target: {_counts(entries, rejected) or 'none'}. Gates "
        "run cheapest first and a module is registered only when none failed; skipped means the gate had nothing "
        "to check (e.g. calibration without a base policy)."
    )
    if entries:
        gates = list(dict.fromkeys(g.gate for entry in entries for g in entry.gates))
        table = Table(["target", "module (capability)", "generator, attempts", *gates, "cost"], [])
        for entry in entries:
            status = {g.gate: STATUS_MARK.get(g.status, g.status) for g in entry.gates}
            module = f"`{entry.module}`"
            if entry.module.removesuffix(".py") != entry.capability:
                module += f" (`{entry.capability}`)"
            table.rows.append(
                [entry.target, module, f"{entry.generator}, {entry.attempts}",
                 *(status.get(gate, "not run") for gate in gates), f"${entry.cost_usd:.4f}"]
            )  # fmt: skip
        section.tables.append(table)
    if rejected:
        table = Table(["target", "rejected capability", "generator", "attempts", "stopped by", "reason"], [])
        for r in rejected:
            table.rows.append(
                [r.target, f"`{r.capability}`", r.generator, str(r.attempts), r.stopped_by or "n/a", r.reason]
            )
        section.tables.append(table)
    return section
