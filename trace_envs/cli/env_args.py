"""Env arguments every command shares: env ids (a registered id, gymnasium's ``module:env-id``, or an id
registered by an ``--import MODULE``) and env options (``--option KEY=VALUE``), checked before any work
starts so that a typo is one clear line, never a traceback or an empty output file."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from trace_envs.core.spot_checks import DEFAULT_SPOT_CHECK_SHARE, SPOT_CHECK_SHARE_HELP

ImportOption = Annotated[
    list[str] | None,
    typer.Option(
        "--import",
        metavar="MODULE",
        help="Import MODULE first (repeatable): a module of yours that registers envs with gymnasium.register.",
    ),
]
EnvOptionOption = Annotated[
    list[str] | None,
    typer.Option("--option", metavar="KEY=VALUE", help="Env constructor option, value parsed as JSON (repeatable)."),
]
SpotChecksOption = Annotated[
    float | None,
    typer.Option(
        "--spot-checks",
        metavar="SHARE",
        min=0.0,
        max=1.0,
        help=f"{SPOT_CHECK_SHARE_HELP} \\[default: {DEFAULT_SPOT_CHECK_SHARE:g}]",
    ),
]
"""The share of spot checks of ``rollout``, ``evaluate`` and ``train`` (None: the run's default)."""
CONSTRUCTOR_ARGS = ("seed", "render_mode")
"""CapabilityEnv constructor arguments that are not knobs."""


def parse_options(options: Sequence[str] | None) -> dict[str, Any]:
    """``key=value`` pairs (values parsed as JSON when they can be) into constructor kwargs."""
    parsed: dict[str, Any] = {}
    for option in options or []:
        key, sep, raw = option.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE, got {option!r}", param_hint="--option")
        try:
            parsed[key] = json.loads(raw)
        except json.JSONDecodeError:
            parsed[key] = raw
    return parsed


def sampling_options(temperature: float | None, max_tokens: int | None) -> dict[str, Any]:
    """A model's sampling settings from ``--temperature`` / ``--max-tokens``: only those given (the rest are the
    model's defaults)."""
    given = {"temperature": temperature, "max_tokens": max_tokens}
    return {name: value for name, value in given.items() if value is not None}


def import_module(module: str, param_hint: str = "--import") -> None:
    """Import a user's module the way ``python -m`` would find it (the working directory first on the
    path), as one clear error when it cannot be imported."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        importlib.import_module(module)
    except Exception as exc:  # any failure of the user's module is a bad argument, shown in one line
        raise typer.BadParameter(
            f"cannot import {module!r} ({type(exc).__name__}: {exc}); pass a module importable from the "
            "current folder or an installed package",
            param_hint=param_hint,
        ) from None


def import_modules(modules: Sequence[str] | None) -> None:
    """The ``--import MODULE`` options, in order."""
    for module in modules or []:
        import_module(module)


def resolve_env_id(env_id: str, param_hint: str = "ENV_ID") -> str:
    """The registered id for a command-line env id: ``module:env-id`` imports ``module`` first (as
    ``gymnasium.make`` does); an unknown id is an error that lists the ``trace/`` envs."""
    import gymnasium as gym

    import trace_envs

    module, colon, name = env_id.partition(":")
    if colon:
        if not module or not name:
            raise typer.BadParameter(f"expected ENV_ID or MODULE:ENV_ID, got {env_id!r}", param_hint=param_hint)
        import_module(module, param_hint)
        env_id = name
    if env_id not in gym.registry:
        raise typer.BadParameter(
            f"{env_id!r} is not a registered env. Registered: {', '.join(trace_envs.list_envs())}; for an env of "
            "your own, pass --import MODULE (the module that registers it) or MODULE:ENV_ID",
            param_hint=param_hint,
        )
    return env_id


def resolve_env_ids(env_ids: Sequence[str], imports: Sequence[str] | None, param_hint: str = "--env") -> list[str]:
    """``--import`` modules first, then each env id resolved (see :func:`resolve_env_id`)."""
    import_modules(imports)
    return [resolve_env_id(env_id, param_hint) for env_id in env_ids]


def check_knobs(env_id: str, options: dict[str, Any]) -> None:
    """For an env whose class declares its knobs model (``Knobs``, as a capability env run here does), validate
    ``options`` against it and name the bad ones and the valid knobs in one line (the constructor's own error
    spans many lines); a boxed env's options are validated in its box."""
    from pydantic import BaseModel, ValidationError

    from trace_envs.registry import env_class

    model = getattr(env_class(env_id), "Knobs", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return
    knobs = {k: v for k, v in options.items() if k not in CONSTRUCTOR_ARGS}
    try:
        model.model_validate(knobs)
    except ValidationError as exc:
        fields = model.model_fields
        valid = ", ".join(f"{name} (default {json.dumps(f.default)})" for name, f in fields.items()) or "none"
        from trace_envs.problems import validation_problems

        problems = validation_problems(exc, show_input=True)
        raise typer.BadParameter(f"{env_id}: {problems}. Its knobs: {valid}", param_hint="--option") from None


def make_env(env_id: str, options: dict[str, Any], param_hint: str = "ENV_ID", **make_kwargs: Any) -> Any:
    """``gymnasium.make(env_id, **options)``, with a bad option (or an env that cannot be built, e.g. a
    target env without its data) reported as one line naming ``--option`` (or ``param_hint``)."""
    import gymnasium as gym

    check_knobs(env_id, options)
    try:
        return gym.make(env_id, **make_kwargs, **options)
    except (TypeError, ValueError, LookupError, OSError, ImportError) as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        reason = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        raise typer.BadParameter(
            f"cannot build {env_id}{' with these options' if options else ''} ({reason})",
            param_hint="--option" if options else param_hint,
        ) from None


def check_env_options(env_id: str, options: dict[str, Any], param_hint: str = "--env") -> None:
    """Build the env once with ``options`` (then close it), so a bad option stops the command before it
    writes anything."""
    make_env(env_id, options, param_hint, disable_env_checker=True).close()
