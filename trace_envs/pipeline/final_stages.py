"""The last stages: evaluate (``trace_envs.evaluation``'s harness, one ``results.json`` per target; its stores
resume) and report (the run report over the whole output folder, saying what was simulated)."""

from __future__ import annotations

from typing import Any

from .context import StageContext
from .model_stages import adapter_dirs, trained_model
from .targets import data_root


def policy_texts(ctx: StageContext, target: str) -> list[str]:
    """The configured policies as ``NAME=SPEC`` strings of the evaluation (``base``, ``model`` and ``routed``
    resolved to this run's rollout policy, trained base model and adapters)."""
    model = trained_model(ctx)
    adapters = [str(p) for p in adapter_dirs(ctx.stage_dir("train"), target)]
    texts = []
    for name in ctx.config.evaluate.policies:
        if name == "base":
            texts.append(f"base={ctx.summaries['rollout']['policy']}")
        elif name == "model":
            texts.append(f"model=hf:{model}")
        elif name == "routed":
            if adapters:  # no adapter for this target: the routed policy is the model alone, evaluated above
                texts.append(f"routed=routed:{model}@{','.join(adapters)}")
        else:
            texts.append(name)
    return texts


def evaluate(ctx: StageContext) -> dict[str, Any]:
    """Every configured policy on every target task, into ``evaluate/<target>/results.json``."""
    from trace_envs.evaluation.harness import evaluate as run_evaluation
    from trace_envs.evaluation.policies import parse_policy
    from trace_envs.evaluation.targets import load_target
    from trace_envs.targets.registry import target as registered

    from .targets import simulated_user

    section = ctx.config.evaluate
    summary: dict[str, Any] = {"targets": {}, "tasks": {}}
    for target in ctx.config.targets:
        spec = registered(target)
        data = data_root(ctx.config, spec, ctx.stage_dir("rollout"))
        try:
            tasks = load_target(target, data, split=section.split, limit=section.max_tasks)
            entries = [parse_policy(text) for text in policy_texts(ctx, target)]
        except (ValueError, FileNotFoundError) as exc:
            raise ctx.fail(f"evaluate.policies: {str(exc).splitlines()[0]}") from None
        total = len(tasks.tasks) * section.trials * len(entries)
        counts = {"done": 0}

        def on_episode(
            name: str, record: Any, target: str = target, total: int = total, counts: dict[str, int] = counts
        ) -> None:
            counts["done"] += 1
            ctx.report(f"{target}: {name}", counts["done"], total)

        results = run_evaluation(
            tasks, entries, ctx.folder / target, trials=section.trials,
            user_model=simulated_user(ctx.config, spec), concurrency=section.concurrency,
            max_steps=section.max_steps, sampling=section.sampling(),
            on_episode=on_episode,
        )  # fmt: skip
        summary["targets"][target] = {
            p.name: {"pass_rate": p.summary.overall.pass_rate.value, "episodes": p.summary.episodes}
            for p in results.policies
        }
        info = results.target  # which tasks: the rollout ran on all of them, the evaluation maybe on the first few
        summary["tasks"][target] = {
            "evaluated": info.tasks,
            "available": info.available,
            "limit": info.limit,
            "split": info.split,
        }
    return summary


def report(ctx: StageContext) -> dict[str, Any]:
    """The run report (Markdown and one HTML page) of the whole output folder, into ``report/``."""
    from trace_envs.report import ReportInputError, write_report

    notes = list(ctx.config.simulated)
    try:
        files = write_report(
            ctx.root, ctx.folder, title="TRACE pipeline report", notes=notes, targets=list(ctx.config.targets)
        )
    except ReportInputError as exc:
        raise ctx.fail(str(exc)) from None
    return {"markdown": files.markdown.name, "html": files.html.name, "plots": len(files.plots),
            "missing": list(files.missing)}  # fmt: skip
