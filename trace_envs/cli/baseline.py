"""``trace-envs baseline NAME …``: the paper's comparison methods, one subcommand each (see docs/baselines/)."""

from __future__ import annotations

import importlib

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

for _module in BASELINE_MODULES:
    importlib.import_module(_module)

app.add_typer(baseline_app, name="baseline")
