"""The box protocol: typed, versioned JSON lines between the trusted process and one box process.

The parent writes one request per line on the box's request pipe and reads exactly one reply per request
on its reply pipe (other descriptors: the box's stdout and stderr go to files, refusals of its audit hook
to a third pipe). The first request is :class:`Start`, carrying the module's text itself (the validated
UTF-8 text, read once by the parent), the env class's constructor options and the protocol version;
the box answers :class:`Ready` with what the env declares. Every later request is answered by the
matching reply or by :class:`Failed` (an exception of the env's code, raised again in the parent): the
parent parses a reply with :data:`REPLY_TO` of its request, and with the union :data:`REPLY` only to name
the kind of a reply that is not the expected one (a protocol error either way).

Version 2 (what a reset repeats is declared once, in :class:`Ready`: the reset's ``info`` sends the tool
schemas and the policy as ``null`` when they are the declared ones, and the parent formats the reference
solutions from the task when the env's ``oracle_actions`` and ``flawed_actions`` are ``CapabilityEnv``'s own).
Version 3 (a user played by the parent's model: a :class:`Reset` with ``model_user`` makes the box ask the
parent for each of the user's lines while that reset, and every later step, is under way: it writes a
:class:`UserTurn` on its reply pipe instead of the reply, and reads the parent's :class:`UserLine` on its
request pipe, then goes on; the model and its network stay in the parent).
Version 4 (an action that is not text, such as the ``ToolCall`` objects the TRL bridge passes, crosses as
:class:`ParsedStep`: the calls the parent's ``parse_action`` found, which the box's env acts on as they are, so a
boxed env acts on every action exactly as the env in-process does; text still crosses as text).
A box refuses a :class:`Start` of another version (it answers :class:`Failed`, kind
``ProtocolVersion``), so parent and box always come from the same installed trace-envs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from trace_envs.core.task import Task
from trace_envs.core.tools import ToolCall

PROTOCOL_VERSION = 4
PLUGIN_GROUP = "trace_envs.envs"
"""The plugins' entry-point group (the registry's ``ENTRY_POINT_GROUP``, which the box may not import): both sides
read the plugin packages a box trusts from it."""
MODULE_NAME = "trace_envs_boxed_module"
"""The name the module runs under in every box (validation, calibration, training, evaluation)."""
MODULE_FILENAME = "env_module.py"
"""The file name its code objects carry (tracebacks name its lines) in every box."""

Query = Literal["oracle_actions", "flawed_actions", "gold_hash", "state", "verify"]
"""What a :class:`Ask` may read from the env (``state``: the domain's dump of it)."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Start(_Message):
    """Load ``source`` as the module, build its one ``CapabilityEnv`` with ``options``."""

    op: Literal["start"] = "start"
    version: int = PROTOCOL_VERSION
    source: str
    options: dict[str, Any] = Field(default_factory=dict)


class Reset(_Message):
    op: Literal["reset"] = "reset"
    seed: int | None = None
    options: dict[str, Any] | None = None
    model_user: bool = Field(
        default=False,
        description="The episode's user is played by the parent's model: the box asks for each line (UserTurn).",
    )


class ParsedStep(_Message):
    """A non-text action as the parent parsed it (``trace_envs.core.actions.ParsedAction``'s fields)."""

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    content: str | None = None


class Step(_Message):
    op: Literal["step"] = "step"
    action: str | ParsedStep


class Ask(_Message):
    """Read one thing from the env (the reference solution, the verdict, ...)."""

    op: Literal["ask"] = "ask"
    what: Query


class Close(_Message):
    op: Literal["close"] = "close"


class UserLine(_Message):
    """The parent's answer to a :class:`UserTurn`: the user's line, and whether the user is done."""

    op: Literal["user_line"] = "user_line"
    text: str
    done: bool


Request = Annotated[Start | Reset | Step | Ask | Close, Field(discriminator="op")]
REQUEST = TypeAdapter(Request)
USER_LINE = TypeAdapter(UserLine)


TaskActions = Literal["oracle_actions", "flawed_actions"]
"""A reference solution the parent can format from the task (``CapabilityEnv``'s own method)."""


class Ready(_Message):
    """The env is built: what it declares (the parent checks it against its own domain objects)."""

    kind: Literal["ready"] = "ready"
    version: int = PROTOCOL_VERSION
    class_name: str
    capability: dict[str, Any]
    domain: str
    max_turns: int
    tool_names: list[str] | None = None
    tool_schemas: list[dict[str, Any]]
    policy: str | None = None
    policy_text: str = Field(default="", description="The policy the agent sees (``policy_text``), sent once here.")
    actions_from_task: list[TaskActions] = Field(
        default_factory=list,
        description="Those of its oracle_actions and flawed_actions that are CapabilityEnv's own (and so is its "
        "current_task): the parent formats them from the task itself (no Ask).",
    )
    instructions: str | None = Field(default=None, description="The env's own agent instructions (None: tau2's).")
    env_id: str | None = Field(default=None, description="The module's ENV_ID, if it sets one.")


SharedKey = Literal["tools", "policy"]
"""An ``info`` key of a reset whose value the :class:`Ready` declared (``tool_schemas``, ``policy_text``)."""


class ResetReply(_Message):
    kind: Literal["reset"] = "reset"
    observation: str
    info: dict[str, Any]
    task: Task
    seed: int
    shared: list[SharedKey] = Field(
        default_factory=list,
        description="info keys sent as null because their value is the Ready's (the parent puts it back).",
    )


class StepReply(_Message):
    kind: Literal["step"] = "step"
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class Answer(_Message):
    kind: Literal["answer"] = "answer"
    value: Any = None


class Failed(_Message):
    """The request raised inside the box: the exception's type, message and the module's line, if there."""

    kind: Literal["failed"] = "failed"
    error: str
    message: str
    line: int | None = None
    traceback: str = ""


class UserTurn(_Message):
    """Box to parent, while a reset or step of a ``model_user`` episode is under way: the user's next line.

    ``start``: the opening line of the episode's ``task`` (the parent builds its user from it, with the user
    factory, :func:`trace_envs.core.user.model_user`); ``reply``: the user's answer to ``agent_message``.
    The parent answers :class:`UserLine`; it does nothing else for a box."""

    kind: Literal["user_turn"] = "user_turn"
    turn: Literal["start", "reply"]
    task: Task | None = None
    agent_message: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> UserTurn:
        if (self.turn == "start") != (self.task is not None) or (self.turn == "reply") != (
            self.agent_message is not None
        ):
            raise ValueError("a start turn carries the task only, a reply turn the agent's message only")
        return self


Reply = Annotated[Ready | ResetReply | StepReply | Answer | Failed | UserTurn, Field(discriminator="kind")]
REPLY = TypeAdapter(Reply)
"""Any reply (the parent parses with :data:`REPLY_TO` and uses this only to name a reply of the wrong kind)."""
REPLY_TO: dict[type[_Message], TypeAdapter[Any]] = {
    Start: TypeAdapter(Annotated[Ready | Failed, Field(discriminator="kind")]),
    Reset: TypeAdapter(Annotated[ResetReply | UserTurn | Failed, Field(discriminator="kind")]),
    Step: TypeAdapter(Annotated[StepReply | UserTurn | Failed, Field(discriminator="kind")]),
    Ask: TypeAdapter(Annotated[Answer | Failed, Field(discriminator="kind")]),
}
"""The replies each request may get: its own kind or :class:`Failed` (and a reset's or a step's, the box's
:class:`UserTurn`); one small union to validate, not all six."""


class Refusal(BaseModel):
    """An operation the box's audit hook refused (sent on the report pipe as it happens)."""

    event: str
    detail: str
    stage: str = ""
