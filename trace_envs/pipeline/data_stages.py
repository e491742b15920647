"""The stages that need no model weights: rollout, analyze, synthesize (each resumes through the library's own
resume: the trajectory store skips finished episodes, analysis keeps its labels, synthesis its attempts)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_envs.synthesis.generation.loop import SynthesisResult

from .context import StageContext, TargetStep
from .results import (
    AnalyzeResult,
    AnalyzeTarget,
    RolloutResult,
    RolloutTarget,
    SynthesizeResult,
    passed_result,
)
from .targets import data_folder, prepare_data, simulated_user, target_jobs

if TYPE_CHECKING:
    from trace_envs.rollout.runner import PolicyFactory
    from trace_envs.synthesis import Generator, SynthesisSettings


def store_path(rollout_dir: Path, target: str) -> Path:
    """A target's trajectory store in the rollout folder."""
    return rollout_dir / f"{target}.jsonl"


def rollout(ctx: StageContext) -> RolloutResult:
    """Roll the base agent out on every task of every target, into ``rollout/<target>.jsonl``."""
    from trace_envs.llm import LLMError
    from trace_envs.rollout import policy_factory

    section = ctx.config.rollout
    prepare_data(ctx.config, ctx.folder)
    try:
        factory, spec = policy_factory(
            section.policy,
            model_options={"cache_dir": str(ctx.root / "llm-cache")},
            sampling=section.sampling(),
        )
    except (ValueError, ModuleNotFoundError, LLMError) as exc:
        raise ctx.fail(f"rollout.policy: {exc}") from None
    result = RolloutResult(policy=spec)
    for step in ctx.each_target():
        result.targets[step.name] = rollout_target(step, factory, spec)
    return result


def rollout_target(step: TargetStep, factory: PolicyFactory, spec: str) -> RolloutTarget:
    """One target's tasks played into ``rollout/<target>.jsonl`` (finished episodes of a killed run are kept)."""
    from trace_envs.llm import LLMError
    from trace_envs.registry.targets import target as registered
    from trace_envs.rollout import rollout_into_store

    ctx, section = step.ctx, step.ctx.config.rollout
    played = registered(step.name)
    try:
        jobs = target_jobs(ctx.config, played, ctx.folder)
    except (OSError, ValueError, KeyError) as exc:
        raise ctx.fail(f"{step.name} tasks: {str(exc).splitlines()[0]}; fix data in the config") from None
    path = store_path(ctx.folder, step.name)
    counts = {"done": 0}

    def on_episode(record: Any) -> None:
        counts["done"] += 1
        step.report("episodes", counts["done"], len(jobs))

    try:
        result = rollout_into_store(
            path, jobs, factory, spec=spec, concurrency=section.concurrency,
            user_model=simulated_user(ctx.config, played), on_episode=on_episode, max_steps=section.max_steps,
        )  # fmt: skip
    except LLMError as exc:
        raise ctx.fail(f"{path}: {exc}; rerun the same command to resume") from None
    if result.missing:
        raise ctx.fail(failure_line(path, result.missing, result.failed))
    assert result.run is not None
    done = result.finished
    return RolloutTarget(
        episodes=done.episodes, successes=round(done.pass_rate * done.episodes), pass_rate=done.pass_rate,
        skipped=result.run.skipped,
    )  # fmt: skip


def failure_line(path: Path, count: int, failed: list[Any]) -> str:
    """``N episodes failed`` with the first distinct causes (a refused connection is not worth a rerun as is)."""
    from trace_envs.rollout import first_errors

    lines, others = first_errors(failed, limit=2)
    causes = "; ".join(lines) + (f"; and {others} other errors" if others else "")
    return f"{path}: {count} episodes failed ({causes or 'see the store'}); fix the cause and rerun to retry them"


def analyze(ctx: StageContext) -> AnalyzeResult:
    """Contrastive analysis of each target's store into ``analyze/<target>/`` (labels resume)."""
    from trace_envs.analysis import AnalysisConfig, run_analysis

    section = ctx.config.analyze
    summary = AnalyzeResult(analyst=section.analyst)
    for step in ctx.each_target():
        store = store_path(ctx.stage_dir("rollout"), step.name)

        def progress(phase: str, done: int, total: int, step: TargetStep = step) -> None:
            step.report(phase, done, total)

        try:
            result = run_analysis(
                store, AnalysisConfig(analyst=section.analyst, runs=section.runs), step.folder, progress=progress
            )
        except (ValueError, FileNotFoundError) as exc:
            raise ctx.fail(f"{step.folder}: {str(exc).splitlines()[0]}") from None
        summary.targets[step.name] = AnalyzeTarget(
            kept=list(result.kept), failures=result.failures, cost_usd=result.cost_usd
        )
    return summary


