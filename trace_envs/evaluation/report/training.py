"""The training section: each adapter's GRPO curve (mean verifier reward and loss per step) and a table
of what each adapter spent and how many of its groups carried no signal."""

from __future__ import annotations

from pathlib import Path

from .figures import COLORS, pyplot, save
from .inputs import Adapter, ReportInputs
from .sections import Plot, Section, Table

CURVES_FILE = "training_curves.png"


def _series(adapter: Adapter, key: str) -> tuple[list[float], list[float]]:
    rows = [row for row in adapter.metadata.curve if isinstance(row.get(key), int | float) and "step" in row]
    return [float(row["step"]) for row in rows], [float(row[key]) for row in rows]


def plot_curves(adapters: list[Adapter], out: Path) -> Path | None:
    """``training_curves.png``: mean reward (band: the batch's reward std) and loss per GRPO step, one line
    per adapter; None when no adapter logged a step."""
    if not any(_series(a, "reward")[0] or _series(a, "loss")[0] for a in adapters):
        return None
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    figure, (reward_axis, loss_axis) = plt.subplots(1, 2, figsize=(10, 3.8))
    for index, adapter in enumerate(adapters):
        color = COLORS[index % len(COLORS)]
        name = adapter.metadata.capability
        label = name if adapter.path.name == name else f"{name} ({adapter.path.name})"
        steps, reward = _series(adapter, "reward")
        if steps:
            reward_axis.plot(steps, reward, marker="o", color=color, label=label)
            std_steps, std = _series(adapter, "reward_std")
            if std_steps == steps:
                low = [max(0.0, r - s) for r, s in zip(reward, std, strict=True)]
                high = [min(1.0, r + s) for r, s in zip(reward, std, strict=True)]
                reward_axis.fill_between(steps, low, high, color=color, alpha=0.15)
        steps, loss = _series(adapter, "loss")
        if steps:
            loss_axis.plot(steps, loss, marker="o", color=color, label=label)
    reward_axis.set(title="Mean verifier reward per step", xlabel="GRPO step", ylabel="reward", ylim=(-0.02, 1.02))
    loss_axis.set(title="GRPO loss per step", xlabel="GRPO step", ylabel="loss")
    reward_axis.legend(fontsize=8, loc="best")
    for axis in (reward_axis, loss_axis):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    return save(figure, out / CURVES_FILE)


def training_section(inputs: ReportInputs, out: Path) -> Section:
    """The section (``missing`` when the run folder holds no adapter)."""
    section = Section("training", "Training curves")
    if not inputs.adapters:
        section.missing = "no adapter (trace_adapter.json): train one with `trace-envs train`"
        return section
    table = Table(
        ["adapter", "capability", "envs", "status", "steps", "rollouts", "last reward", "groups without signal"], []
    )
    for adapter in inputs.adapters:
        meta = adapter.metadata
        _, reward = _series(adapter, "reward")
        rollouts = adapter.rollouts
        no_signal = f"{meta.identical_reward_groups}/{meta.total_groups}" if meta.total_groups else "n/a"
        table.rows.append(
            [
                f"`{inputs.relative(adapter.path)}`",
                f"`{meta.capability}`",
                ", ".join(f"`{e}`" for e in meta.env_ids),
                meta.status,
                str(meta.steps_done),
                "n/a" if rollouts is None else str(rollouts),
                f"{reward[-1]:.2f}" if reward else "n/a",
                no_signal,
            ]
        )
    section.tables.append(table)
    path = plot_curves(inputs.adapters, out)
    if path is not None:
        section.plots.append(
            Plot(
                path,
                "Training curves",
                "Left: the verifier's mean reward over each step's rollouts (shaded: one standard deviation across "
                "them), which should rise as the adapter learns its capability. Right: the GRPO loss. Groups without "
                "signal had K equal rewards and taught nothing.",
            )
        )
    else:
        section.paragraphs.append("No adapter has logged a training step yet.")
    return section
