"""The training options of ``train`` and of the GRPO baselines, made from :class:`TrainConfig`'s fields as TRL's
``TrlParser`` makes them from its dataclasses: each knob is declared once, in TrainConfig. A field's description
is its option's help and the field's default the option's (the help shows it; no help text restates it); a
nested model's field is prefixed (``lora.r`` is ``--lora-r``). An option left out of the command line overrides
nothing, so a ``--config`` file's value stands."""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from trace_envs.training.config import TrainConfig

OLD_FLAGS: dict[str, str] = {
    "groups_per_step": "--groups",
    "per_device_train_batch_size": "--batch-size",
    "vllm.server_base_url": "--vllm-server-url",
}
"""Flags a knob had before its option was named after its field; each still works, and the help says so."""

SHARED_FLAGS: dict[str, str] = {"spot_check_share": "--spot-checks"}
"""A second flag a knob answers to: the one ``rollout`` and ``evaluate`` give the same setting."""

SET_ELSEWHERE = frozenset({"env_ids", "env_knobs"})
"""Fields every training command sets from its own options (``--env``, ``--option``)."""

DERIVED = frozenset({"per_device_train_batch_size", "gradient_accumulation_steps"})
"""Fields whose value follows from others when left out (TrainConfig derives them), so no fixed default is shown."""

PANEL = "Training (TrainConfig fields; also settable in --config)"
OPTIONS_PARAMETER = "train_options"
"""The parameter of a decorated command that receives the given knobs as :class:`TrainOptions`."""
CONTEXT_PARAMETER = "train_options_context"
"""The parameter Typer passes the click context in: it says which options the command line gave."""

Command = TypeVar("Command", bound=Callable[..., Any])

ConfigOption = Annotated[
    Path | None, typer.Option(metavar="FILE", help="YAML training config (fields of TrainConfig).")
]


@dataclass(frozen=True)
class Knob:
    """One TrainConfig field offered as a command-line option: its dotted path (``lora.r``) and declaration."""

    path: str
    field: FieldInfo
    kind: Any
    """The option's Python type (``int``, ``str`` for a choice, ``list[str]`` …); ``Optional`` removed."""

    @property
    def name(self) -> str:
        """The command function's parameter name (``lora_r``)."""
        return self.path.replace(".", "_")

    @property
    def flag(self) -> str:
        """The option's flag (``--lora-r``)."""
        return "--" + self.name.replace("_", "-")

    @property
    def default(self) -> Any:
        """The field's default (``None`` for a list, which is built afresh for every config)."""
        return None if self.field.default_factory is not None else self.field.default

    def help(self) -> str:
        """The field's description, plus the old flag that still works or the flag other commands give it, if any."""
        old, shared = OLD_FLAGS.get(self.path), SHARED_FLAGS.get(self.path)
        if old:
            return f"{self.field.description} (Old spelling: {old}; use {self.flag}.)"
        return (
            f"{self.field.description} (Also {shared}, as in rollout and evaluate.)"
            if shared
            else str(self.field.description)
        )


def _plain_type(annotation: Any) -> Any:
    """``annotation`` without ``None`` (``int | None`` is ``int``); ``None`` if an option cannot take it."""
    args = get_args(annotation)
    if type(None) in args:
        rest = [arg for arg in args if arg is not type(None)]
        return _plain_type(rest[0]) if len(rest) == 1 else None
    if annotation in (int, float, str, bool) or get_origin(annotation) is Literal:
        return annotation
    return annotation if get_origin(annotation) is list and args == (str,) else None


def knobs(model: type[BaseModel] = TrainConfig, prefix: str = "") -> list[Knob]:
    """Every field of ``model`` an option can take, nested settings (``lora``, ``vllm``) field by field; a field
    of another type (``lora.target_modules``: a preset or a list) is set in a ``--config`` file."""
    found: list[Knob] = []
    for name, field in model.model_fields.items():
        path = prefix + name
        if path in SET_ELSEWHERE:
            continue
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found += knobs(field.annotation, path + ".")
        elif (kind := _plain_type(field.annotation)) is not None:
            found.append(Knob(path, field, kind))
    return found


