"""The stages that run model weights: train (one GRPO LoRA adapter per synthesised env; a finished adapter is
skipped and an unfinished one continues from its last checkpoint) and route (the frozen base model picks an
adapter for every target task)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_envs.registry.ids import prefixed_id
from trace_envs.routing.routes_file import ROUTES_SUFFIX

from .context import StageContext, TargetStep
from .data_stages import store_path
from .results import RouteResult, RouteTarget, SynthesizeResult, TrainedAdapter, TrainResult

if TYPE_CHECKING:
    from trace_envs.training import TrainConfig

    from .config import PipelineConfig

BASE_MODEL_DIR = "base-model"


def base_model(ctx: StageContext) -> str:
    """The base model: the configured folder or hub id, or a model ``make-model`` builds (``tiny``, a packaged
    pretrained model such as ``smollm2-135m-instruct``), built once in the train folder."""
    from trace_envs.llm.gguf_model import MADE_MODELS

    model = ctx.config.train.model
    if model not in MADE_MODELS:
        return model
    target = ctx.stage_dir("train") / BASE_MODEL_DIR
    if not (target / "config.json").exists():
        partial = target.with_name(BASE_MODEL_DIR + ".partial")
        if model == "tiny":
            from trace_envs.llm.tiny_model import build_tiny_model

            build_tiny_model(partial, seed=ctx.config.seed)
        else:
            from trace_envs.llm.gguf_model import make_packaged_model

            make_packaged_model(model, partial)
        partial.rename(target)
    return str(target)


def adapter_dirs(train_dir: Path, target: str) -> list[Path]:
    """The finished adapters of a target, in capability order."""
    from trace_envs.training import METADATA_FILE, load_metadata

    found = sorted(p.parent for p in (train_dir / target).glob(f"*/{METADATA_FILE}"))
    return [p for p in found if load_metadata(p).status == "complete"]


def train_config(ctx: StageContext, env_id: str) -> TrainConfig:
    """The run's TrainConfig for one env (see :func:`section_train_config`); a bad field fails the stage."""
    try:
        return section_train_config(ctx.config, env_id)
    except ValueError as exc:
        raise ctx.fail(str(exc)) from None


def section_train_config(config: PipelineConfig, env_id: str) -> TrainConfig:
    """The TrainConfig of the train section for one env: the section's fields, the run's ``seed`` unless the section
    gives its own; a ``ValueError`` names every bad field (also checked before the run starts, by the preflight)."""
    from pydantic import ValidationError

    from trace_envs.problems import validation_problems
    from trace_envs.training import TrainConfig

    section = config.train
    seed = section.seed if "seed" in section.model_fields_set else config.seed
    try:
        return TrainConfig.model_validate({**section.model_dump(exclude={"model"}), "env_ids": [env_id], "seed": seed})
    except ValidationError as exc:
        problems = validation_problems(exc, TrainConfig, prefix="train.")
        raise ValueError(f"{problems}; fix the train section of the config") from None


def train(ctx: StageContext) -> TrainResult:
    """GRPO on every env that passed synthesis, one adapter per (target, capability); an env a spot check stops
    (it paid junk, or its oracle failed, on a training seed) gets no adapter, and ``stopped`` says why."""
    from trace_envs.training import cpu_threads

    ctx.report("base model")
    model = base_model(ctx)
    cpu_threads()
    synthesized = ctx.result(SynthesizeResult)
    inside = Path(model).is_absolute() and Path(model).is_relative_to(ctx.root)
    summary = TrainResult(model=str(Path(model).relative_to(ctx.root)) if inside else model)
    for step in ctx.each_target():
        passed = synthesized.passed(step.name)
        if passed:
            train_target(step, model, passed, summary)
    return summary


