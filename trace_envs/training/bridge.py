"""Gymnasium-to-TRL bridge: any env of ours (:class:`~trace_envs.core.EnvProtocol`: a capability env, a boxed
one, a target env) as a class for ``GRPOTrainer(environment_factory=...)``.

TRL's multi-turn loop (trl >= 1.16) calls ``reset(**row)`` on one env instance per generation, then
offers every public method as a tool, calls the tools the model asks for, appends ``str(result)`` as a
tool message and generates again, until the model answers without a tool call. Its rollout therefore
ends at the first plain assistant message. A conversation with a *user* fits into that loop as one
more tool, ``send_message_to_user(message)``: the scripted user's reply comes back as the tool result
(and is masked out of the loss with the other tool results). The model's final plain message is the
agent's closing message to the user; :meth:`TRLEnvironment._finish` delivers it to the env and ends
the episode, and ``get_reward`` returns the env's own verifier reward.

An env whose code is not trusted (a boxed module) never stops a training run: an exception of its ``reset`` or
``step`` ends that episode with reward 0, and so does a reward that is not finite or not in a capability env's
``[0, 1]`` (:func:`trace_envs.core.rewards.reward_problem`); the episode's ``_error`` says why.
"""

from __future__ import annotations

import inspect
import re
import types
from typing import Any, ClassVar, Literal, Union, cast, get_args, get_origin

import gymnasium as gym
from pydantic import BaseModel

from trace_envs.core import (
    STOP_TOKEN,
    Capability,
    EnvProtocol,
    Message,
    Tool,
    ToolCall,
    VerifiableEnv,
    contract_gaps,
    declares_capability,
    render_transcript,
)
from trace_envs.core.rewards import reward_problem
from trace_envs.registry.ids import parse_env_id

SEND_MESSAGE_TOOL = "send_message_to_user"
ENDED_NOTE = "[The conversation has ended. Reply with a short closing message and no tool call.]"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def make_conversation_env(env_id: str, **knobs: Any) -> EnvProtocol:
    """``gym.make(env_id, **knobs)`` unwrapped to an env that satisfies :class:`~trace_envs.core.EnvProtocol`
    (a capability env, run here or boxed, or a target env), which the bridge drives; a clear error naming
    what any other env lacks."""
    import trace_envs  # noqa: F401  (registers the trace/ envs)

    env = gym.make(env_id, disable_env_checker=True, **knobs).unwrapped
    gaps = contract_gaps(env)
    if gaps:
        raise TypeError(f"{env_id!r} is a {type(env).__name__}, not a trace_envs env: it lacks {', '.join(gaps)}")
    return cast(EnvProtocol, env)


def make_capability_env(env_id: str, **knobs: Any) -> VerifiableEnv:
    """``gym.make(env_id, **knobs)`` unwrapped to an env that declares a capability (run here or boxed, or the
    device target), with a clear error for any other env."""
    env = make_conversation_env(env_id, **knobs)
    if not declares_capability(env):
        raise TypeError(
            f"{env_id!r} is a {type(env).__name__}, not a trace_envs CapabilityEnv: it declares no capability"
        )
    return cast(VerifiableEnv, env)


def env_capability(env_id: str, env: EnvProtocol) -> Capability:
    """What an env trains: its declared capability; for a target env without one (tau2's), one named after the
    env id, e.g. ``trace/tau2-retail-v0`` -> ``tau2_retail``."""
    if env.capability is not None:
        return env.capability
    _, stem, _ = parse_env_id(env_id)
    name = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
    name = name if name and name[0].isalpha() else f"env_{name}"
    return Capability(name=name, description=f"The target environment {env_id} itself (all of its tasks).")


