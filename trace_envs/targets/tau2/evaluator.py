"""tau2-bench's evaluator: DB hash after replay vs gold, action, communicate, NL-assertion and env-assertion checks.

Follows tau2's ``evaluate_simulation`` (reference section 7, with 7.7's observed behaviour):

* predicted DB: the trajectory's *write* tool calls replayed in order on a fresh database (reads,
  generic tools and unknown names skipped; a failing write stays failed, whatever it changed before
  raising stays changed; the recorded ``error`` flag is never read);
* gold DB: every gold action executed on a fresh database, errors ignored;
* DB component = hashes equal, skipped (1) only when ``actions`` and ``env_assertions`` are both ``None``:
  an empty gold action list means the database must not change (upstream's ``is None`` test, not
  truthiness); ACTION = every gold action matched by some call (``compare_args``); COMMUNICATE =
  every info string in some non-blank assistant text (lower case, commas removed from the message
  only); NL_ASSERTION = an LLM judge (our own prompt) says every assertion is met; ENV_ASSERTION =
  each assertion function, run on the predicted DB, returns exactly its ``assert_value``;
* reward = product over the reward basis (DB and ENV_ASSERTION through the environment component);
  success = reward within 1e-6 of 1. Every component is reported, in or out of the basis.

Where upstream raises instead of scoring (a tool call without its tool message, a replayed write whose
output differs from the recorded one, an env-assertion function that fails or returns a non-bool), we
score and record the discrepancy in ``notes``. Export caveat: upstream's strict replay needs each
recorded tool message verbatim; ours are upstream's text with pydantic error links pinned to its 2.12
(``tau2_common.pin_pydantic_links``), while trajectories recorded before that pin carry the installed
pydantic's link (docs/tau2.md, "Exporting trajectories to tau2-bench").
Fresh databases come from journal restores of one loaded database (see ``Tau2DB``), never deep copies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core import ToolCall
from trace_envs.core.templates import render_template
from trace_envs.domains.tau2_common import Tau2DB, Tau2Domain, Tau2Toolset
from trace_envs.llm.base import ChatModel

from .tasks import PAPER_REWARD_BASIS, Action, RewardType, Tau2Task

Message = Mapping[str, Any]
"""A chat message as the evaluator reads it (any env's transcript entry, core's ``Message`` included)."""
STOP_TERMINATIONS = ("user_stop", "agent_stop")


class ActionCheck(BaseModel):
    action_id: str
    name: str
    matched: bool


class CommunicateCheck(BaseModel):
    info: str
    met: bool


class NLCheck(BaseModel):
    assertion: str
    met: bool
    reasoning: str = ""


class EnvAssertionCheck(BaseModel):
    func_name: str
    expected: bool
    met: bool


class Tau2Evaluation(BaseModel):
    """One scored trajectory. ``components`` holds the basis components; ``diagnostics`` every one computed."""

    task_id: str
    reward: float
    success: bool
    reward_basis: list[str]
    components: dict[str, float]
    diagnostics: dict[str, float | None]
    termination: str
    db_match: bool | None = None
    final_canonical_hash: str
    gold_canonical_hash: str | None = None
    action_checks: list[ActionCheck] = Field(default_factory=list)
    communicate_checks: list[CommunicateCheck] = Field(default_factory=list)
    nl_checks: list[NLCheck] = Field(default_factory=list)
    env_assertion_checks: list[EnvAssertionCheck] = Field(default_factory=list)
    replayed_writes: int = 0
    notes: list[str] = Field(default_factory=list)


def _gold_key(task: Tau2Task) -> str:
    """What a gold database depends on: the initial state and the gold actions (not only the task id,
    so an edited copy of a task never reuses the original's cached gold hash)."""
    actions = [[a.requestor, a.name, a.arguments] for a in task.gold_actions]
    return json.dumps([task.id, task.initial_state, actions], sort_keys=True, default=str)


def is_success(reward: float) -> bool:
    """tau2's success test: reward within 1e-6 of 1."""
    return 1 - 1e-6 <= reward <= 1 + 1e-6


def _parse_json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def iter_tool_calls(messages: Sequence[Message]) -> list[tuple[int, dict[str, Any]]]:
    """``(message index, call)`` for every tool call of every message (assistant or user), in order."""
    calls = []
    for index, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            calls.append((index, call))
    return calls


def communicate_checks(info: Sequence[str], messages: Sequence[Message]) -> list[CommunicateCheck]:
    """tau2's rule: ``s.lower() in content.lower().replace(",", "")`` over non-blank assistant texts."""
    texts = [
        message["content"].lower().replace(",", "")
        for message in messages
        if message.get("role") == "assistant" and isinstance(message.get("content"), str) and message["content"].strip()
    ]
    return [CommunicateCheck(info=s, met=any(s.lower() in text for text in texts)) for s in info]


def call_arguments(call: dict[str, Any]) -> dict[str, Any] | None:
    """A recorded call's arguments as a dict: absent/``null`` is ``{}``, a JSON object string is parsed,
    anything else is ``None`` (no arguments a tool could take)."""
    arguments = call.get("arguments")
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        arguments = _parse_json(arguments)
    return arguments if isinstance(arguments, dict) else None


def action_matches(gold: Action, call: dict[str, Any]) -> bool:
    """tau2's ``compare_with_tool_call``: same name, equal arguments restricted to ``compare_args``
    (``None``: the predicted call's keys; empty: the name alone). Both argument dicts are filtered to
    those keys, so a key one side lacks never equals the other side's explicit ``null``."""
    arguments = call_arguments(call)
    if call.get("name") != gold.name or arguments is None:
        return False
    keys = list(arguments) if gold.compare_args is None else gold.compare_args
    if not keys:
        return True
    predicted = {key: value for key, value in arguments.items() if key in keys}
    expected = {key: value for key, value in gold.arguments.items() if key in keys}
    return predicted == expected


def render_conversation(messages: Sequence[Message]) -> str:
    """The trajectory as ``role: content`` lines (tool calls in JSON form), for the NL judge."""
    lines = []
    for message in messages:
        role = message.get("role", "?")
        if role == "system":
            continue
        content = message.get("content")
        if message.get("tool_calls"):
            calls = [{"name": c.get("name"), "arguments": c.get("arguments")} for c in message["tool_calls"]]
            content = f"{content or ''}\n[tool calls] {json.dumps(calls, ensure_ascii=False)}".strip()
        lines.append(f"{role}: {content}")
    return "\n".join(lines)


def judge_nl_assertions(judge: ChatModel, messages: Sequence[Message], assertions: Sequence[str]) -> list[NLCheck]:
    """Ask ``judge`` (temperature 0) whether each expected outcome is met; unparseable answers count as unmet."""
    system = render_template("prompts/tau2_nl_judge_system.jinja")
    user = render_template(
        "prompts/tau2_nl_judge_user.jinja", conversation=render_conversation(messages), assertions=list(assertions)
    )
    response = judge.chat([{"role": "system", "content": system}, {"role": "user", "content": user}], temperature=0.0)
    text = response.content or ""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    results: list[Any] = []
    if match:
        parsed = _parse_json(match.group(0))
        if isinstance(parsed, dict) and isinstance(parsed.get("results"), list):
            results = parsed["results"]
    checks = []
    for position, assertion in enumerate(assertions):
        item = results[position] if position < len(results) and isinstance(results[position], dict) else None
        met = bool(item and item.get("metExpectation") is True)
        reasoning = str(item.get("reasoning", "")) if item else "judge gave no verdict for this outcome"
        checks.append(NLCheck(assertion=assertion, met=met, reasoning=reasoning))
    return checks


class Tau2Evaluator:
    """Scores trajectories of one domain's tasks against one database (reset by journal, never copied).

    ``db`` must be at its pristine state (the state every ``restore()`` returns to); the evaluator
    leaves it there. ``judge`` is needed only when NL_ASSERTION is in the basis of a task that has
    NL assertions.
    """

    def __init__(self, domain: Tau2Domain[Any], db: Tau2DB, judge: ChatModel | None = None):
        if not isinstance(domain.toolset, Tau2Toolset):
            raise TypeError(f"domain {domain.name!r} does not use tau2's calling conventions (Tau2Toolset)")
        self.domain = domain
        self.toolset: Tau2Toolset = domain.toolset
        self.db = db
        self.judge = judge
        db.restore()
        self.initial_hash = domain.state_hash(db)
        self._gold: dict[str, str] = {}

    # ----- databases -----------------------------------------------------------------------------------------
    def _initialise(self, task: Tau2Task) -> None:
        state = task.initial_state or {}
        if state.get("initialization_data"):
            raise ValueError(
                f"task {task.id}: initial_state.initialization_data is not supported (none in airline/retail)"
            )
        for action in state.get("initialization_actions") or []:
            self.toolset.invoke(self.db, ToolCall(name=action["func_name"], arguments=action.get("arguments") or {}))

    def replay_gold(self, task: Tau2Task) -> tuple[str, list[tuple[Action, str, bool]]]:
        """Run the gold actions on a fresh database: its canonical hash and each ``(action, content, error)``."""
        self.db.restore()
        try:
            self._initialise(task)
            outputs = []
            for action in task.gold_actions:
                result = self.toolset.invoke(self.db, ToolCall(name=action.name, arguments=action.arguments))
                outputs.append((action, result.content, result.error))
            digest = self.domain.state_hash(self.db)
        finally:
            self.db.restore()
        self._gold[_gold_key(task)] = digest
        return digest, outputs

    def gold_hash(self, task: Tau2Task) -> str:
        """Canonical hash of the gold database of ``task`` (cached)."""
        key = _gold_key(task)
        if key not in self._gold:
            self.replay_gold(task)
        return self._gold[key]

    def replay_trajectory(self, task: Tau2Task, messages: Sequence[Message]) -> tuple[str, int, list[str]]:
        """Replay the trajectory's write calls on a fresh database: canonical hash, writes replayed, notes."""
        digest, replayed, notes, _ = self._replay_predicted(task, messages)
        return digest, replayed, notes

    def _replay_predicted(
        self, task: Tau2Task, messages: Sequence[Message]
    ) -> tuple[str, int, list[str], list[EnvAssertionCheck]]:
        """The predicted database (initial state, then the trajectory's writes): its hash, the writes
        replayed, notes, and the task's env assertions checked on it (upstream runs them there too)."""
        recorded: dict[str, Message] = {}
        for message in messages:
            if message.get("role") == "tool" and "id" in message:
                recorded.setdefault(str(message["id"]), message)
        notes: list[str] = []
        replayed = 0
        self.db.restore()
        try:
            self._initialise(task)
            for _, call in iter_tool_calls(messages):
                name = call.get("name")
                call_id = str(call.get("id", ""))
                tool_message = recorded.get(call_id)
                if tool_message is None:
                    notes.append(f"tool call {call_id!r} ({name}) has no tool message with that id (upstream raises)")
                if not isinstance(name, str) or name not in self.toolset or not self.toolset.mutates(name):
                    continue
                arguments = call_arguments(call) or {}
                result = self.toolset.invoke(self.db, ToolCall(name=name, arguments=arguments, id=call_id))
                replayed += 1
                if tool_message is not None and _parse_json(result.content) != _parse_json(tool_message.get("content")):
                    notes.append(
                        f"replayed {name} ({call_id}) returned a different output than recorded (upstream raises)"
                    )
            digest = self.domain.state_hash(self.db)
            checks = self._env_assertions(task, notes)
        finally:
            self.db.restore()
        return digest, replayed, notes, checks

    def _env_assertions(self, task: Tau2Task, notes: list[str]) -> list[EnvAssertionCheck]:
        """Each env assertion on the current database: met iff the function returns exactly ``assert_value``.

        Upstream raises where the function fails or returns a non-bool (a truthy model is not ``True``);
        we count the assertion as not met and say so in ``notes``.
        """
        checks = []
        for assertion in (task.evaluation_criteria.env_assertions or []) if task.evaluation_criteria else []:
            label = f"env assertion {assertion.func_name}"
            met = False
            if assertion.env_type != "assistant":
                notes.append(f"{label}: env_type {assertion.env_type!r} has no toolkit here (upstream raises)")
            else:
                try:
                    value = self.toolset.call(self.db, assertion.func_name, assertion.arguments)
                except Exception as exc:
                    notes.append(f"{label} raised {type(exc).__name__}: {exc} (upstream raises)")
                else:
                    if isinstance(value, bool):
                        met = value == assertion.assert_value
                    else:
                        notes.append(f"{label} returned {type(value).__name__}, not bool (upstream raises)")
            checks.append(EnvAssertionCheck(func_name=assertion.func_name, expected=assertion.assert_value, met=met))
        return checks

    # ----- scoring -------------------------------------------------------------------------------------------
    def evaluate(
        self,
        task: Tau2Task,
        messages: Sequence[Message],
        reward_basis: Sequence[RewardType] | None = PAPER_REWARD_BASIS,
        termination: str = "user_stop",
    ) -> Tau2Evaluation:
        """Score ``messages`` (chat dicts) for ``task``; ``reward_basis=None`` uses the task's own basis."""
        criteria = task.evaluation_criteria
        basis: list[str] = list(
            reward_basis if reward_basis is not None else (criteria.reward_basis if criteria else [])
        )
        final_hash, replayed, notes, assertion_checks = self._replay_predicted(task, messages)
        diagnostics: dict[str, float | None] = dict.fromkeys(
            ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
        )
        evaluation = Tau2Evaluation(
            task_id=task.id,
            reward=0.0,
            success=False,
            reward_basis=basis,
            components={},
            diagnostics=diagnostics,
            termination=termination,
            final_canonical_hash=final_hash,
            replayed_writes=replayed,
            notes=notes,
        )
        if termination not in STOP_TERMINATIONS:
            evaluation.notes.append(f"Simulation terminated prematurely. Termination reason: {termination}")
            evaluation.components = dict.fromkeys(basis, 0.0)
            return evaluation
        if criteria is None:
            evaluation.reward, evaluation.success = 1.0, True
            evaluation.components = dict.fromkeys(basis, 1.0)
            evaluation.notes.append("task has no evaluation criteria")
            return evaluation

        # environment: DB hash and env assertions. Upstream skips the DB only when both lists are
        # absent (None); an empty gold action list means "the database must not change".
        if criteria.actions is None and criteria.env_assertions is None:
            diagnostics["DB"] = 1.0
        else:
            gold = self.gold_hash(task)
            evaluation.gold_canonical_hash = gold
            evaluation.db_match = gold == final_hash
            diagnostics["DB"] = float(evaluation.db_match)
        evaluation.env_assertion_checks = assertion_checks
        diagnostics["ENV_ASSERTION"] = float(all(c.met for c in assertion_checks))

        # actions
        calls = [call for _, call in iter_tool_calls(messages)]
        evaluation.action_checks = [
            ActionCheck(action_id=a.action_id, name=a.name, matched=any(action_matches(a, c) for c in calls))
            for a in criteria.actions or []
        ]
        diagnostics["ACTION"] = float(all(c.matched for c in evaluation.action_checks))

        # communicate
        evaluation.communicate_checks = communicate_checks(criteria.communicate_info or [], messages)
        diagnostics["COMMUNICATE"] = float(all(c.met for c in evaluation.communicate_checks))

        # NL assertions (LLM judge), only when asked for or a judge is available
        if not criteria.nl_assertions:
            diagnostics["NL_ASSERTION"] = 1.0
        elif self.judge is not None:
            evaluation.nl_checks = judge_nl_assertions(self.judge, messages, criteria.nl_assertions)
            diagnostics["NL_ASSERTION"] = float(all(c.met for c in evaluation.nl_checks))
        elif "NL_ASSERTION" in basis:
            raise ValueError(
                f"task {task.id}: the reward basis includes NL_ASSERTION but no judge model was given "
                "(pass judge=<ChatModel>, or use a basis without NL_ASSERTION such as DB,COMMUNICATE)"
            )

        reward = 1.0
        if "DB" in basis or "ENV_ASSERTION" in basis:
            environment = 1.0
            if "DB" in basis:
                environment *= diagnostics["DB"] or 0.0
            if "ENV_ASSERTION" in basis:
                environment *= diagnostics["ENV_ASSERTION"] or 0.0
            reward *= environment
        for name in ("ACTION", "NL_ASSERTION", "COMMUNICATE"):
            if name in basis:
                reward *= diagnostics[name] or 0.0
        evaluation.diagnostics = diagnostics
        evaluation.components = {name: float(diagnostics[name] or 0.0) for name in basis}
        evaluation.reward = reward
        evaluation.success = is_success(reward)
        return evaluation


def gold_trajectory(task: Tau2Task, outputs: Sequence[tuple[Action, str, bool]] | None = None) -> list[Message]:
    """A trajectory that performs the task's gold actions and says every communicate-info string.

    ``outputs`` (from :meth:`Tau2Evaluator.replay_gold`) fills in the tool messages; without it the tool
    messages are empty strings (fine for scoring: recorded outputs are only compared, never trusted).
    """
    messages: list[Message] = [{"role": "assistant", "content": "Hi! How can I help you today?"}]
    messages.append({"role": "user", "content": "I need help with my request."})
    for index, action in enumerate(task.gold_actions):
        call_id = f"gold_{index}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "name": action.name, "arguments": action.arguments}],
            }
        )
        content, error = ("", False) if outputs is None else (outputs[index][1], outputs[index][2])
        messages.append({"role": "tool", "id": call_id, "content": content, "error": error})
    info = (task.evaluation_criteria.communicate_info or []) if task.evaluation_criteria else []
    if info:
        messages.append({"role": "assistant", "content": "To confirm: " + "; ".join(info) + "."})
    messages.append({"role": "user", "content": "Thanks! ###STOP###"})
    return messages
