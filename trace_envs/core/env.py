"""``CapabilityEnv``: the Gymnasium contract every capability environment implements.

A subclass declares its capability, its domain and ``max_turns`` and implements
``generate(rng) -> Task``. The base class does the rest: seeding, the conversation with a scripted
user, running the domain's tools on the env's own state, and the hash-based verifier.
"""

from __future__ import annotations

import re as _re
from abc import abstractmethod
from collections import OrderedDict
from functools import lru_cache
from random import Random
from typing import Any, ClassVar, Generic, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from .actions import format_tool_call
from .conversation import ConversationEnv
from .domain import Domain
from .spaces import clip_text
from .task import Capability, Task, Verdict
from .templates import render_template
from .tools import ToolCall, Toolset
from .user import ScriptedUser, User, check_replies, model_user

_GOLD_CACHE: OrderedDict[tuple[str, str, int], str] = OrderedDict()
"""Gold hashes by (env class, knobs, task seed): a task is a pure function of these (the determinism
contract the property suite checks), and GRPO replays each seed K times."""
_GOLD_CACHE_SIZE = 16384


class NoKnobs(BaseModel):
    """An env without difficulty knobs."""

    model_config = ConfigDict(extra="forbid")


KnobsT = TypeVar("KnobsT", bound=BaseModel)
"""The knobs model of a capability env: ``class MyEnv(CapabilityEnv[MyKnobs])`` types ``self.knobs``."""


def normalize_fact_text(text: str) -> str:
    """What fact matching compares: lower case, commas dropped, whitespace collapsed (as tau2 does)."""
    return _re.sub(r"\s+", " ", text.lower().replace(",", "")).strip()


@lru_cache(maxsize=4096)
def fact_pattern(fact: str) -> _re.Pattern[str]:
    """tau2's substring match on normalised text, except that numbers match only whole numbers: a fact
    that starts with a digit may not follow a digit, point or minus sign, and one that ends with a
    digit may not precede a digit (so "23 days" is not told by "-823 days", nor "85" by "850")."""
    text = normalize_fact_text(fact)
    left = r"(?<![0-9.\-])" if text[:1].isdigit() else ""
    right = r"(?![0-9])" if text[-1:].isdigit() else ""
    return _re.compile(left + _re.escape(text) + right)


@lru_cache(maxsize=256)
def render_system_prompt(instructions: str | None, policy: str) -> str:
    """The agent's system message (instructions + policy), rendered once per distinct pair; ``None``
    instructions are tau2-bench's agent's (``templates/prompts/tau2_agent_instruction.jinja``)."""
    if instructions is None:
        instructions = render_template("prompts/tau2_agent_instruction.jinja")
    return render_template("prompts/agent_system.jinja", instructions=instructions, policy=policy)