def json_schema_hint(hint: Any) -> Any:
    """A type hint that ``transformers.utils.get_json_schema`` can describe, for a pydantic field's hint.

    Pydantic models become ``dict`` (the env validates the real structure when the tool runs);
    containers, unions, ``Literal`` and basic types are kept.
    """
    origin, args = get_origin(hint), get_args(hint)
    if origin is None:
        if isinstance(hint, type) and issubclass(hint, BaseModel):
            return dict
        if hint in (str, int, float, bool, dict, list, type(None)):
            return hint
        return str if hint is Any else hint
    if origin is Literal:
        return hint
    if origin in (Union, types.UnionType):
        return Union[tuple(json_schema_hint(a) for a in args)]  # noqa: UP007  (built at run time)
    if origin is list:
        return list[json_schema_hint(args[0])] if args else list  # type: ignore[misc]
    if origin is dict:
        return dict[str, json_schema_hint(args[1])] if len(args) == 2 else dict  # type: ignore[misc]
    if origin is tuple:
        return list[json_schema_hint(args[0])] if args else list  # type: ignore[misc]
    if str(origin).endswith("Annotated"):
        return json_schema_hint(args[0])
    return hint


def _tool_method(item: Tool) -> Any:
    """A method ``name(self, **arguments)`` with the tool's typed signature and a Google docstring."""
    if not _IDENTIFIER.match(item.name) or item.name.startswith("_") or item.name in ("reset", "get_reward"):
        raise ValueError(f"tool name {item.name!r} cannot be offered to TRL as a method name")
    fields = item.parameters.model_fields
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for name, info in fields.items():
        hint = json_schema_hint(info.annotation)
        annotations[name] = hint
        default = inspect.Parameter.empty if info.is_required() else info.get_default(call_default_factory=True)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
    annotations["return"] = str

    def method(self: TRLEnvironment, **arguments: Any) -> str:
        return self._call_tool(item.name, arguments)

    lines = [item.description.strip() or item.name]
    if fields:
        lines += ["", "Args:"]
        for name, info in fields.items():
            text = " ".join((info.description or item.arg_descriptions.get(name) or name).split())
            lines.append(f"    {name}: {text}")
    method.__name__ = method.__qualname__ = item.name
    method.__doc__ = "\n".join(lines)
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return method


def send_message_to_user(self, message: str) -> str:  # type: ignore[no-untyped-def, unused-ignore]
    """Send a message to the user and get the user's reply.

    Use it to ask the user for information, to ask for confirmation before a change, and to tell
    the user the outcome. Your last reply without a tool call is also sent to the user and ends
    the conversation.

    Args:
        message: The text of the message to the user.
    """
    return str(self._act(message))


