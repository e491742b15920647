"""The synthesis section: the gate table (one row per validated module, one column per gate, in the order
the gates ran) and the capabilities whose synthesis never passed, with why."""

from __future__ import annotations

from .inputs import ReportInputs
from .sections import Section, Table

STATUS_MARK = {"passed": "passed", "failed": "FAILED", "skipped": "skipped"}
"""How a gate's status reads in a cell (a failure in capitals so it stands out in plain Markdown too)."""


def synthesis_section(inputs: ReportInputs) -> Section:
    """The section (``missing`` when the run folder has no synthesis ``manifest.json``)."""
    section = Section("synthesis", "Synthesis gate table")
    manifest = inputs.manifest
    if manifest is None:
        section.missing = "no synthesis manifest.json: run `trace-envs synthesize ANALYSIS --out DIR`"
        return section
    where = f" (`{inputs.relative(inputs.manifest_path)}`)" if inputs.manifest_path else ""
    entries = [manifest.modules[name] for name in sorted(manifest.modules)]
    gates = list(dict.fromkeys(g.gate for entry in entries for g in entry.gates))
    section.paragraphs.append(
        f"{len(entries)} module(s) validated and {len(manifest.rejected)} capability(ies) rejected{where}. Gates run "
        "cheapest first and a module is registered only when none failed; skipped means the gate had nothing to "
        "check (e.g. calibration without a base policy)."
    )
    if entries:
        table = Table(["module", "capability", "generator", "attempts", *gates, "cost"], [])
        for entry in entries:
            status = {g.gate: STATUS_MARK.get(g.status, g.status) for g in entry.gates}
            table.rows.append(
                [
                    f"`{entry.module}`",
                    f"`{entry.capability}`",
                    entry.generator,
                    str(entry.attempts),
                    *(status.get(gate, "not run") for gate in gates),
                    f"${entry.cost_usd:.4f}",
                ]
            )
        section.tables.append(table)
    if manifest.rejected:
        rejected = Table(["rejected capability", "generator", "attempts", "stopped by", "reason"], [])
        for name in sorted(manifest.rejected):
            r = manifest.rejected[name]
            rejected.rows.append([f"`{name}`", r.generator, str(r.attempts), r.stopped_by or "n/a", r.reason])
        section.tables.append(rejected)
    return section
