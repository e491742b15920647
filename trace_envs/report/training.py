"""The training section: each adapter's GRPO curve (mean verifier reward and loss per step) and a table
of what each adapter spent and how many of its groups carried no signal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .figures import flat_axis, pyplot, save, style
from .inputs import Adapter, ReportInputs
from .sections import Plot, Section, Table

CURVES_FILE = "training_curves.png"


def _series(adapter: Adapter, key: str) -> tuple[list[float], list[float]]:
    rows = [row for row in adapter.metadata.curve if isinstance(row.get(key), int | float) and "step" in row]
    return [float(row["step"]) for row in rows], [float(row[key]) for row in rows]


def curves_figure(adapters: list[Adapter], labels: list[str]) -> Any:
    """Mean reward (band: the batch's reward std) and loss per GRPO step, one series per adapter. Series differ
    in colour, marker and line style and are nudged sideways a little, so series that coincide (all at 0)
    still show one mark each; a flat loss gets a readable axis centred on its value."""
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    figure, (reward_axis, loss_axis) = plt.subplots(1, 2, figsize=(11, 4.2))
    losses: list[float] = []
    spread = 0.25 if len(adapters) > 1 else 0.0
    for index, (adapter, label) in enumerate(zip(adapters, labels, strict=True)):
        looks = style(index)
        nudge = spread * (index / (len(adapters) - 1) - 0.5) if len(adapters) > 1 else 0.0
        steps, reward = _series(adapter, "reward")
        if steps:
            shifted = [s + nudge for s in steps]
            reward_axis.plot(shifted, reward, label=label, clip_on=False, **looks)
            std_steps, std = _series(adapter, "reward_std")
            if std_steps == steps:
                low = [max(0.0, r - s) for r, s in zip(reward, std, strict=True)]
                high = [min(1.0, r + s) for r, s in zip(reward, std, strict=True)]
                reward_axis.fill_between(shifted, low, high, color=looks["color"], alpha=0.12)
        steps, loss = _series(adapter, "loss")
        if steps:
            loss_axis.plot([s + nudge for s in steps], loss, label=label, clip_on=False, **looks)
            losses += loss
    reward_axis.set(title="Mean verifier reward per step", xlabel="GRPO step", ylabel="mean reward", ylim=(-0.05, 1.05))
    reward_axis.axhline(0, color="#bbbbbb", linewidth=0.8, zorder=0)
    loss_axis.set(title="GRPO loss per step", xlabel="GRPO step", ylabel="loss")
    flat_axis(loss_axis, losses)
    for axis in (reward_axis, loss_axis):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    legend_axis = loss_axis if loss_axis.get_legend_handles_labels()[0] else reward_axis
    legend_axis.legend(title="adapter", fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return figure


def _caption(series: int) -> str:
    nudged = (
        " The series are nudged a little sideways around each step and differ in marker and line style, so "
        "coinciding series (e.g. every adapter at 0) each stay visible."
        if series > 1
        else ""
    )
    return (
        f"{series} adapter(s). Left: the verifier's mean reward over each GRPO step's rollouts (shaded: one "
        "standard deviation across them), which should rise as the adapter learns its capability. Right: the GRPO "
        f"loss per step (a flat loss says so in the panel).{nudged} Groups without signal (table) had K equal "
        "rewards and taught nothing."
    )


def training_section(inputs: ReportInputs, out: Path) -> Section:
    """The section (``missing`` when the run folder holds no adapter)."""
    section = Section("training", "Training curves")
    if not inputs.adapters:
        section.missing = "no adapter (trace_adapter.json): train one with `trace-envs train`"
        return section
    table = Table(
        [
            "adapter",
            "capability (legend)",
            "envs",
            "status",
            "steps",
            "rollouts",
            "last reward",
            "groups without signal",
        ],
        [],
    )
    labels = inputs.adapter_labels()
    for adapter, label in zip(inputs.adapters, labels, strict=True):
        meta = adapter.metadata
        _, reward = _series(adapter, "reward")
        rollouts = adapter.rollouts
        no_signal = f"{meta.identical_reward_groups}/{meta.total_groups}" if meta.total_groups else "n/a"
        table.rows.append(
            [
                f"`{inputs.relative(adapter.path)}`",
                label,
                ", ".join(f"`{e}`" for e in meta.env_ids),
                meta.status,
                str(meta.steps_done),
                "n/a" if rollouts is None else str(rollouts),
                f"{reward[-1]:.2f}" if reward else "n/a",
                no_signal,
            ]
        )
    section.tables.append(table)
    if any(_series(a, "reward")[0] or _series(a, "loss")[0] for a in inputs.adapters):
        path = save(curves_figure(inputs.adapters, inputs.adapter_labels()), out / CURVES_FILE)
        section.plots.append(Plot(path, "Training curves", _caption(len(labels))))
    else:
        section.paragraphs.append("No adapter has logged a training step yet.")
    return section
