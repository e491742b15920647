"""The last stages: evaluate (``trace_envs.evaluation``'s harness, one ``results.json`` per target; its stores
resume) and report (the run report of the stages' typed results, saying what was simulated)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .context import StageContext, TargetStep
from .model_stages import adapter_dirs, trained_model
from .results import EvaluateResult, EvaluateTarget, ReportResult, RolloutResult, TrainResult

if TYPE_CHECKING:
    from trace_envs.report.inputs import ReportInputs
from .targets import data_root


def policy_texts(ctx: StageContext, target: str) -> list[str]:
    """The configured policies as ``NAME=SPEC`` strings of the evaluation (``base``, ``model`` and ``routed``
    resolved to this run's rollout policy, trained base model and adapters)."""
    model = trained_model(ctx)
    adapters = [str(p) for p in adapter_dirs(ctx.stage_dir("train"), target)]
    texts = []
    for name in ctx.config.evaluate.policies:
        if name == "base":
            texts.append(f"base={ctx.result(RolloutResult).policy}")
        elif name == "model":
            texts.append(f"model=hf:{model}")
        elif name == "routed":
            if adapters:  # no adapter for this target: the routed policy is the model alone, evaluated above
                texts.append(f"routed=routed:{model}@{','.join(adapters)}")
        else:
            texts.append(name)
    return texts


def evaluate(ctx: StageContext) -> EvaluateResult:
    """Every configured policy on every target task, into ``evaluate/<target>/results.json``."""
    summary = EvaluateResult()
    for step in ctx.each_target():
        summary.targets[step.name] = evaluate_target(step)
    return summary


def evaluate_target(step: TargetStep) -> EvaluateTarget:
    """Every configured policy on one target's tasks, into ``evaluate/<target>/results.json`` (stores resume)."""
    from trace_envs.evaluation.harness import evaluate as run_evaluation
    from trace_envs.evaluation.policies import parse_policy
    from trace_envs.evaluation.results import RESULTS_FILE
    from trace_envs.evaluation.targets import load_target
    from trace_envs.registry.targets import target as registered

    from .targets import simulated_user

    ctx, section = step.ctx, step.ctx.config.evaluate
    spec = registered(step.name)
    data = data_root(ctx.config, spec, ctx.stage_dir("rollout"))
    try:
        tasks = load_target(step.name, data, split=section.split, limit=section.max_tasks)
        entries = [parse_policy(text) for text in policy_texts(ctx, step.name)]
    except (ValueError, FileNotFoundError) as exc:
        raise ctx.fail(f"evaluate.policies: {str(exc).splitlines()[0]}") from None
    total = len(tasks.tasks) * section.trials * len(entries)
    counts = {"done": 0}

    def on_episode(name: str, record: Any) -> None:
        counts["done"] += 1
        step.report(name, counts["done"], total)

    results = run_evaluation(
        tasks, entries, step.folder, trials=section.trials,
        user_model=simulated_user(ctx.config, spec), concurrency=section.concurrency,
        max_steps=section.max_steps, sampling=section.sampling(),
        on_episode=on_episode,
    )  # fmt: skip
    return EvaluateTarget(
        results=str((step.folder / RESULTS_FILE).relative_to(ctx.root)),
        target=results.target,  # which tasks: the rollout ran on all of them, the evaluation maybe on the first few
        policies={p.name: p.summary for p in results.policies},
    )


def report(ctx: StageContext) -> ReportResult:
    """The run report (Markdown and one HTML page) of the stages' results, into ``report/``."""
    from trace_envs.report import ReportInputError, write_report

    notes = list(ctx.config.simulated)
    try:
        files = write_report(report_inputs(ctx), ctx.folder, title="TRACE pipeline report", notes=notes)
    except ReportInputError as exc:
        raise ctx.fail(str(exc)) from None
    return ReportResult(
        markdown=files.markdown.name, html=files.html.name, plots=len(files.plots), missing=list(files.missing)
    )


def report_inputs(ctx: StageContext) -> ReportInputs:
    """What the report shows, from the stages' typed results: the adapters the train stage returned (with their
    metadata), each target's evaluation at the path its result names, and its analysis, manifest and routes where
    those stages wrote them; only baselines, which no stage makes, are looked for by file name."""
    from trace_envs.report.inputs import Adapter, ReportInputs, find_baselines

    inputs = ReportInputs(root=ctx.root, targets=list(ctx.config.targets), baselines=find_baselines(ctx.root))
    trained = ctx.result(TrainResult)
    inputs.adapters = [Adapter(ctx.root / a.path, a.metadata) for a in trained.adapters.values()]
    for step in ctx.each_target():
        add_target_files(step, inputs)
    inputs.sort_by_target()
    return inputs


def add_target_files(step: TargetStep, inputs: ReportInputs) -> None:
    """One target's evaluation, analysis, synthesis manifest and routes (each when its stage wrote one)."""
    from trace_envs.report.inputs import ANALYSIS_FILE, load_analysis, load_evaluation, load_manifest, load_routes_file
    from trace_envs.routing.routes_file import ROUTES_SUFFIX
    from trace_envs.synthesis.manifest import MANIFEST

    ctx = step.ctx
    evaluated = ctx.result(EvaluateResult).targets.get(step.name)
    if evaluated is not None:
        inputs.evaluations.append(load_evaluation(ctx.root / evaluated.results))
    if (analysis := step.input_dir("analyze") / ANALYSIS_FILE).is_file():
        inputs.analyses.append(load_analysis(analysis))
    if (manifest := step.input_dir("synthesize") / MANIFEST).is_file() and (found := load_manifest(manifest)):
        inputs.manifests.append(found)
    if (routes := ctx.stage_dir("route") / f"{step.name}{ROUTES_SUFFIX}").is_file():
        inputs.routes.append(load_routes_file(routes))
