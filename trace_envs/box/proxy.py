"""The trusted side of a boxed env: :class:`BoxedEnv`, a proxy whose episodes run in a box.

``BoxedEnv`` is a Gymnasium env of its own that satisfies the env contract (:class:`trace_envs.core.VerifiableEnv`):
``reset``, ``step``, ``verify()``, ``oracle_actions()``, ``flawed_actions()``, ``gold_hash()`` and ``state`` are
calls to the box (one env per box process, see :mod:`trace_envs.box.pool`), but for a reference solution the env
leaves to ``CapabilityEnv`` (formatted here from the task, ``Ready.actions_from_task``); the task, the messages,
the turn and how the episode ended are kept here from the replies, so everything that reads the contract (the
property suite, scripted policies, the TRL bridge, rollouts) reads a boxed env like one run here, and none of
the module's code runs in this process. The domain, its toolset and the spaces are this process's own objects.
The constructor's options (the module's knobs) go to the box, which validates them. With ``user_model`` the user
is played here, by the registered user factory (:func:`trace_envs.core.user.model_user`, by default ``LLMUser``)
with that model: the box asks for each of its lines (:class:`~trace_envs.box.protocol.UserTurn`) and gets
nothing else.

Nothing a box sends is trusted (:mod:`trace_envs.box.checks`): the observation must fit the observation space,
the reward be finite and in :attr:`BoxedEnv.reward_bounds`, every ``info`` field parse by type, and the tools a
reset offers equal this process's schemas. A box that breaks any of these, hangs past its deadlines
(:class:`~trace_envs.box.limits.BoxLimits`) or dies during ``step`` ends the episode with an error observation
(reward 0, ``info["box_error"]``), never an exception; during a reset it raises :class:`BoxFailure` (a consumer's
per-episode guard turns that into an errored episode). A box found dead when a reset starts (it died after its
last reply) is replaced by a fresh one, once.
"""

from __future__ import annotations

import contextlib
import copyreg
import hashlib
import json
from collections.abc import Callable
from typing import Any, ClassVar, SupportsFloat

from gymnasium import Env

from trace_envs.core import (
    Capability,
    Domain,
    Message,
    Task,
    Toolset,
    UnicodeText,
    User,
    Verdict,
    format_steps,
    parse_action,
    render_transcript,
)
from trace_envs.core.domain import registered_domain
from trace_envs.core.safe_text import shown
from trace_envs.core.spaces import MAX_TEXT_LENGTH
from trace_envs.core.user import model_user

from .checks import checked_reset, checked_step, checked_verdict
from .client import BoxCrashed, BoxedEnvError, BoxFailure, BoxProcess, BoxProtocolError
from .pool import BoxPool, default_pool
from .protocol import Ask, ParsedStep, Ready, Reset, Step, UserLine, UserTurn
from .stand_in import ScriptedUserModel

BOX_ERROR_ENDING = "box_error"
"""``info["ended"]`` of an episode whose box failed."""


class BoxedEnvType(type):
    """The type of boxed env classes: one pickles as the data it was made from (:func:`pickled_class`), so a
    spawned worker (``AsyncVectorEnv``, rollout workers) rebuilds the same class and reads no file."""


