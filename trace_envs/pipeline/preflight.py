"""The preflight: before a pipeline run spends time or money, check what its stages need (each model's extra
and API key, one cheap request to each endpoint, the training libraries, the data folders and the output
space), so that a missing analyst key surfaces before the rollout, not after it. ``trace-envs pipeline
CONFIG --check`` prints the checks; :func:`~trace_envs.pipeline.run_pipeline` runs them first."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from trace_envs.llm.gguf_model import PACKAGED_MODELS
from trace_envs.llm.spec import looks_like_local_path
from trace_envs.registry.manifest import MANIFEST as SYNTHESIS_MANIFEST

from .config import PipelineConfig

MIN_FREE_BYTES = 2 * 1024**3
"""Free space the output folder needs for a run with a real base model (its adapters and checkpoints)."""
TINY_RUN_FREE_BYTES = 100 * 1024**2
"""Free space for a run with the tiny model (the demo writes about 10 MB)."""
ALL_STAGES = ("rollout", "analyze", "synthesize", "train", "route", "evaluate", "report")
MODEL_STAGES = ("train", "route", "evaluate")
"""Stages that load model weights (the ``train`` extra)."""


@dataclass(frozen=True)
class Check:
    """One preflight check: what was checked, whether it passed, what was found, and the fix when it failed."""

    what: str
    ok: bool
    detail: str
    fix: str = ""
    stages: tuple[str, ...] = ALL_STAGES


class PreflightFailed(RuntimeError):
    """Some preflight checks failed; ``checks`` holds all of them (the failed ones say the fix)."""

    def __init__(self, checks: list[Check]):
        failed = [c for c in checks if not c.ok]
        super().__init__(
            f"preflight: {len(failed)} of {len(checks)} checks failed: "
            + "; ".join(f"{c.what}: {c.detail} ({c.fix})" for c in failed)
        )
        self.checks = checks


def _model_fields(config: PipelineConfig) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """``(field, spec, stages)`` for every model the config names (scripted policies and the offline
    analyst and generator name none)."""
    from trace_envs.rollout import PolicySpec

    def model_spec(text: str) -> str | None:
        try:
            parsed = PolicySpec.parse(text)
        except ValueError:
            return None  # a spec the stage itself reports (evaluate's routed:… and NAME=SPEC forms)
        return parsed.spec if parsed.is_model else None

    rollout_model = model_spec(config.rollout.policy)
    if rollout_model is not None:
        yield "rollout.policy", rollout_model, ("rollout", "evaluate")
    if config.rollout.user_model is not None:
        yield "rollout.user_model", config.rollout.user_model, ("rollout", "evaluate")
    if config.analyze.analyst != "probes":
        yield "analyze.analyst", config.analyze.analyst, ("analyze",)
    if config.synthesize.generator != "catalogue":
        yield "synthesize.generator", config.synthesize.generator, ("synthesize",)
    for text in config.evaluate.policies:
        spec = model_spec(text.partition("=")[2] if "=" in text else text)
        if text not in ("base", "model", "routed") and spec is not None:
            yield "evaluate.policies", spec, ("evaluate",)


def _model_check(field: str, spec: str, stages: tuple[str, ...], probe: bool, probed: dict[str, str]) -> Check:
    """The model's extra, its API key and (``probe``) one cheap request to its endpoint, once per endpoint
    (``probed`` maps an endpoint already asked to what it answered)."""
    from trace_envs.extras import install_hint
    from trace_envs.llm import LLMError, ModelConfig, make_chat_model

    what = field
    try:
        config = ModelConfig.parse(spec)
    except ValueError as exc:
        return Check(what, False, str(exc).splitlines()[0], "fix the model spec in the config", stages)
    if config.provider == "hf":  # local weights: loading them is the stage's work, their folder is checked here
        folder = Path(config.model).expanduser()
        looks_local = looks_like_local_path(config.model)
        if looks_local and not folder.exists():
            return Check(what, False, f"{spec}: no model folder {folder}", "fix the path in the config", stages)
        return Check(what, True, f"{spec}: {'local model' if looks_local else 'hub id'}", "", stages)
    if not _importable(config.provider):
        return Check(what, False, f"{spec}: {config.provider} is not installed", install_hint("llm"), stages)
    endpoint = f"{config.provider}:{config.base_url or ''}:{config.api_key_env or ''}"
    try:
        config.check_api_key()
        if probe and endpoint not in probed:
            make_chat_model(config).check_endpoint()
            probed[endpoint] = "the endpoint answered"
    except (LLMError, ValueError, OSError) as exc:
        return Check(what, False, str(exc).splitlines()[0], _fix_of(exc), stages)
    return Check(what, True, f"{spec}: {probed.get(endpoint, 'key set (endpoint not asked)')}", "", stages)


def _fix_of(exc: Exception) -> str:
    """The fix column of a failed model check: what to set or change, for the error's cause."""
    from trace_envs.llm import AuthenticationFailed, ConnectionRefused, EndpointUnreachable, HostNotFound, MissingAPIKey

    if isinstance(exc, MissingAPIKey):
        return f"export {exc.variable or 'the variable the error names'}=<your key> before the run"
    if isinstance(exc, AuthenticationFailed):
        return "check the API key"
    if isinstance(exc, HostNotFound):
        return "check this machine's network and DNS" if exc.hosted else "fix the host name in the base URL"
    if isinstance(exc, ConnectionRefused):
        return "start the model server, or fix the port in the base URL"
    if isinstance(exc, EndpointUnreachable):
        return "check http:// against https:// in the base URL"
    return "check the endpoint (is it up and answering?)"


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _extra_checks() -> Iterator[Check]:
    from trace_envs.extras import install_hint, missing_modules

    missing = missing_modules("train")
    detail = f"missing: {', '.join(missing)}" if missing else "torch, transformers, trl, peft installed"
    yield Check("train extra", not missing, detail, install_hint("train") if missing else "", MODEL_STAGES)


