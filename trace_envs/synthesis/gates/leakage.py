"""The leakage guard: a synthesised module may not contain ids or instruction text of the target's
evaluation tasks (training on them would inflate the evaluation it is judged by).

It indexes the evaluation tasks once (tau2: the user's ``tasks.json``; device: the built-in
scenarios of the ``test`` split) and looks for them in the module's string and number literals, and in
what its string expressions fold to (concatenations, f-strings, joins: :mod:`.constant_text`); and
:func:`scan_generated_texts` looks for them in the texts an env generates (openings, task ids, the policy and
system prompt, and the replies along the reference solution: :func:`reset_texts`, :func:`played_texts`):

- ids (order, user, reservation, product, payment-method ids) as whole tokens;
- task ids given as ``task_id=`` literals;
- instruction sentences of six or more words, and any run of ten words copied from an instruction.

In use, the spot checks (:mod:`trace_envs.core.spot_checks`) scan a boxed env's text on a share of the seeds a
run plays the same way, with the same index (:func:`generated_leak`, :func:`domain_index`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from trace_envs.registry.targets import LeakageRecords, TargetDataError, target, target_of_domain

from .ast_names import parse_module, string_literals
from .constant_text import folded_texts
from .context import GateContext, named_gate
from .reports import Finding, GateResult

SENTENCE_WORDS = 6
SHINGLE_WORDS = 10
TEXT_ID = re.compile(r"#W\d{7}|\b[a-z]+(?:_[a-z]+)*_\d{3,}\b|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b")
"""Ids written inside instruction text: retail orders, snake_case ids with a number, reservation codes."""
DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}")
TOKEN = re.compile(r"[#A-Za-z0-9_]+")
SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
FIX = "Generate ids, names and wording from rng in generate(); never copy the target's evaluation tasks."


def normalize(text: str) -> str:
    """Lower case, every run of non-alphanumerics one space (so punctuation and layout do not hide a copy)."""
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def is_id(value: str) -> bool:
    """An argument value that identifies a record (not a date, amount or short number)."""
    if len(value) < 6 or any(c.isspace() for c in value) or not any(c.isdigit() for c in value):
        return False
    if DATE_LIKE.match(value):
        return False
    if re.fullmatch(r"[\d.]+", value):
        return "." not in value and len(value) >= 7
    return True


@dataclass
class EvaluationIndex:
    """What of the evaluation tasks must not appear in a module, each mapped to where it comes from."""

    source: str
    ids: dict[str, str] = field(default_factory=dict)
    task_ids: dict[str, str] = field(default_factory=dict)
    sentences: dict[str, str] = field(default_factory=dict)
    shingles: dict[tuple[str, ...], str] = field(default_factory=dict)

    def add_text(self, text: str | None, where: str) -> None:
        if not text:
            return
        for match in TEXT_ID.findall(text):
            self.ids.setdefault(match, where)
        for sentence in SENTENCE_SPLIT.split(text):
            normal = normalize(sentence)
            if len(normal.split()) >= SENTENCE_WORDS:
                self.sentences.setdefault(normal, where)
        words = normalize(text).split()
        for start in range(len(words) - SHINGLE_WORDS + 1):
            self.shingles.setdefault(tuple(words[start : start + SHINGLE_WORDS]), where)

    def add_values(self, value: Any, where: str) -> None:
        """Every string leaf of ``value`` that looks like an id."""
        if isinstance(value, str):
            if is_id(value):
                self.ids.setdefault(value, where)
        elif isinstance(value, dict):
            for item in value.values():
                self.add_values(item, where)
        elif isinstance(value, list | tuple):
            for item in value:
                self.add_values(item, where)

    def drop_common(self, text: str) -> None:
        """Forget sentences and word runs that also appear in ``text`` (the domain's own policy, say)."""
        normal = f" {normalize(text)} "
        self.sentences = {s: w for s, w in self.sentences.items() if f" {s} " not in normal}
        self.shingles = {s: w for s, w in self.shingles.items() if f" {' '.join(s)} " not in normal}


@lru_cache(maxsize=8)
def _index_of(records: LeakageRecords) -> EvaluationIndex:
    """The index of a target's evaluation tasks (cached per records object: a target returns the same one
    for the same data)."""
    index = EvaluationIndex(source=records.source)
    for task in records.tasks:
        for name in task.ids:
            index.ids[name] = task.where
        for task_id in task.task_ids:
            index.task_ids[task_id] = task.where
        for value in task.values:
            index.add_values(value, task.where)
        for text in task.texts:
            index.add_text(text, task.where)
    if records.common:
        index.drop_common(records.common)
    return index


def evaluation_index(context: GateContext) -> EvaluationIndex:
    """The index of ``context.target``'s evaluation tasks (a target with a data folder reads
    ``context.data`` or the target's environment variable, e.g. $TRACE_ENVS_TAU2_DATA)."""
    return _index_of(target(context.target).leakage(context.data))


def domain_index(domain: str) -> EvaluationIndex | None:
    """The index of the evaluation tasks of the target that plays ``domain`` (its data from its environment
    variable, e.g. $TRACE_ENVS_TAU2_DATA), for scans in use; None where no target does or its data is not here."""
    found = target_of_domain(domain)
    if found is None:
        return None
    try:
        return _index_of(found.leakage(None))
    except TargetDataError:
        return None


def generated_leak(env: Any, seed: int, paced: Iterable[tuple[str, str]] = ()) -> str | None:
    """The spot checks' text scan in use (``import trace_envs`` registers it): a boxed env's text on ``seed`` (its
    reset's, the replies along its reference solution, and ``paced``, the replies of its episodes played at a
    model's pace) scanned as validation scans its seeds; the first leak, or None (a trusted env, or no target's
    data here to compare with)."""
    from trace_envs.box import BoxedEnv

    index = domain_index(env.domain.name) if isinstance(env, BoxedEnv) else None
    if index is None:
        return None
    texts = [*reset_texts(env, [seed]), *played_texts(env, [seed])]
    findings = scan_generated_texts([*texts, *replies_without_state(env, paced)], index)
    return f"showed evaluation data ({findings[0].message})" if findings else None


@named_gate("leakage")
def leakage_gate(source: str, context: GateContext) -> GateResult:
    """Gate: no ids, task ids or instruction text of the target's evaluation tasks in the module."""
    try:
        index = evaluation_index(context)
    except TargetDataError as exc:
        finding = Finding(
            rule="no-evaluation-data",
            message=f"the leakage guard needs the {context.target} evaluation tasks to compare against: {exc}.",
            fix="Pass data=DIR (trace-envs validate --data DIR) or set the target's data variable "
            "(TRACE_ENVS_TAU2_DATA for tau2).",
        )
        return GateResult(gate="leakage", status="failed", findings=[finding])
    findings = find_leaks(parse_module(source), index)
    return GateResult(
        gate="leakage",
        status="failed" if findings else "passed",
        findings=findings,
        details={
            "note": f"compared with {index.source}",
            "ids": len(index.ids),
            "sentences": len(index.sentences),
            "shingles": len(index.shingles),
        },
    )


def _literals(tree: ast.AST) -> Iterator[tuple[ast.expr, str]]:
    """String literals (f-strings whole), integer literals as text, and what string expressions fold to
    (:func:`~.constant_text.folded_texts`: an id split across literals is seen whole)."""
    yield from string_literals(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            yield node, str(node.value)
    yield from folded_texts(tree)


def leak_in_text(text: str, index: EvaluationIndex) -> tuple[str, str, str] | None:
    """The first evaluation id, instruction sentence or ten-word run in ``text``, as (what, shown, where)."""
    leaked = next((token for token in TOKEN.findall(text) if token in index.ids), None)
    if leaked is not None:
        return f"the id {leaked!r} is copied", leaked, index.ids[leaked]
    normal = normalize(text)
    if len(normal.split()) < SENTENCE_WORDS:
        return None
    padded = f" {normal} "
    sentence = next((s for s in index.sentences if f" {s} " in padded), None)
    if sentence is not None:
        return f"the sentence {sentence!r} is copied", sentence, index.sentences[sentence]
    words = normal.split()
    for start in range(len(words) - SHINGLE_WORDS + 1):
        shingle = tuple(words[start : start + SHINGLE_WORDS])
        if shingle in index.shingles:
            text_run = " ".join(shingle)
            return f"the words {text_run!r} are copied", text_run, index.shingles[shingle]
    return None


def find_leaks(tree: ast.AST, index: EvaluationIndex) -> list[Finding]:
    """One finding per literal (or folded string expression) that holds evaluation ids or text (the first
    match in it)."""
    findings: dict[tuple[int | None, str], Finding] = {}

    def report(node: ast.AST, what: str, shown: str, where: str) -> None:
        line = getattr(node, "lineno", None)
        findings.setdefault(
            (line, shown),
            Finding(
                rule="leaked-evaluation-data", line=line, subject=shown[:60], message=f"{what} from {where}.", fix=FIX
            ),
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "task_id" and isinstance(node.value, ast.Constant):
            value = str(node.value.value)
            if value in index.task_ids:
                report(node.value, f"task_id {value!r} is the id of a task", value, index.task_ids[value])
    for node, text in _literals(tree):
        leak = leak_in_text(text, index)
        if leak is not None:
            report(node, *leak)
    return sorted(findings.values(), key=lambda f: f.line or 0)


def reset_texts(env: Any, seeds: Iterable[int]) -> list[tuple[str, str]]:
    """``(where, text)`` for what ``env`` generates on each seed's reset, through the Gymnasium API only (so
    a boxed env's proxy serves as well): the user's opening (the observation), ``info["task_id"]``, and the
    policy and system prompt the agent reads (issue 34: an evaluation task's user id in the policy text reached
    the system prompt of every episode; each distinct text is listed once)."""
    texts: list[tuple[str, str]] = []
    seen: set[str] = set()
    for seed in seeds:
        observation, info = env.reset(seed=seed)
        texts.append((f"seed {seed}: opening", str(observation)))
        if info.get("task_id"):
            texts.append((f"seed {seed}: task_id", str(info["task_id"])))
        for where, text in _prompt_texts(info):
            if text not in seen:
                seen.add(text)
                texts.append((f"seed {seed}: {where}", text))
    return texts


def _prompt_texts(info: dict[str, Any]) -> list[tuple[str, str]]:
    """The policy text and every system or user message of the reset's message list."""
    texts = [("policy", str(info.get("policy") or ""))]
    for number, message in enumerate(info.get("messages") or []):
        if isinstance(message, dict) and message.get("content"):
            texts.append((f"{message.get('role', 'message')} message {number}", str(message["content"])))
    return texts


def played_texts(env: Any, seeds: Iterable[int]) -> list[tuple[str, str]]:
    """``(where, text)`` for every reply the env gives while its reference solution is played on each seed (tool
    results and the user's answers): text generated in use, which a trained agent reads, as the openings are.

    A reply shows records of the task's own state, and a target's reference data is in both that state and its
    evaluation tasks (airline flight numbers such as ``HAT003``): tokens that the task's initial state holds are
    left out of each reply, so the scan finds what the env adds to it (an evaluation order id, a user id)."""
    texts = []
    for seed in seeds:
        env.reset(seed=seed)
        state = env.unwrapped.current_task.initial_state
        own = set(TOKEN.findall(json.dumps(state, default=str)))
        for number, action in enumerate(env.unwrapped.oracle_actions()):
            observation, _, terminated, truncated, _ = env.step(action)
            texts.append((f"seed {seed}: reply to reference step {number}", _without(str(observation), own)))
            if terminated or truncated:
                break
    return texts


def replies_without_state(env: Any, replies: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``replies`` of the env's current task (those of its paced episodes) without the tokens its initial state
    holds, as :func:`played_texts` leaves them out."""
    own = set(TOKEN.findall(json.dumps(env.unwrapped.current_task.initial_state, default=str)))
    return [(where, _without(text, own)) for where, text in replies]


def _without(text: str, tokens: set[str]) -> str:
    """``text`` without the tokens of ``tokens`` (whole tokens only)."""
    return TOKEN.sub(lambda match: "" if match.group() in tokens else match.group(), text)


def scan_generated_texts(texts: Iterable[tuple[str, str]], index: EvaluationIndex) -> list[Finding]:
    """Findings for the task texts an env generated (``(where, text)`` pairs such as ``("seed 3: opening",
    "...")``: each reset's user opening, goal, instructions and task id) that hold an evaluation task's id,
    task id or instruction text: what the source check cannot see, because the module builds it at run time.

    Pure: the caller gathers the texts from the env (:func:`reset_texts` on the box's proxy) and passes them
    here, on the trusted side. One finding per text, naming where it came from.
    """
    findings = []
    for where, text in texts:
        text = text or ""
        if text in index.task_ids:
            leak: tuple[str, str, str] | None = (f"the task id {text!r} is copied", text, index.task_ids[text])
        else:
            leak = leak_in_text(text, index)
        if leak is not None:
            what, shown, source = leak
            findings.append(
                Finding(
                    rule="leaked-evaluation-data",
                    subject=f"{where}: {shown}"[:60],
                    message=f"the generated text at {where}: {what} from {source}.",
                    fix=FIX,
                )
            )
    return findings