class BoxedEnv(Env[str, str], metaclass=BoxedEnvType):
    """A capability env played in a box; subclasses made by :func:`boxed_env_class` name the module and declare
    what its box said (capability, domain, tools, policy, turn limit)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 4}  # noqa: RUF012  (Gymnasium API)
    source: ClassVar[str] = ""
    """The module's validated text (executed in the box; never here)."""
    source_sha256: ClassVar[str] = ""
    """The sha256 of :attr:`source` (its UTF-8 bytes): which text this class runs, whatever the file holds later."""
    ready: ClassVar[Ready | None] = None
    """What the module's box declared when the class was made."""
    origin: ClassVar[str] = ""
    """Where the text came from (a path), for messages."""
    pool: ClassVar[BoxPool | None] = None
    """The pool its boxes come from (``None``: the process's shared one)."""
    declared_id: ClassVar[str | None] = None
    """The module's own ``ENV_ID``, if it sets one."""
    untrusted: ClassVar[bool] = True
    """Its module's code is not trusted: spot checks also play it at a model's pace (``core.spot_checks.untrusted``)."""
    reward_bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)
    """The range every reward (and the verdict's) must lie in: a capability env's."""
    capability: ClassVar[Capability]
    """What the module's env trains, as data only (see :func:`trusted_capability`)."""
    domain: ClassVar[Domain[Any]]
    """This process's own domain object of the domain the box declares."""
    max_turns: ClassVar[int] = 30
    """Agent actions before the box truncates the episode."""
    tool_names: ClassVar[tuple[str, ...] | None] = None
    """The domain's tools the env offers (``None``: all of them)."""
    policy: ClassVar[str | None] = None
    """The env's own policy text (``None``: the domain's)."""
    instructions: ClassVar[str | None] = None
    """The env's own agent instructions (``None``: tau2-bench's agent's)."""

    def __init__(self, seed: int | None = None, render_mode: str | None = None, user_model: Any = None, **options: Any):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = UnicodeText()
        self.action_space = UnicodeText()
        self.user_model = user_model
        """The chat model that plays the user, here (the box has no network); ``None``: the scripted user."""
        self.user: User | None = None
        self._user_task: Task | None = None
        self.options = dict(options)
        """The constructor's options (the module's knobs), sent to the box, which validates them."""
        self.toolset: Toolset = (
            self.domain.toolset if self.tool_names is None else self.domain.toolset.subset(self.tool_names)
        )
        self.tool_schemas: list[dict[str, Any]] = self.toolset.schemas()
        self.messages: list[Message] = []
        self.turn = 0
        self.ended: str | None = None
        self._pending_seed = seed
        self.task: Task | None = None
        self.task_seed: int | None = None
        self._gold_hash: str | None = None
        self._box: BoxProcess | None = None
        self._successor_asked: str | None = None
        """The run id of the box whose successor this env asked its pool for (once, at half its resets)."""
        self.box_failures: list[str] = []
        self._take_box()

    # ----- the box ---------------------------------------------------------------------------------
    def _pool(self) -> BoxPool:
        return type(self).pool or default_pool()

    def _take_box(self, *, new_episode: bool = False) -> BoxProcess:
        """The env's box; before a new episode, a fresh one if it is used up (between episodes only: a box
        holds the episode under way)."""
        used_up = new_episode and self._box is not None and self._box.resets >= self._box.limits.resets_per_box
        if self._box is None or not self._box.alive or used_up:
            self._give_box_back()
            try:
                self._box = self._pool().acquire(self.source, self.options)
            except BoxedEnvError as exc:
                raise ValueError(f"{self.origin or type(self).__name__} failed in its box: {exc}") from exc
        return self._box

    def _give_box_back(self) -> None:
        box, self._box = self._box, None
        if box is not None:
            self._pool().release(box, self.source, self.options)

    def _episode_box(self) -> BoxProcess:
        """The box holding the episode under way (a new box would not have it)."""
        if self._box is None or self._box.failure is not None:  # a box that died since: its pipe says so
            raise BoxCrashed("the box of this episode is gone; call reset()", stage="step")
        return self._box

    def _ask(self, what: Any) -> Any:
        return self._episode_box().call(Ask(what=what)).value

    # ----- the Gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode in the box (a fresh box once if it died since its last reply)."""
        if seed is None and self._pending_seed is not None:
            seed = self._pending_seed
        self._pending_seed = None
        super().reset(seed=seed)
        task_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        self.task = None  # until the box has answered: a failed reset leaves no episode to step
        request = Reset(seed=task_seed, options=options, model_user=self.user_model is not None)
        try:
            box, reply = self._reset_call(request)
        except BoxCrashed:  # its box died after its last reply (or at this reset): a fresh box, once
            box, reply = self._reset_call(request)
        if self._user_task is not None and self._user_task != reply.task:
            box.fail(BoxProtocolError("the box started the user of another task than it reset to", stage="reset"))
        try:
            observation, info = checked_reset(reply, self.tool_schemas, self.observation_bound())
        except BoxProtocolError as exc:
            box.fail(exc)
        self.task, self.task_seed, self._gold_hash = reply.task, reply.seed, None
        self.messages = list(info.get("messages") or [])
        self.turn, self.ended = 0, None
        if box.run_id != self._successor_asked and 2 * box.resets >= box.limits.resets_per_box:
            self._successor_asked = box.run_id
            self._pool().prepare(self.source, self.options)
        return observation, info

    def observation_bound(self) -> int:
        """The longest observation the env's observation space holds (a ``Text`` space's ``max_length``)."""
        return int(getattr(self.observation_space, "max_length", MAX_TEXT_LENGTH))

    def _reset_call(self, request: Reset) -> tuple[BoxProcess, Any]:
        """The box of the new episode and its reply to ``request``."""
        self.user, self._user_task = None, None
        box = self._take_box(new_episode=True)
        return box, box.call(request, user=self._played_user(True))

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play one action in the box; a box that fails ends the episode with an error observation."""
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        try:
            box = self._episode_box()
            reply = box.call(Step(action=wire_action(action)), user=self._played_user(False))
            try:
                observation, reward, info = checked_step(reply, self.observation_bound(), self.reward_bounds)
            except BoxProtocolError as exc:
                box.fail(exc)
        except BoxFailure as exc:
            return self._box_failed(exc)
        self.messages.extend(info.get("messages") or [])
        self.turn = info.get("turn", self.turn)
        if reply.terminated or reply.truncated:
            self.ended = info.get("ended") or ("terminated" if reply.terminated else "truncated")
        return observation, reward, reply.terminated, reply.truncated, info

    def _played_user(self, resetting: bool) -> Callable[[UserTurn], UserLine] | None:
        """What answers the box's user turns during a reset (``resetting``) or a step; None: no model plays."""
        if self.user_model is None:
            return None
        return lambda turn: self._user_line(turn, resetting)

    def _user_line(self, turn: UserTurn, resetting: bool) -> UserLine:
        """The user's line the box asks for: its opening (once, while resetting) or its reply, played here."""
        if turn.turn == "start":
            if not resetting or self.user is not None or turn.task is None:
                raise BoxProtocolError("the box asked to start a user outside a reset, or twice", stage="user")
            scripted = isinstance(self.user_model, ScriptedUserModel)
            self.user = self.user_model.user(turn.task) if scripted else model_user(self.user_model, turn.task)
            self._user_task = turn.task
            text = self.user.start()
        else:
            if self.user is None or turn.agent_message is None:
                raise BoxProtocolError("the box asked for a user's reply before its opening", stage="user")
            text = self.user.reply(turn.agent_message)
        return UserLine(text=text, done=self.user.done)

    def _box_failed(self, exc: BoxFailure) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """The episode ends with an error observation; the next ``reset`` takes a fresh box."""
        self.box_failures.append(str(exc))
        self._give_box_back()
        text = f"Error: the environment failed ({exc}); call reset()."
        message: Message = {"role": "user", "content": text, "error": True}
        self.messages.append(message)
        self.ended = BOX_ERROR_ENDING
        info = {"messages": [message], "ended": BOX_ERROR_ENDING, "box_error": str(exc), "turn": self.turn}
        return text, 0.0, True, False, info

    def cut(self, reason: str = "max_steps") -> dict[str, Any]:
        """End the episode from outside and score it as at the turn limit (the box's verdict so far), as an
        env run here does; ``{}`` if no episode is under way."""
        if self.task is None or self.ended is not None:
            return {}
        try:
            verdict = self.verify()
        except BoxFailure as exc:
            return self._box_failed(exc)[4]
        self.ended = reason
        return {"verdict": verdict.model_dump(), "ended": reason}

    def render(self) -> str | None:
        """The transcript so far as plain text (printed in ``human`` mode), every line of the box's text as
        :func:`~trace_envs.safe_text.shown` shows it (:func:`shown_transcript`)."""
        text = shown_transcript(self.messages)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Give the box back to its pool."""
        self._give_box_back()
        super().close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown the pool's atexit closes the boxes
            self._give_box_back()

    # ----- what the box computes ---------------------------------------------------------------------
    @property
    def current_task(self) -> Task:
        """The task of the current episode, as the box reset to it (a ``RuntimeError`` before a reset)."""
        if self.task is None:
            raise RuntimeError("call reset() first: there is no current task")
        return self.task

    def verify(self) -> Verdict[Any]:
        """The box's verdict of the episode so far, checked as a step's is (:func:`~.checks.checked_verdict`: its
        reward and components in range, its success the trusted side's); a box that breaks that is killed."""
        box = self._episode_box()
        try:
            checked = checked_verdict(box.call(Ask(what="verify")).value, self.reward_bounds, stage="verify")
        except BoxProtocolError as exc:
            box.fail(exc)
        return Verdict[Any].model_validate(checked)

    def gold_hash(self) -> str:
        """The box's gold hash of the current task (asked once per episode)."""
        if self._gold_hash is None:
            self._gold_hash = str(self._ask("gold_hash"))
        return self._gold_hash

    def _from_task(self, what: str) -> bool:
        """Whether the env's ``what`` is ``CapabilityEnv``'s (the task's solution, formatted here: no Ask)."""
        return self.task is not None and what in self._episode_box().ready.actions_from_task

    def oracle_actions(self) -> list[str]:
        """The reference solution: formatted here from the task when it is ``CapabilityEnv``'s, else the box's."""
        if self._from_task("oracle_actions"):
            return format_steps(self.current_task.solution)
        return [str(step) for step in self._ask("oracle_actions")]

    def flawed_actions(self) -> list[str] | None:
        """The flawed solution: formatted here from the task when it is ``CapabilityEnv``'s, else the box's."""
        if self._from_task("flawed_actions"):
            flawed = self.current_task.flawed_solution
            return None if flawed is None else format_steps(flawed)
        value = self._ask("flawed_actions")
        return None if value is None else [str(step) for step in value]

    @property
    def state(self) -> Any:
        """The domain state of the episode, read from the box (a copy: changing it changes nothing there)."""
        if self.task is None:
            return None
        return self.domain.load_state(self._ask("state"))


def shown_transcript(messages: list[Message]) -> str:
    """``render_transcript`` of a box's messages as a person may see it: each message's block through
    :func:`~trace_envs.safe_text.shown` (the project's one sanitizer), so no escape sequence, carriage return or
    bidirectional override acts on the terminal, and a message with a newline is one quoted line (it cannot
    paint a row that looks like another speaker's); a tool-call message is one line per call (JSON: no newline)."""
    lines = []
    for message in messages:
        block = render_transcript([message])
        if block:
            lines += [shown(line) for line in block.split("\n")] if message.get("tool_calls") else [shown(block)]
    return "\n".join(lines)


def wire_action(action: Any) -> str | ParsedStep:
    """How an action crosses to the box: text as it is; anything else (a ``ToolCall``, a dict, a list of calls)
    parsed here by ``parse_action``, as the in-process env would parse it, with arguments that are not JSON
    shown by their ``repr`` (the tool's parameter check then refuses them in the box)."""
    if isinstance(action, str):
        return action
    parsed = parse_action(action)
    calls = [call.model_copy(update={"arguments": json_safe(call.arguments)}) for call in parsed.tool_calls]
    return ParsedStep(text=parsed.text, tool_calls=calls, errors=parsed.errors, content=parsed.content)


def json_safe(value: Any) -> Any:
    """``value`` as JSON would carry it (objects JSON cannot hold become their ``repr``)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def trusted_capability(declared: dict[str, Any]) -> Capability:
    """The capability a box declares, as data only: its name, description and hint. Its probe and flaw rules
    (functions, or ``"module:function"`` references this process would import) are the module's code, so
    they are left out: a boxed env has no offline probe or target flaw rule here."""
    return Capability.model_validate({key: declared[key] for key in ("name", "description", "hint") if key in declared})


def _domain(name: str) -> Any:
    """This process's own domain object of the name a box declares (a clear error for an unknown one)."""
    try:
        return registered_domain(name)
    except KeyError:
        raise ValueError(f"the boxed env declares domain {name!r}, which is not registered here") from None


def boxed_env_class(source: str, ready: Ready, *, origin: str = "", pool: BoxPool | None = None) -> type[BoxedEnv]:
    """A :class:`BoxedEnv` subclass for the module ``source``, declaring what its box's ``Ready`` said."""
    namespace: dict[str, Any] = {
        "source": source,
        "source_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "ready": ready,
        "origin": origin,
        "pool": pool,
        "declared_id": ready.env_id,
        "capability": trusted_capability(ready.capability),
        "domain": _domain(ready.domain),
        "max_turns": ready.max_turns,
        "tool_names": None if ready.tool_names is None else tuple(ready.tool_names),
        "policy": ready.policy,
        "instructions": ready.instructions,
        "__doc__": f"{ready.class_name}, played in a box (from {origin or 'its validated text'}).",
        "__module__": __name__,
    }
    return type(f"Boxed{ready.class_name}", (BoxedEnv,), namespace)


_REBUILT: dict[tuple[str, str, str], type[BoxedEnv]] = {}


def rebuilt_class(source: str, ready_json: str, origin: str) -> type[BoxedEnv]:
    """The boxed class of ``source`` as pickled (one class per text and declaration in each process)."""
    key = (hashlib.sha256(source.encode("utf-8")).hexdigest(), ready_json, origin)
    if key not in _REBUILT:
        _REBUILT[key] = boxed_env_class(source, Ready.model_validate_json(ready_json), origin=origin)
    return _REBUILT[key]


def pickled_class(cls: BoxedEnvType) -> Any:
    """How pickle writes a boxed class: its text, declaration and origin (its pool, per process, is not sent)."""
    ready = vars(cls).get("ready")
    if not isinstance(ready, Ready):
        return cls.__qualname__  # BoxedEnv itself: by name
    return rebuilt_class, (vars(cls)["source"], ready.model_dump_json(), vars(cls)["origin"])


copyreg.pickle(BoxedEnvType, pickled_class)