class TRLEnvironment:
    """Base of the generated bridge classes: one episode of the env per ``reset``.

    Subclasses are made by :func:`trl_environment`; they add one method per domain tool plus
    ``send_message_to_user``. Everything that is not a tool starts with ``_`` (TRL's rule).
    """

    env_id: ClassVar[str]
    knobs: ClassVar[dict[str, Any]]

    def __init__(self) -> None:
        self._env = make_conversation_env(self.env_id, **self.knobs)
        self._seed: int | None = None
        self._reward: float | None = None
        self._closed = False
        self._log: list[Message] = []
        """The episode's transcript, from the env's ``info["messages"]``."""
        self._end: str | None = None
        """How the episode ended (the env's ``info["ended"]``), ``None`` while it runs."""
        self._error: str | None = None
        """Why the env failed this episode (it then scores 0), ``None`` if it did not."""

    # ----- what TRL calls ----------------------------------------------------------------------
    def reset(self, **row: Any) -> str | None:
        """Start the episode of the row's ``seed`` (every generation of a group gets the same row)."""
        if "seed" not in row:
            raise KeyError(f"dataset rows for {self.env_id} need a 'seed' column; got columns {sorted(row)}")
        self._seed = int(row["seed"])
        self._reward, self._closed, self._end, self._error = None, False, None, None
        try:
            opening, info = self._env.reset(seed=self._seed)
        except Exception as exc:  # the env's own failure: this episode scores 0, the run goes on
            self._failed(f"reset failed: {type(exc).__name__}: {str(exc)[:300]}")
            return None
        self._log = list(info.get("messages") or [])
        prompt = row.get("prompt")
        if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):
            shown = prompt[-1].get("content")
            if shown is not None and shown != opening:
                raise ValueError(
                    f"row seed {self._seed} of {self.env_id} opens with {opening!r} but the row's prompt ends with "
                    f"{shown!r}: build the dataset with trace_envs.training.build_dataset for the same env and knobs"
                )
        return None

    def get_reward(self) -> float:
        """The env's verifier reward for the episode (closing it first if the model never did)."""
        if self._reward is None:
            self._finish(None)
        assert self._reward is not None
        return self._reward

    # ----- helpers (private: TRL would offer public methods as tools) ----------------------------
    def _step(self, action: Any) -> tuple[str, float, bool]:
        """One env step through the gym API: (observation, reward, ended), the transcript kept."""
        try:
            observation, reward, terminated, truncated, info = self._env.step(action)
        except Exception as exc:  # the env's own failure: this episode scores 0, the run goes on
            return self._failed(f"step failed: {type(exc).__name__}: {str(exc)[:300]}")
        problem = reward_problem(reward, self._env)
        if problem is not None:
            return self._failed(problem)
        self._log.extend(info.get("messages") or [])
        if terminated or truncated:
            self._end = str(info.get("ended") or ("terminated" if terminated else "truncated"))
        return str(observation), float(reward), bool(terminated or truncated)

    def _failed(self, why: str) -> tuple[str, float, bool]:
        """End the episode with reward 0 because the env failed (``why``, kept in ``_error``)."""
        self._error, self._end, self._reward = why, "error", 0.0
        return f"Error: the environment failed ({why}).", 0.0, True

    def _act(self, action: Any) -> str:
        if self._end is not None or self._closed:
            return ENDED_NOTE
        observation, reward, ended = self._step(action)
        if ended:
            self._reward = reward
            observation = observation.replace(STOP_TOKEN, "").strip()
            return f"{observation}\n{ENDED_NOTE}".strip()
        return observation

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        return self._act(ToolCall(name=name, arguments=dict(arguments)))

    def _finish(self, final_message: str | None) -> float:
        """End the episode: the model's final plain message goes to the user, then the agent stops."""
        if self._closed:
            return self._reward or 0.0
        if self._end is None and final_message and final_message.strip():
            self._act(final_message)
        self._closed = True
        if self._end is None:
            _, self._reward, _ = self._step(STOP_TOKEN)
        if self._reward is None:
            self._reward = 0.0
        return self._reward

    @property
    def _transcript(self) -> str:
        return render_transcript(self._log)

    @property
    def _messages(self) -> list[Message]:
        return list(self._log)


def trl_environment(env_id: str, **knobs: Any) -> type[TRLEnvironment]:
    """A class for ``GRPOTrainer(environment_factory=...)`` that plays ``env_id`` (a capability env, or a
    target env such as ``trace/tau2-retail-v0`` with its LLM user injected as the ``user_model`` knob).

    Tool methods are generated from the domain's tool schemas (typed signatures and Google-style
    docstrings, as TRL requires) plus ``send_message_to_user``; ``reset(**row)`` starts the episode
    of the row's ``seed``; ``get_reward()`` is the env's verifier reward.

    Args:
        env_id: A registered ``trace/...`` env id.
        **knobs: The env's difficulty knobs (validated by the env).
    """
    env = make_conversation_env(env_id, **knobs)
    capability = env_capability(env_id, env)
    namespace: dict[str, Any] = {
        "env_id": env_id,
        "knobs": dict(knobs),
        "__doc__": f"TRL environment for {env_id} ({capability.name}): {capability.description}",
        SEND_MESSAGE_TOOL: send_message_to_user,
    }
    for name in env.toolset:
        if name == SEND_MESSAGE_TOOL:
            raise ValueError(f"{env_id}: a domain tool is called {SEND_MESSAGE_TOOL!r}, which the bridge reserves")
        namespace[name] = _tool_method(env.toolset[name])
    class_name = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", env_id) if part) + "TRLEnv"
    return type(class_name, (TRLEnvironment,), namespace)


def tool_schemas(cls: type[TRLEnvironment]) -> list[dict[str, Any]]:
    """The JSON schemas TRL renders for the class's tools (alphabetical, as TRL offers them)."""
    from transformers.utils.chat_template_utils import get_json_schema

    return [
        get_json_schema(fn)
        for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    ]