def _data_checks(config: PipelineConfig) -> Iterator[Check]:
    """The data folder of each target that needs one (tau2's), and a base model given as a local folder."""
    from trace_envs.registry.targets import TargetDataError, target

    data_stages = ("rollout", "synthesize", "evaluate")
    for name in config.targets:
        spec = target(name)
        if spec.builtin_tasks:
            continue  # its tasks ship with the library
        if config.data is None:
            yield Check(f"{name} data", True, "generated databases (data: null)", "", data_stages)
            continue
        try:
            folder = spec.check_data(config.data)
        except TargetDataError as exc:
            yield Check(f"{name} data", False, str(exc).splitlines()[0], "fix data in the config", data_stages)
            continue
        yield Check(f"{name} data", True, str(folder), "", data_stages)
    for name, folder in config.synthesize.folders.items():
        found = (folder / SYNTHESIS_MANIFEST).is_file()
        fix = "" if found else "point it at a folder `trace-envs synthesize` wrote (it holds manifest.json)"
        yield Check(f"synthesize.folders.{name}", found, str(folder), fix, ("synthesize",))
    model = config.train.model
    looks_local = looks_like_local_path(model)
    if model in PACKAGED_MODELS:
        found = importlib.util.find_spec("gguf") is not None
        fix = "" if found else "pip install 'trace-envs[train]' (make-model needs the gguf package)"
        yield Check("train.model", found, f"{model}, built by make-model in the train folder", fix, MODEL_STAGES)
    elif model != "tiny" and looks_local:
        found = Path(model).expanduser().exists()
        fix = "" if found else "fix train.model: a model folder or a hub id"
        yield Check("train.model", found, model if found else f"no folder {model}", fix, MODEL_STAGES)


def _output_check(out: Path, min_free_bytes: int) -> Check:
    """The output folder (or its nearest existing parent) is writable and has ``min_free_bytes`` free."""
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    gib = 1024**3
    if not os.access(existing, os.W_OK):
        return Check("output folder", False, f"{existing} is not writable", "pass --out a folder you can write")
    free = shutil.disk_usage(existing).free
    detail = f"{out}: {free / gib:.1f} GiB free"
    if free < min_free_bytes:
        return Check("output folder", False, detail, f"free {min_free_bytes / gib:.1f} GiB or pass --out elsewhere")
    return Check("output folder", True, detail)


def _train_settings_check(config: PipelineConfig) -> Iterator[Check]:
    """The train section builds a TrainConfig for an env, checked now rather than after synthesis."""
    from .model_stages import section_train_config

    try:
        section_train_config(config, "trace/preflight-v0")
    except ModuleNotFoundError:
        return  # the train extra's own check names it
    except ValueError as exc:
        yield Check("train settings", False, str(exc), "fix the train section", ("train",))
        return
    yield Check("train settings", True, "the train section makes a valid TrainConfig", "", ("train",))


def preflight(
    config: PipelineConfig,
    out: str | Path,
    *,
    stages: tuple[str, ...] = ALL_STAGES,
    probe: bool = True,
    min_free_bytes: int | None = None,
) -> list[Check]:
    """Every check that the given ``stages`` need, in order: models (extra, key, endpoint), the train extra,
    data folders, the train settings and the output space (``min_free_bytes``, by default
    :data:`MIN_FREE_BYTES`, :data:`TINY_RUN_FREE_BYTES` for the tiny model). ``probe=False`` skips the
    endpoint requests."""
    wanted = set(stages)
    probed: dict[str, str] = {}
    checks = [
        _model_check(field, spec, needed_by, probe, probed)
        for field, spec, needed_by in dict.fromkeys(_model_fields(config))
        if wanted & set(needed_by)
    ]
    others = [*_extra_checks(), *_data_checks(config)]
    if "train" in wanted:
        others += _train_settings_check(config)
    checks += [check for check in others if wanted & set(check.stages)]
    if min_free_bytes is None:
        min_free_bytes = TINY_RUN_FREE_BYTES if config.train.model == "tiny" else MIN_FREE_BYTES
    return [*checks, _output_check(Path(out), min_free_bytes)]


def require_preflight(config: PipelineConfig, out: str | Path, stages: tuple[str, ...] = ALL_STAGES) -> list[Check]:
    """:func:`preflight`, raising :class:`PreflightFailed` (with every check) when one failed."""
    checks = preflight(config, out, stages=stages)
    if not all(check.ok for check in checks):
        raise PreflightFailed(checks)
    return checks
