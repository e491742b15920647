"""The stages that need no model weights: rollout, analyze, synthesize (each resumes through the library's own
resume: the trajectory store skips finished episodes, analysis keeps its labels, synthesis its attempts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .context import StageContext
from .targets import data_folder, prepare_data, simulated_user, target_jobs


def store_path(rollout_dir: Path, target: str) -> Path:
    return rollout_dir / f"{target}.jsonl"


def rollout(ctx: StageContext) -> dict[str, Any]:
    """Roll the base agent out on every task of every target, into ``rollout/<target>.jsonl``."""
    from trace_envs.llm import LLMError
    from trace_envs.rollout import policy_factory, rollout_into_store
    from trace_envs.targets.registry import target as registered

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
    summary: dict[str, Any] = {"policy": spec, "targets": {}}
    for target in ctx.config.targets:
        played = registered(target)
        try:
            jobs = target_jobs(ctx.config, played, ctx.folder)
        except (OSError, ValueError, KeyError) as exc:
            raise ctx.fail(f"{target} tasks: {str(exc).splitlines()[0]}; fix data in the config") from None
        user = simulated_user(ctx.config, played)
        path = store_path(ctx.folder, target)
        counts = {"done": 0}

        def on_episode(
            record: Any, target: str = target, total: int = len(jobs), counts: dict[str, int] = counts
        ) -> None:
            counts["done"] += 1
            ctx.report(f"{target}: episodes", counts["done"], total)

        try:
            result = rollout_into_store(
                path, jobs, factory, spec=spec, concurrency=section.concurrency, user_model=user, on_episode=on_episode,
                max_steps=section.max_steps,
            )  # fmt: skip
        except LLMError as exc:
            raise ctx.fail(f"{path}: {exc}; rerun the same command to resume") from None
        if result.missing:
            raise ctx.fail(failure_line(path, result.missing, result.failed))
        assert result.run is not None
        done = result.finished
        summary["targets"][target] = {
            "episodes": done.episodes, "successes": round(done.pass_rate * done.episodes),
            "pass_rate": done.pass_rate, "skipped": result.run.skipped,
        }  # fmt: skip
    return summary


def failure_line(path: Path, count: int, failed: list[Any]) -> str:
    """``N episodes failed`` with the first distinct causes (a refused connection is not worth a rerun as is)."""
    from trace_envs.rollout import first_errors

    lines, others = first_errors(failed, limit=2)
    causes = "; ".join(lines) + (f"; and {others} other errors" if others else "")
    return f"{path}: {count} episodes failed ({causes or 'see the store'}); fix the cause and rerun to retry them"


def analyze(ctx: StageContext) -> dict[str, Any]:
    """Contrastive analysis of each target's store into ``analyze/<target>/`` (labels resume)."""
    from trace_envs.analysis import AnalysisConfig, run_analysis

    section = ctx.config.analyze
    summary: dict[str, Any] = {"analyst": section.analyst, "targets": {}}
    for target in ctx.config.targets:
        store = store_path(ctx.stage_dir("rollout"), target)

        def progress(phase: str, done: int, total: int, target: str = target) -> None:
            ctx.report(f"{target}: {phase}", done, total)

        try:
            result = run_analysis(
                store, AnalysisConfig(analyst=section.analyst, runs=section.runs), ctx.folder / target,
                progress=progress,
            )  # fmt: skip
        except (ValueError, FileNotFoundError) as exc:
            raise ctx.fail(f"{ctx.folder / target}: {str(exc).splitlines()[0]}") from None
        summary["targets"][target] = {
            "kept": list(result.kept),
            "failures": result.failures,
            "cost_usd": result.cost_usd,
        }
    return summary


