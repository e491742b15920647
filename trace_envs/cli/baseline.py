"""``trace-envs baseline NAME …``: the paper's comparison methods, one subcommand each (see docs/baselines/)."""

from __future__ import annotations

import importlib

import typer

from .app import HELP_OPTION_NAMES, TraceGroup, TraceTyper, app

BASELINE_MODULES: list[str] = [
    "trace_envs.cli.baseline_grpo_target",
    "trace_envs.cli.baseline_multi_capability",
    "trace_envs.cli.baseline_sft_synthetic",
    "trace_envs.cli.baseline_gepa",
    "trace_envs.cli.baseline_merge",
]
"""Modules that each add one baseline subcommand to :data:`baseline_app`."""

baseline_app = TraceTyper(
    name="baseline",
    cls=TraceGroup,
    help="Run one of the paper's baselines on a matched rollout budget (--budget ROLLOUTS).",
    no_args_is_help=True,
    context_settings={"help_option_names": HELP_OPTION_NAMES},
)


def parse_weights(text: str | None) -> list[float] | None:
    """``--weights 0.7,0.3`` as floats (``None``: uniform); anything else is a usage error naming the option."""
    if text is None:
        return None
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise typer.BadParameter(
            f"expected comma-separated numbers such as 0.5,0.25,0.25, got {text!r}", param_hint="--weights"
        ) from None


for _module in BASELINE_MODULES:
    importlib.import_module(_module)

app.add_typer(baseline_app, name="baseline")