def _option(knob: Knob) -> Any:
    """The ``Annotated`` type of ``knob``'s parameter: its flags, help, shown default and metavar."""
    kind, metavar = knob.kind, {int: "N", float: "NUMBER"}.get(knob.kind, "TEXT")
    if get_origin(kind) is Literal:  # Typer offers choices as an Enum's values
        choices = [str(choice) for choice in get_args(kind)]
        kind, metavar = enum.Enum(knob.name, {choice: choice for choice in choices}), "|".join(choices)
    flags = [knob.flag] if kind is not bool else [f"{knob.flag}/--no-{knob.flag[2:]}"]
    option = typer.Option(
        *flags,
        *[flags[knob.path] for flags in (OLD_FLAGS, SHARED_FLAGS) if knob.path in flags],
        help=knob.help(),
        show_default=knob.default is not None and knob.path not in DERIVED,
        rich_help_panel=PANEL,
        metavar=None if kind is bool else metavar,
    )
    return Annotated[kind | None, option]


def _plain_value(value: Any) -> Any:
    """A parsed option's value as TrainConfig takes it (a choice's string, not Typer's Enum member)."""
    return value.value if isinstance(value, enum.Enum) else value


@dataclass(frozen=True)
class TrainOptions:
    """The training knobs given on the command line (an option left out is not here), by dotted field path."""

    given: dict[str, Any]

    def overrides(self) -> dict[str, Any]:
        """The given knobs as TrainConfig data: ``{"lora": {"r": 8}}`` for ``--lora-r 8``."""
        data: dict[str, Any] = {}
        for path, value in self.given.items():
            *sections, name = path.split(".")
            target = data
            for section in sections:
                target = target.setdefault(section, {})
            target[name] = value
        return data

    def argv(self) -> list[str]:
        """The given knobs as command-line arguments again (a job forwarded to another process)."""
        by_path = {knob.path: knob for knob in knobs()}
        args: list[str] = []
        for path, value in self.given.items():
            flag = by_path[path].flag
            if isinstance(value, bool):
                args.append(flag if value else f"--no-{flag[2:]}")
            else:
                args += [x for item in (value if isinstance(value, list) else [value]) for x in (flag, str(item))]
        return args


def with_train_options(*, leave_out: frozenset[str] = frozenset()) -> Callable[[Command], Command]:
    """Give a command one option per TrainConfig knob (but those in ``leave_out``); the command receives the ones
    the command line gave as its ``train_options`` parameter (:class:`TrainOptions`)."""

    def decorate(command: Command) -> Command:
        offered = [knob for knob in knobs() if knob.path not in leave_out]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            context: typer.Context = kwargs.pop(CONTEXT_PARAMETER)
            values = {knob.path: _plain_value(kwargs.pop(knob.name)) for knob in offered}
            given = {
                knob.path: values[knob.path]
                for knob in offered
                if getattr(context.get_parameter_source(knob.name), "name", None) != "DEFAULT"
            }
            return command(**kwargs, **{OPTIONS_PARAMETER: TrainOptions(given)})

        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != OPTIONS_PARAMETER]
        generated = [
            inspect.Parameter(knob.name, inspect.Parameter.KEYWORD_ONLY, default=knob.default, annotation=_option(knob))
            for knob in offered
        ]
        generated.append(inspect.Parameter(CONTEXT_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context))
        wrapper.__signature__ = signature.replace(parameters=[*own, *generated])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *generated]}  # what Typer reads, evaluated
        return wrapper  # type: ignore[return-value]

    return decorate


def train_config(config: Path | None, options: TrainOptions, **fields: Any) -> TrainConfig:
    """The TrainConfig of a ``--config`` file (optional), with ``fields`` and the given knobs on top (nested
    settings changed field by field); a bad value is a usage error naming it."""
    from trace_envs.training import load_config

    nested = {key: value for key, value in options.overrides().items() if isinstance(value, dict)}
    flat = {key: value for key, value in options.overrides().items() if key not in nested}
    try:
        loaded = load_config(config, **fields, **flat)
        if not nested:
            return loaded
        data = loaded.model_dump()
        return load_config(None, **{**data, **{key: {**data[key], **value} for key, value in nested.items()}})
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--config") from None
