"""Turn an analyst's answer into a pydantic model: find the JSON in the text, validate it, and on
failure ask the analyst once more (up to ``max_repairs`` times) with the validation error."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from trace_envs.core.templates import render_template
from trace_envs.llm.base import ChatModel, ChatResponse, Usage

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class AnalystOutputError(ValueError):
    """The analyst's answer stayed invalid after every repair retry."""


def extract_json(text: str) -> Any:
    """The JSON value in ``text``: a fenced ```json block, else the outermost ``{…}`` / ``[…]``."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(text.rfind("}"), text.rfind("]"))
        if end > start:
            candidates.append(text[start : end + 1])
    candidates.append(text)
    error: Exception | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            error = exc
    raise ValueError(f"no JSON found in the answer ({error})")


def parse_answer(text: str | None, model: type[M], normalize: Callable[[Any], Any] | None = None) -> M:
    """Validate the JSON in ``text`` as ``model``; raises ``ValueError`` / ``ValidationError``."""
    data = extract_json(text or "")
    if normalize is not None:
        data = normalize(data)
    return model.model_validate(data)


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:8])
    return str(exc)


async def ask_structured(
    analyst: ChatModel,
    messages: list[dict[str, Any]],
    model: type[M],
    *,
    max_repairs: int = 2,
    sampling: dict[str, Any] | None = None,
    normalize: Callable[[Any], Any] | None = None,
    validate: Callable[[M], object] | None = None,
) -> tuple[M, Usage]:
    """Ask, parse, and repair: returns the parsed answer and the usage of every request made."""
    return await repair_loop(
        lambda conversation: analyst.achat(conversation, **(sampling or {})),
        messages,
        model,
        max_repairs=max_repairs,
        normalize=normalize,
        validate=validate,
        first=None,
    )


async def repair_loop(
    send: Callable[[list[dict[str, Any]]], Awaitable[ChatResponse]],
    messages: list[dict[str, Any]],
    model: type[M],
    *,
    max_repairs: int,
    normalize: Callable[[Any], Any] | None,
    validate: Callable[[M], object] | None,
    first: ChatResponse | None,
) -> tuple[M, Usage]:
    """The loop of :func:`ask_structured`; ``first`` is an answer obtained elsewhere (a batch result)."""
    conversation = list(messages)
    usage = Usage()
    for attempt in range(max_repairs + 1):
        response = first if attempt == 0 and first is not None else await send(conversation)
        usage = usage + response.usage
        try:
            parsed = parse_answer(response.content, model, normalize)
            if validate is not None:
                validate(parsed)
            return parsed, usage
        except (ValueError, ValidationError) as exc:
            problem = _problem(exc)
            if attempt == max_repairs:
                raise AnalystOutputError(
                    f"analyst answer still invalid after {max_repairs} repair(s): {problem}; "
                    f"answer began {str(response.content)[:200]!r}"
                ) from exc
            conversation = [
                *conversation,
                {"role": "assistant", "content": response.content or "(empty)"},
                {"role": "user", "content": render_template("prompts/analysis_repair.jinja", problem=problem)},
            ]
    raise AssertionError("unreachable")  # pragma: no cover
