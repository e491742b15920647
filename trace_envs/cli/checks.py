"""Usage checks shared by commands: an env id (registered, trainable, its knobs) and a model path, each
failing as one line that names the fix instead of a traceback from gymnasium or transformers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def checked_env(env_id: str, knobs: dict[str, Any], hint: str) -> Any:
    """The capability env an id names (run here or boxed), built once to check it; an unknown id, a target env
    (trained by ``baseline grpo-target``) or a knob the env does not take is a usage error naming the fix."""
    import gymnasium as gym

    from trace_envs.registry import TARGET_KINDS, env_kind, list_capability_envs
    from trace_envs.training import make_capability_env

    try:
        kind = env_kind(env_id)
    except gym.error.Error as exc:  # NameNotFound, VersionNotFound, ...
        raise typer.BadParameter(
            f"{env_id!r} is not a registered env ({exc}); see `trace-envs list`", param_hint=hint
        ) from None
    if kind in TARGET_KINDS:
        trainable = ", ".join(list_capability_envs())
        raise typer.BadParameter(
            f"{env_id!r} is a target env, not a capability env; use one of {trainable} "
            "(`trace-envs baseline grpo-target` trains on a target env)",
            param_hint=hint,
        )
    _check_knobs(env_id, knobs)
    try:
        return make_capability_env(env_id, **knobs)
    except TypeError as exc:  # an env of no kind of ours (a plain Gymnasium env): it says what it lacks
        raise typer.BadParameter(str(exc), param_hint=hint) from None


def _check_knobs(env_id: str, knobs: dict[str, Any]) -> None:
    """A knob that the env's class does not declare is a usage error naming its knobs (a boxed env's box checks
    its options when the env is built)."""
    from pydantic import BaseModel, ValidationError

    from trace_envs.problems import validation_problems
    from trace_envs.registry import env_class

    model = getattr(env_class(env_id), "Knobs", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return
    try:
        model.model_validate(knobs)
    except ValidationError as exc:
        known = ", ".join(model.model_fields) or "none"
        raise typer.BadParameter(
            f"{validation_problems(exc)} for {env_id} (its knobs: {known}; see `trace-envs describe {env_id}`)",
            param_hint="--option",
        ) from None


def checked_model(model: str, hint: str = "--model") -> str:
    """``model`` if it names a local model directory or a loadable hub id; otherwise a usage error
    naming the fix (transformers would say "Repo id must use alphanumeric chars" for a mistyped path)."""
    from transformers import AutoConfig

    from trace_envs.llm.spec import missing_model_folder

    path = Path(model).expanduser()
    problem = missing_model_folder(model)
    if problem is not None:
        raise typer.BadParameter(problem, param_hint=hint)
    try:
        AutoConfig.from_pretrained(str(path) if path.exists() else model)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise typer.BadParameter(
            f"cannot load model {model!r} ({first}): pass a local model folder with config.json or a hub id "
            "you can download",
            param_hint=hint,
        ) from None
    return model