def train_target(step: TargetStep, model: str, passed: dict[str, str], summary: TrainResult) -> None:
    """One adapter per env of ``passed`` (capability -> synthesised env id) into ``train/<target>/<capability>/``,
    recorded in ``summary`` (or, stopped by a spot check, in its ``stopped``)."""
    import trace_envs
    from trace_envs.core.spot_checks import SpotCheckStop
    from trace_envs.training import finished_run
    from trace_envs.training import train as train_adapter

    ctx, target = step.ctx, step.name
    loaded = trace_envs.load_envs(step.input_dir("synthesize"), id_prefix=target)  # one id per target
    for capability, synthesized_id in sorted(passed.items()):
        env_id = prefixed_id(synthesized_id, target)
        if env_id not in loaded:
            raise ctx.fail(f"{step.input_dir('synthesize')}: {synthesized_id} did not load as {env_id}")
        config = train_config(ctx, env_id)
        out = step.folder / capability
        name = f"{target}/{capability}"
        reused = finished_run(config, model, out) is not None

        def progress(n: int, total: int, entry: dict[str, Any], name: str = name) -> None:
            ctx.report(f"{name}: GRPO step", n, total)

        ctx.report(f"{name}: GRPO", 0, ctx.config.train.max_steps)
        try:
            meta = finished_run(config, model, out) or train_adapter(config, model, out, progress=progress)
        except SpotCheckStop as exc:  # its env paid junk or failed its oracle on a training seed: no adapter
            summary.stopped[name] = str(exc)
            ctx.report(f"{name}: stopped by a spot check")
            continue
        summary.adapters[name] = TrainedAdapter(path=str(out.relative_to(ctx.root)), reused=reused, metadata=meta)


def trained_model(ctx: StageContext) -> str:
    """The base model the train stage used (a model built inside the run folder is recorded relative to it,
    so a moved run folder still finds it)."""
    model = ctx.result(TrainResult).model
    inside = ctx.root / model
    return str(inside) if not Path(model).is_absolute() and inside.exists() else model


def opening_messages(store: Path) -> list[tuple[str, str]]:
    """(task key, first user message) of every distinct task of a trajectory store, in store order."""
    from trace_envs.rollout import load_episodes

    seen: dict[str, str] = {}
    for record in load_episodes(store):
        key = f"{record.env_id}#{record.seed}"
        first = next((m.get("content") for m in record.messages if m.get("role") == "user"), None)
        if key not in seen and isinstance(first, str):
            seen[key] = first
    return list(seen.items())


def route(ctx: StageContext) -> RouteResult:
    """The router's choice for every target task, into ``route/<target>.routes.json``."""
    summary = RouteResult()
    if not ctx.config.route.enabled:
        return summary
    model = trained_model(ctx)
    loaded: dict[str, Any] = {}
    for step in ctx.each_target():
        summary.targets[step.name] = route_target(step, model, loaded)
    return summary


def route_target(step: TargetStep, model: str, loaded: dict[str, Any]) -> RouteTarget:
    """The router's choice for every rollout task of one target (written once; a rerun counts the file)."""
    from trace_envs.routing.routes_file import RoutedTask, load_routes, save_routes

    ctx = step.ctx
    adapters = adapter_dirs(ctx.stage_dir("train"), step.name)
    out = ctx.folder / f"{step.name}{ROUTES_SUFFIX}"
    if not adapters:
        return RouteTarget(adapters=0)
    if not out.exists():
        tasks = opening_messages(store_path(ctx.stage_dir("rollout"), step.name))
        router = _router(model, adapters, loaded)
        decisions = []
        for index, (key, text) in enumerate(tasks):
            decision = router.route(text)
            decisions.append(RoutedTask(task=key, capability=decision.capability, label=decision.label,
                                        adapter=decision.adapter_path))  # fmt: skip
            step.report("routing", index + 1, len(tasks))
        save_routes(out, decisions)
    counts: dict[str, int] = {}
    for routed in load_routes(out):
        counts[routed.capability or "base"] = counts.get(routed.capability or "base", 0) + 1
    return RouteTarget(adapters=len(adapters), routes=counts)


def _router(model: str, adapters: list[Path], loaded: dict[str, Any]) -> Any:
    """A :class:`~trace_envs.routing.Router` over ``adapters``, the base model loaded once per stage."""
    from trace_envs.routing import Router
    from trace_envs.training import cpu_threads

    if "router" in loaded:
        return loaded["router"].with_adapters(adapters)
    cpu_threads()
    loaded["router"] = Router.from_pretrained(model, adapters)
    return loaded["router"]
