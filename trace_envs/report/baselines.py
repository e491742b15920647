"""The methods section: every baseline run side by side (method, envs, rollout budget and spend), with
TRACE's own adapters on the same rollout scale."""

from __future__ import annotations

from .inputs import ReportInputs
from .sections import Section, Table


def methods_section(inputs: ReportInputs) -> Section:
    """The section (``missing`` when the run folder has neither a baseline record nor an adapter)."""
    section = Section("methods", "Methods and rollouts spent")
    if not inputs.baselines and not inputs.adapters:
        section.missing = "no baseline.json or adapter: run `trace-envs baseline NAME` or `trace-envs train`"
        return section
    table = Table(["method", "envs", "rollout budget", "rollouts used", "artifact"], [])
    for adapter, label in zip(inputs.adapters, inputs.adapter_labels(), strict=True):
        rollouts, budget = adapter.rollouts, adapter.budget
        table.rows.append(
            [
                f"TRACE adapter `{label}`",
                ", ".join(f"`{e}`" for e in adapter.metadata.env_ids),
                "n/a" if budget is None else str(budget),
                "n/a" if rollouts is None else str(rollouts),
                f"`{inputs.relative(adapter.path)}`",
            ]
        )
    for baseline in inputs.baselines:
        run = baseline.run
        table.rows.append(
            [
                run.method,
                ", ".join(f"`{e}`" for e in run.env_ids) or "n/a",
                "unbounded" if run.budget is None else str(run.budget),
                str(run.rollouts_used),
                f"`{inputs.relative(baseline.path / run.artifact)}`",
            ]
        )
    section.tables.append(table)
    total = sum(a.rollouts or 0 for a in inputs.adapters)
    if inputs.adapters:
        section.paragraphs.append(spend_paragraph(total, len(inputs.baselines)))
    return section


def spend_paragraph(rollouts: int, baselines: int) -> str:
    """What TRACE's adapters spent, and how the baselines compare: matched on the same count when any ran,
    else that none ran (so the reader does not look for a comparison that is not there)."""
    spent = f"TRACE's adapters spent {rollouts} rollouts in all (iterations x G x K, summed over adapters)"
    if baselines:
        return f"{spent}; the baselines are matched on the same count."
    return f"{spent}. No baseline ran in this folder: `trace-envs baseline NAME --budget {rollouts}` runs one on it."