class CapabilityEnv(ConversationEnv, Generic[KnobsT]):
    """A seeded, verifiable conversation with tools over a target domain's state.

    Observations and actions are text. ``reset(seed=s)`` builds the task from ``random.Random(s)``
    alone. ``step(action)`` runs the action's tool calls or sends its text to the user. Reward is
    the verifier's when the conversation ends (user or agent stop), 0 on truncation.

    ``class MyEnv(CapabilityEnv[MyKnobs])`` makes ``MyKnobs`` the constructor's knobs model (``Knobs``)
    and types ``self.knobs`` as ``MyKnobs``.
    """

    capability: ClassVar[Capability]
    """What the env trains: its name, description, and optionally its probe and flaw rules."""
    domain: Domain[Any]
    """The target domain whose tools, state model and policy the env uses (for variants, the default one)."""
    max_turns: int = 30
    """Agent actions before the episode is truncated (reward 0)."""
    tool_names: ClassVar[tuple[str, ...] | None] = None
    """Tools of the domain offered to the agent, named in any order: the agent sees them in the domain's own order
    (``None``: all of them)."""
    policy: ClassVar[str | None] = None
    """Policy text shown to the agent (``None``: the domain's)."""
    instructions: ClassVar[str | None] = None
    """The agent instruction before the policy in the system message (``None``: tau2-bench's agent's, so that
    prompts look like the target's)."""
    Knobs: ClassVar[type[BaseModel]] = NoKnobs
    """Pydantic model of the constructor's difficulty knobs (extra keys forbidden); set from the class's
    type argument, ``CapabilityEnv[MyKnobs]``."""
    knobs: KnobsT
    """The validated knobs of this instance."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Knobs" not in cls.__dict__:
            declared = _knobs_argument(cls)
            if declared is not None:
                cls.Knobs = declared

    def __init__(self, seed: int | None = None, render_mode: str | None = None, user_model: Any = None, **knobs: Any):
        super().__init__(render_mode=render_mode)
        self.user_model = user_model
        """A chat model that plays the user when given (through the registered user factory, by default
        :class:`trace_envs.llm_user.LLMUser`); ``None``: the task's scripted user."""
        try:
            self.knobs = cast(KnobsT, self.Knobs(**knobs))
        except ValidationError as exc:
            raise ValueError(f"invalid options for {type(self).__name__}: {exc}") from None
        self._cache_key = (f"{type(self).__module__}.{type(self).__qualname__}", self.knobs.model_dump_json())
        self.domain = self.choose_domain()
        self.toolset: Toolset = (
            self.domain.toolset if self.tool_names is None else self.domain.toolset.subset(self.tool_names)
        )
        self.tool_schemas: list[dict[str, Any]] = self.toolset.schemas()
        self._pending_seed = seed
        self.task: Task | None = None
        self.task_seed: int | None = None
        self._gold_hash: str | None = None

    # ----- what subclasses implement -------------------------------------------------------
    @abstractmethod
    def generate(self, rng: Random) -> Task:
        """Build one task using only ``rng`` (never global RNGs, ``hash()``, set order or time)."""

    def choose_domain(self) -> Domain[Any]:
        """The domain of this instance, chosen after the knobs are validated (override for variants).

        For example ``return AIRLINE if self.knobs.variant == "airline" else RETAIL``."""
        return self.domain

    def make_user(self, task: Task) -> User:
        """The simulated user of a task: played by ``user_model`` if the env was given one, else scripted
        and deterministic."""
        if self.user_model is not None:
            return model_user(self.user_model, task)
        return ScriptedUser(task.user)

    # ----- the Gymnasium API -----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        if seed is None and self._pending_seed is not None:
            seed = self._pending_seed
        self._pending_seed = None
        super().reset(seed=seed)
        task_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        task = self.generate(Random(task_seed))
        problem = check_replies(task)
        if problem is not None:
            raise RuntimeError(f"{type(self).__name__}: seed {task_seed}: {problem}")
        if not task.task_id:
            task = task.model_copy(update={"task_id": f"{self.capability.name}-{task_seed}"})
        self.task, self.task_seed = task, task_seed
        self.state = self.domain.load_state(task.initial_state)
        self.user = self.make_user(task)
        self._gold_hash = None
        opening = self.user.start()
        self.start_conversation(
            [{"role": "system", "content": self.system_prompt()}, {"role": "user", "content": opening}]
        )
        info = {
            "task_id": task.task_id,
            "seed": task_seed,
            "capability": self.capability.name,
            "tools": self.tool_schemas,
            "policy": self.policy_text,
            "messages": list(self.messages),
        }
        return clip_text(opening), info

    def finish(self, terminated: bool) -> tuple[float, dict[str, Any]]:
        """The verifier's reward if the conversation ended (user or agent stop), 0 if truncated."""
        verdict = self.verify()
        return (verdict.reward if terminated else 0.0), {"verdict": verdict.model_dump()}

    # ----- verification ------------------------------------------------------------------------
    def gold_hash(self) -> str:
        """Hash of the initial state with the reference solution's tool calls replayed (cached per
        env class, knobs and seed)."""
        if self._gold_hash is None:
            key = (*self._cache_key, int(self.task_seed or 0))
            cached = _GOLD_CACHE.get(key)
            if cached is None:
                cached = self.replay_reference()
                _GOLD_CACHE[key] = cached
                if len(_GOLD_CACHE) > _GOLD_CACHE_SIZE:
                    _GOLD_CACHE.popitem(last=False)
            self._gold_hash = cached
        return self._gold_hash

    def clear_gold_cache(self) -> None:
        """Forget every cached gold hash (this env's and the process's), e.g. to time a cold ``verify()``."""
        self._gold_hash = None
        _GOLD_CACHE.clear()

    def replay_reference(self) -> str:
        """Replay the reference on a fresh copy of the initial state and return its hash (uncached);
        exactly the steps listed in ``task.expected_errors`` must fail."""
        task = self.current_task
        expected = set(task.expected_errors)
        gold = self.domain.load_state(task.initial_state)
        for index, step in enumerate(task.solution):
            if isinstance(step, ToolCall):
                result = self.toolset.invoke(gold, step)
                if result.error != (index in expected):
                    outcome = "failed" if result.error else "should fail but succeeded"
                    raise RuntimeError(
                        f"{type(self).__name__}: reference solution step {index} ({step.name} with "
                        f"{step.arguments}) {outcome} on seed {self.task_seed} (task {task.task_id}): {result.content}"
                    )
        return self.domain.state_hash(gold)

    def facts_told(self) -> dict[str, bool]:
        """Which required facts appear in the agent's messages to the user (see :func:`fact_pattern`),
        counting only messages sent after every required read (see :meth:`answer_start`)."""
        start = self.answer_start()
        said = self._said(len(self.messages) if start is None else start)
        return {fact: fact_pattern(fact).search(said) is not None for fact in self.current_task.required_facts}

    def facts_contradicted(self) -> dict[str, bool]:
        """Which forbidden facts (outcomes other than the true one) appear in any of the agent's messages."""
        said = self._said(0)
        return {fact: fact_pattern(fact).search(said) is not None for fact in self.current_task.forbidden_facts}

    def _said(self, start: int) -> str:
        """The agent's messages to the user from message ``start`` on, normalised for fact matching."""
        return " ".join(
            normalize_fact_text(m["content"] or "")
            for m in self.messages[start:]
            if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls") and not m.get("invalid")
        )

    def reads_done(self) -> dict[str, bool]:
        """For each of the task's required reads (keyed by its action string), whether it succeeded (before the
        first call of a ``Task.reads_before`` tool, when the task names any)."""
        calls = self._successful_calls()
        acting = self.current_task.reads_before
        calls = calls[: next((i for i, (name, _, _) in enumerate(calls) if name in acting), len(calls))]
        return {
            format_tool_call(read): any(_same_call(read, name, arguments) for name, arguments, _ in calls)
            for read in self.current_task.required_reads
        }

    def answer_start(self) -> int | None:
        """Index of the first message after every required read has succeeded (0 if the task requires
        none; ``None`` if one never did): only what the agent says from there on can tell a fact."""
        pending = list(self.current_task.required_reads)
        if not pending:
            return 0
        for name, arguments, after in self._successful_calls():
            pending = [read for read in pending if not _same_call(read, name, arguments)]
            if not pending:
                return after
        return None

    def _successful_calls(self) -> list[tuple[str, Any, int]]:
        """(name, arguments, index of the message after its result) of each tool call that succeeded."""
        calls = []
        for index, message in enumerate(self.messages):
            if message["role"] != "assistant" or not message.get("tool_calls"):
                continue
            after = index + 1 + len(message["tool_calls"])
            for call, result in zip(message["tool_calls"], self.messages[index + 1 : after], strict=False):
                if result.get("role") == "tool" and not result.get("error"):
                    calls.append((call["name"], call["arguments"], after))
        return calls

    def verify(self) -> Verdict[Any]:
        """Success iff the state hash equals the gold hash, every required read was made, every required fact
        was told after them and no forbidden fact was told at all."""
        state_hash = self.domain.state_hash(self.state)
        gold = self.gold_hash()
        facts = self.facts_told()
        contradicted = self.facts_contradicted()
        reads = self.reads_done()
        hash_match = state_hash == gold
        communicated = all(facts.values()) and not any(contradicted.values())
        success = hash_match and communicated and all(reads.values())
        return Verdict[None](
            reward=1.0 if success else 0.0,
            success=success,
            hash_match=hash_match,
            state_hash=state_hash,
            gold_hash=gold,
            facts_told=facts,
            facts_contradicted=contradicted,
            reads_done=reads,
            components={"db": float(hash_match), "communicate": float(communicated)},
        )

    # ----- helpers for policies, tests and people ------------------------------------------------
    def oracle_actions(self) -> list[str]:
        """The reference solution of the current task, as action strings."""
        return format_steps(self.current_task.solution)

    def flawed_actions(self) -> list[str] | None:
        """The current task's flawed solution (its capability skipped) as action strings; ``None`` if it has none."""
        flawed = self.current_task.flawed_solution
        return None if flawed is None else format_steps(flawed)

    @property
    def policy_text(self) -> str:
        """The policy the agent sees (override to add rules to the domain's, e.g. an addendum)."""
        return self.policy if self.policy is not None else self.domain.policy

    def system_prompt(self) -> str:
        return render_system_prompt(self.instructions, self.policy_text)

    @property
    def current_task(self) -> Task:
        """The task of the current episode (a ``RuntimeError`` before the first ``reset()``)."""
        if self.task is None:
            raise RuntimeError("call reset() first: there is no current task")
        return self.task


