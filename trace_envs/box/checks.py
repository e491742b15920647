"""What the trusted side accepts of a box's reset and step replies: nothing it has not parsed by type.

A box's module is untrusted, so its replies are data to check, not values to pass on. Every field a consumer
reads (the rollout runner, evaluation, the TRL bridge, a chat policy) is parsed here with its type and bound:

- the observation is text of at most the observation space's length (a longer one is refused, never clipped:
  the box is at fault, and a clipped text would still be what it chose);
- the reward is finite and inside ``[low, high]`` (``[0, 1]`` for capability envs), and so are the verdict's
  reward and components, whether the verdict ends a step or answers ``verify()`` (:func:`checked_verdict`, the
  one path for every verdict that comes back);
- the verdict's ``success`` is the trusted side's, not the box's: an episode succeeds only at the top of the
  reward range (``CapabilityEnv.verify``'s rule: success iff reward 1.0), the verdict's and, for a step's
  verdict, the step's paid reward alike, so a box cannot count a junk episode paid 0 in a pass rate;
- ``info`` keeps only the keys an env of ours sends, each parsed by type: ``turn`` an ``int``, the messages
  chat messages of known roles with bounded text, the verdict a :class:`~trace_envs.core.Verdict`; any other
  key is dropped;
- the tool schemas a reset offers the agent must equal this process's own schemas of the env's tools.

A reply that breaks any of these is a :class:`~trace_envs.box.client.BoxProtocolError`: the proxy kills the box
and turns it into an error observation (a step) or an errored episode (a reset).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trace_envs.core import Verdict
from trace_envs.core.spaces import MAX_TEXT_LENGTH

from .client import BoxProtocolError
from .protocol import ResetReply, StepReply

SHORT_TEXT = 256
"""Longest id, name, capability or ending a box may send (they are labels, not text)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ToolCallEntry(_Strict):
    id: str = Field(max_length=SHORT_TEXT)
    name: str = Field(min_length=1, max_length=SHORT_TEXT)
    arguments: dict[str, Any]


class TranscriptMessage(_Strict):
    """One transcript entry as :class:`trace_envs.core.Message` describes it, its text bounded like an observation."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = Field(default=None, max_length=MAX_TEXT_LENGTH)
    tool_calls: list[ToolCallEntry] | None = None
    id: str | None = Field(default=None, max_length=SHORT_TEXT)
    name: str | None = Field(default=None, max_length=SHORT_TEXT)
    error: bool | None = None
    invalid: bool | None = None


class ResetInfo(_Strict):
    """The keys of a capability env's reset ``info`` (others are dropped)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    task_id: str | None = Field(default=None, max_length=SHORT_TEXT)
    seed: int | None = None
    capability: str | None = Field(default=None, max_length=SHORT_TEXT)
    tools: list[dict[str, Any]] | None = None
    policy: str | None = Field(default=None, max_length=MAX_TEXT_LENGTH)
    messages: list[TranscriptMessage] | None = None


class StepInfo(_Strict):
    """The keys of a capability env's step ``info`` (others are dropped)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    messages: list[TranscriptMessage] | None = None
    turn: int | None = Field(default=None, ge=0)
    ended: str | None = Field(default=None, max_length=SHORT_TEXT)
    verdict: dict[str, Any] | None = None


def checked_reset(reply: ResetReply, tool_schemas: list[dict[str, Any]], max_length: int) -> tuple[str, dict[str, Any]]:
    """The reset's observation and ``info``, parsed (see the module's rules); :class:`BoxProtocolError` if not."""
    observation = checked_text(reply.observation, max_length, "reset")
    info = parsed(ResetInfo, reply.info, "reset")
    if "tools" in info and info["tools"] != tool_schemas:
        offered = sorted(tool_name(schema) for schema in info["tools"] or [])
        raise BoxProtocolError(
            f"the box's reset offered the agent tool schemas ({', '.join(offered) or 'none'}) that differ from the "
            "domain's schemas of the env's tools; a box cannot add or reword a tool",
            stage="reset",
        )
    return observation, info


def tool_name(schema: dict[str, Any]) -> str:
    """The name a tool schema gives (an OpenAI-style ``{"function": {"name"}}`` or a flat ``{"name"}``), cut short."""
    function = schema.get("function")
    name = function.get("name") if isinstance(function, dict) else schema.get("name")
    return repr(name)[:40]


def checked_step(
    reply: StepReply, max_length: int, reward_range: tuple[float, float]
) -> tuple[str, float, dict[str, Any]]:
    """The step's observation, reward and ``info``, parsed (see the module's rules); :class:`BoxProtocolError` if not."""
    observation = checked_text(reply.observation, max_length, "step")
    reward = checked_reward(reply.reward, reward_range, "the step's reward")
    info = parsed(StepInfo, reply.info, "step")
    if info.get("verdict") is not None:
        info["verdict"] = checked_verdict(info["verdict"], reward_range)
        info["verdict"]["success"] = info["verdict"]["success"] and reward >= reward_range[1]  # and paid so
    return observation, reward, info


def checked_text(text: str, max_length: int, stage: str) -> str:
    if len(text) > max_length:
        raise BoxProtocolError(
            f"the box's {stage} observation has {len(text):,} characters, over the observation space's {max_length:,}",
            stage=stage,
        )
    return text


def checked_reward(reward: float, reward_range: tuple[float, float], what: str, stage: str = "step") -> float:
    """``reward``, finite and in ``reward_range``; :class:`BoxProtocolError` if not."""
    low, high = reward_range
    if not math.isfinite(reward) or not low <= reward <= high:
        raise BoxProtocolError(f"{what} is {reward!r}, not a finite number in [{low:g}, {high:g}]", stage=stage)
    return reward


def checked_verdict(value: Any, reward_range: tuple[float, float], stage: str = "step") -> dict[str, Any]:
    """The verdict as a :class:`Verdict` reads it, its reward and components finite and in range, and its
    ``success`` the trusted side's (:func:`trusted_success`): the one check of every verdict a box sends."""
    try:
        verdict = Verdict[Any].model_validate(value)
    except ValidationError as exc:
        raise BoxProtocolError(f"the box's verdict is not a Verdict: {short_errors(exc)}", stage=stage) from None
    checked_reward(verdict.reward, reward_range, "the verdict's reward", stage)
    for name, part in verdict.components.items():
        checked_reward(part, reward_range, f"the verdict's component {name[:40]!r}", stage)
    verdict.success = trusted_success(verdict.success, verdict.reward, reward_range)
    return verdict.model_dump()


def trusted_success(claimed: bool, reward: float, reward_range: tuple[float, float]) -> bool:
    """Whether a boxed episode succeeded: the box says so *and* its reward is the top of the range, the rule of
    ``CapabilityEnv.verify`` (success iff reward 1.0); a box's claim alone never counts in a pass rate."""
    return bool(claimed) and reward >= reward_range[1]


def parsed(model: type[BaseModel], info: dict[str, Any], stage: str) -> dict[str, Any]:
    """``info``'s known keys, once ``model`` has parsed them (others dropped). The values are the reply's own:
    the parse admits no other key at any depth and no value of another type (strict), so they are what it read,
    and a step does not pay for writing them out again."""
    try:
        model.model_validate(info)
    except ValidationError as exc:
        raise BoxProtocolError(f"the box's {stage} info is malformed: {short_errors(exc)}", stage=stage) from None
    return {key: info[key] for key in model.model_fields if key in info}


def short_errors(exc: ValidationError) -> str:
    """The first errors of a validation, one line, without the input values (they are the box's text)."""
    parts = [f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()[:3]]
    return "; ".join(parts)[:400]