def synthesize(ctx: StageContext) -> dict[str, Any]:
    """One env per kept capability of each target into ``synthesize/<target>/`` (attempts resume)."""
    from trace_envs.analysis import load_analysis
    from trace_envs.synthesis import SynthesisError, SynthesisResult, SynthesisSettings, make_generator

    section = ctx.config.synthesize
    try:
        generator = make_generator(section.generator, cache_dir=str(ctx.root / "llm-cache"))
    except ValueError as exc:
        raise ctx.fail(f"synthesize.generator: {exc}") from None
    settings = SynthesisSettings(
        rounds=section.rounds, seeds=section.seeds, fuzz_examples=section.fuzz_examples,
        data=data_folder(ctx.config, ctx.stage_dir("rollout")),
    )  # fmt: skip
    summary: dict[str, Any] = {"generator": section.generator, "targets": {}}
    for target in ctx.config.targets:
        if target in section.folders:
            summary["targets"][target] = use_folder(ctx, target, section.folders[target])
            continue
        analysis_dir = ctx.stage_dir("analyze") / target
        analysis = load_analysis(analysis_dir)
        envs = passed_before(ctx.folder / target, analysis.kept)  # a killed run's finished modules are kept
        summary["targets"][target] = envs
        pending = [name for name in analysis.kept if name not in envs]
        if not pending:
            continue
        from trace_envs.synthesis import synthesize_analysis

        def progress(name: str, status: str, target: str = target) -> None:
            ctx.report(f"{target}/{name}: {status}")

        outcomes = synthesize_analysis(
            analysis, target, generator, out=ctx.folder / target, capabilities=pending, jobs=section.jobs,
            settings=settings, store=store_path(ctx.stage_dir("rollout"), target), base=analysis_dir,
            progress=progress,
        )  # fmt: skip
        for outcome in outcomes:
            if isinstance(outcome, SynthesisError):
                raise ctx.fail(f"{ctx.folder / target}: {outcome.capability}: {outcome.error}; rerun to resume")
            assert isinstance(outcome, SynthesisResult)
            envs[outcome.capability] = {"status": outcome.status, "env_id": outcome.env_id, "reason": outcome.reason}
        summary["targets"][target] = {name: envs[name] for name in analysis.kept}
    return summary


def passed_before(folder: Path, capabilities: list[str]) -> dict[str, Any]:
    """Capabilities whose module an earlier (killed) run of this stage validated and recorded in the folder's
    manifest, unchanged since (its sha256 matches): they are not synthesised again."""
    import hashlib

    from trace_envs.synthesis import read_manifest

    manifest = read_manifest(folder)
    found: dict[str, Any] = {}
    for entry in manifest.modules.values() if manifest is not None else ():
        module = folder / entry.module
        if (
            entry.capability in capabilities
            and module.is_file()
            and hashlib.sha256(module.read_bytes()).hexdigest() == entry.source_sha256
        ):
            found[entry.capability] = {"status": "passed", "env_id": entry.env_id, "reason": ""}
    return found


def use_folder(ctx: StageContext, target: str, source: Path) -> dict[str, Any]:
    """A synthesis output folder of the user's instead of synthesising: the modules its manifest vouches for
    (sha256 checked, as ``load_envs`` does) are copied with the manifest into ``synthesize/<target>/``."""
    import shutil

    from trace_envs.synthesis import ModuleChanged, read_manifest, verify_folder
    from trace_envs.synthesis.manifest import MANIFEST

    where = f"synthesize.folders.{target}: {source}"
    try:
        manifest = read_manifest(source)
        verify_folder(source)
    except (ValueError, ModuleChanged) as exc:
        raise ctx.fail(f"{where}: {exc}") from None
    if manifest is None or not manifest.modules:
        raise ctx.fail(f"{where} holds no validated module; point it at a folder `trace-envs synthesize` wrote")
    out = ctx.folder / target
    out.mkdir(parents=True, exist_ok=True)
    envs: dict[str, Any] = {}
    for entry in manifest.modules.values():
        if entry.target != target:
            raise ctx.fail(f"{where}: {entry.module} was validated for {entry.target}, not {target}")
        shutil.copyfile(source / entry.module, out / entry.module)
        envs[entry.capability] = {"status": "passed", "env_id": entry.env_id, "reason": f"from {source}"}
    shutil.copyfile(source / MANIFEST, out / MANIFEST)
    return envs


def folder_manifests(folders: dict[str, Path]) -> dict[str, str]:
    """The sha256 of each given folder's manifest (which holds its modules' hashes), so that a folder validated
    again is a changed input of the synthesize stage."""
    import hashlib

    from trace_envs.plugins import SYNTHESIS_MANIFEST

    found = {}
    for target, folder in sorted(folders.items()):
        path = folder / SYNTHESIS_MANIFEST
        found[target] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    return found