def defined_envs(module: Any) -> list[type[CapabilityEnv[Any]]]:
    """The concrete ``CapabilityEnv`` subclasses that ``module`` defines (not the ones it imports): what the registry
    registers of a module of env code, and what a box runs of the module it was given."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, CapabilityEnv)
        and value.__module__ == module.__name__
        and not getattr(value, "__abstractmethods__", None)
    ]


def format_steps(steps: list[ToolCall | str]) -> list[str]:
    """Solution steps as action strings: tool calls in JSON form, messages as they are."""
    return [format_tool_call(s) if isinstance(s, ToolCall) else s for s in steps]


def _knobs_argument(cls: type) -> type[BaseModel] | None:
    """The knobs model a class names as its base's type argument (``CapabilityEnv[MyKnobs]``), if any."""
    for base in cls.__dict__.get("__orig_bases__", ()):
        origin = get_origin(base)
        if isinstance(origin, type) and issubclass(origin, CapabilityEnv):
            for argument in get_args(base):
                if isinstance(argument, type) and issubclass(argument, BaseModel):
                    return argument
    return None


def _same_call(read: ToolCall, name: str, arguments: Any) -> bool:
    """Whether a call the agent made is this read: the same name and equal arguments."""
    return read.name == name and read.arguments == arguments