def synthesize(ctx: StageContext) -> SynthesizeResult:
    """One env per kept capability of each target into ``synthesize/<target>/`` (attempts resume)."""
    from trace_envs.synthesis import SynthesisSettings, make_generator

    section = ctx.config.synthesize
    try:
        generator = make_generator(section.generator, cache_dir=str(ctx.root / "llm-cache"))
    except ValueError as exc:
        raise ctx.fail(f"synthesize.generator: {exc}") from None
    settings = SynthesisSettings(
        rounds=section.rounds, seeds=section.seeds, fuzz_examples=section.fuzz_examples,
        data=data_folder(ctx.config, ctx.stage_dir("rollout")),
    )  # fmt: skip
    summary = SynthesizeResult(generator=section.generator)
    for step in ctx.each_target():
        if step.name in section.folders:
            summary.targets[step.name] = use_folder(step, section.folders[step.name])
        else:
            summary.targets[step.name] = synthesize_target(step, generator, settings)
    return summary


def synthesize_target(
    step: TargetStep, generator: Generator, settings: SynthesisSettings
) -> dict[str, SynthesisResult]:
    """One env per kept capability of one target's analysis, in its order; a module a killed run validated is
    kept (see :func:`passed_before`)."""
    from trace_envs.analysis import load_analysis
    from trace_envs.synthesis import SynthesisError, synthesize_analysis

    ctx = step.ctx
    analysis_dir = step.input_dir("analyze")
    analysis = load_analysis(analysis_dir)
    envs = passed_before(step.folder, analysis.kept)  # a killed run's finished modules are kept
    pending = [name for name in analysis.kept if name not in envs]
    if not pending:
        return envs

    def progress(name: str, status: str) -> None:
        ctx.report(f"{step.name}/{name}: {status}")

    outcomes = synthesize_analysis(
        analysis, step.name, generator, out=step.folder, capabilities=pending, jobs=ctx.config.synthesize.jobs,
        settings=settings, store=store_path(ctx.stage_dir("rollout"), step.name), base=analysis_dir,
        progress=progress,
    )  # fmt: skip
    for outcome in outcomes:
        if isinstance(outcome, SynthesisError):
            raise ctx.fail(f"{step.folder}: {outcome.capability}: {outcome.error}; rerun to resume")
        envs[outcome.capability] = outcome.model_copy(update={"report": None})
    passed = passed_before(step.folder, analysis.kept)  # as recorded, so a resumed run's result is the same
    return {name: passed.get(name, envs[name]) for name in analysis.kept}


def passed_before(folder: Path, capabilities: list[str]) -> dict[str, SynthesisResult]:
    """Capabilities whose module an earlier (killed) run of this stage validated and recorded in the folder's
    manifest, unchanged since (its sha256 matches): they are not synthesised again."""
    import hashlib

    from trace_envs.synthesis import read_manifest

    manifest = read_manifest(folder)
    found: dict[str, SynthesisResult] = {}
    for entry in manifest.modules.values() if manifest is not None else ():
        module = folder / entry.module
        if (
            entry.capability in capabilities
            and module.is_file()
            and hashlib.sha256(module.read_bytes()).hexdigest() == entry.source_sha256
        ):
            found[entry.capability] = passed_result(entry)
    return found


def use_folder(step: TargetStep, source: Path) -> dict[str, SynthesisResult]:
    """A synthesis output folder of the user's instead of synthesising: the modules its manifest vouches for
    (sha256 checked, as ``load_envs`` does) are copied with the manifest into ``synthesize/<target>/``."""
    import shutil

    from trace_envs.synthesis import ModuleChanged, read_manifest, verify_folder
    from trace_envs.synthesis.manifest import MANIFEST

    ctx, target = step.ctx, step.name
    where = f"synthesize.folders.{target}: {source}"
    try:
        manifest = read_manifest(source)
        verify_folder(source)
    except (ValueError, ModuleChanged) as exc:
        raise ctx.fail(f"{where}: {exc}") from None
    if manifest is None or not manifest.modules:
        raise ctx.fail(f"{where} holds no validated module; point it at a folder `trace-envs synthesize` wrote")
    out = step.folder
    out.mkdir(parents=True, exist_ok=True)
    envs: dict[str, SynthesisResult] = {}
    for entry in manifest.modules.values():
        if entry.target != target:
            raise ctx.fail(f"{where}: {entry.module} was validated for {entry.target}, not {target}")
        shutil.copyfile(source / entry.module, out / entry.module)
        envs[entry.capability] = passed_result(entry, f"from {source}")
    shutil.copyfile(source / MANIFEST, out / MANIFEST)
    return envs


def folder_manifests(folders: dict[str, Path]) -> dict[str, str]:
    """The sha256 of each given folder's manifest (which holds its modules' hashes), so that a folder validated
    again is a changed input of the synthesize stage."""
    import hashlib

    from trace_envs.registry.manifest import MANIFEST as SYNTHESIS_MANIFEST

    found = {}
    for target, folder in sorted(folders.items()):
        path = folder / SYNTHESIS_MANIFEST
        found[target] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    return found
