"""ToolSandbox's milestone/minefield evaluation over a trajectory's per-message snapshots.

A *trajectory* is the SANDBOX message log plus, for every message index, the world tables as they
were after that message. A *milestone* is a set of snapshot constraints (a table must look like a
target, rows must have been added/removed/updated relative to a reference snapshot, a message must
match); milestones form a DAG and are mapped to message indices in a topological, non-decreasing
order that maximises the summed milestone similarities (exact depth-first search with pruning).

    similarity = milestone_similarity * [minefield_similarity == 0]
    milestone_similarity = (1/M) * max over feasible mappings of sum_m sim_m(index_m)   (1 if M = 0)
    sim_m(i) = (prod_k s_k(i)) ** (1 / K_m)   over all constraints k, K_m = non-guardrail constraints

Column measures, snapshot measures, guardrails and the search follow the reference's section 7.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .extractors import UPSTREAM_NAMES, ExtractorName, extract
from .rouge import rouge_l

Namespace = Literal["SANDBOX", "SETTING", "CONTACT", "MESSAGING", "REMINDER"]
STATE_NAMESPACES: tuple[Namespace, ...] = ("SETTING", "CONTACT", "MESSAGING", "REMINDER")
ALL_NAMESPACES: tuple[Namespace, ...] = ("SANDBOX", *STATE_NAMESPACES)

MeasureName = Literal["exact", "close", "one", "contains", "rouge_l", "tool_trace"]
ConstraintKind = Literal["snapshot", "addition", "removal", "update", "guardrail", "tool_trace_dependant"]

SANDBOX_COLUMNS: dict[str, str] = {
    "sender": "str",
    "recipient": "str",
    "content": "str",
    "openai_tool_call_id": "str",
    "openai_function_name": "str",
    "conversation_active": "bool",
    "tool_call_exception": "str",
    "tool_trace": "list",
    "visible_to": "list",
}
TABLE_COLUMN_TYPES: dict[str, dict[str, str]] = {
    "SETTING": {"device_id": "str", "cellular": "bool", "wifi": "bool", "location_service": "bool",
                "low_battery_mode": "bool", "latitude": "num", "longitude": "num"},
    "CONTACT": {"person_id": "str", "name": "str", "phone_number": "str", "relationship": "str", "is_self": "bool"},
    "MESSAGING": {"message_id": "str", "sender_person_id": "str", "sender_phone_number": "str",
                  "recipient_person_id": "str", "recipient_phone_number": "str", "content": "str",
                  "creation_timestamp": "num"},
    "REMINDER": {"reminder_id": "str", "content": "str", "creation_timestamp": "num", "reminder_timestamp": "num",
                 "latitude": "num", "longitude": "num"},
    "SANDBOX": SANDBOX_COLUMNS,
}  # fmt: skip


class ColumnMeasure(BaseModel):
    """How one column of a target row is compared with a snapshot cell."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: MeasureName
    atol: dict[str, float] = Field(default_factory=dict, description="Absolute tolerances by column/argument name.")
    normalize: bool = Field(
        default=False,
        description="(contains only; our extension) compare lower-cased text with everything but [a-z0-9] removed, "
        "so 'Wi-Fi' contains 'wifi'.",
    )


def _default_measure(namespace: str, column: str) -> ColumnMeasure:
    if namespace == "SANDBOX":
        if column == "content":
            return ColumnMeasure(name="rouge_l")
        if column in ("openai_tool_call_id", "openai_function_name", "tool_call_exception"):
            return ColumnMeasure(name="one")
        if column == "tool_trace":
            return ColumnMeasure(name="tool_trace")
        return ColumnMeasure(name="exact")
    if namespace in ("MESSAGING", "REMINDER") and column == "content":
        return ColumnMeasure(name="rouge_l")
    if namespace == "CONTACT" and column == "relationship":
        return ColumnMeasure(name="rouge_l")
    return ColumnMeasure(name="exact")


class SnapshotConstraint(BaseModel):
    """One condition on one table at the candidate message (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    database_namespace: Namespace
    snapshot_constraint: ConstraintKind = "snapshot"
    target_dataframe: list[dict[str, Any]] | None = None
    reference_milestone_node_index: int | None = Field(
        default=None, description="j >= 0: the snapshot matched to milestone j; -1: the initial world; None: none."
    )
    column_similarity_measure: dict[str, ColumnMeasure] = Field(default_factory=dict)
    fill_to: Literal["tool_trace", "content"] | None = None
    extractor: ExtractorName | None = Field(
        default=None, description="tool_trace_dependant only: see extractors.py (upstream's names are accepted too)."
    )

    @field_validator("extractor", mode="before")
    @classmethod
    def _our_extractor_name(cls, value: Any) -> Any:
        return UPSTREAM_NAMES.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> SnapshotConstraint:
        kind = self.snapshot_constraint
        if kind != "guardrail" and self.target_dataframe is None:
            raise ValueError(f"a {kind!r} constraint needs target_dataframe (a list of target rows)")
        needs_reference = kind in ("addition", "removal", "update", "guardrail", "tool_trace_dependant")
        if needs_reference and self.reference_milestone_node_index is None:
            raise ValueError(f"a {kind!r} constraint needs reference_milestone_node_index (-1 = initial world)")
        incomplete = self.database_namespace != "SANDBOX" or self.fill_to is None or self.extractor is None
        if kind == "tool_trace_dependant" and incomplete:
            raise ValueError("a 'tool_trace_dependant' constraint is on SANDBOX and needs fill_to and extractor")
        if kind in ("addition", "removal", "update") and self.database_namespace == "SANDBOX":
            raise ValueError(f"{kind!r} constraints apply to state tables, not SANDBOX")
        return self

    def measure(self, column: str) -> ColumnMeasure:
        return self.column_similarity_measure.get(column) or _default_measure(self.database_namespace, column)


class Milestone(BaseModel):
    """Constraints that must hold together at one message (a minefield has the same shape)."""

    model_config = ConfigDict(extra="forbid")

    snapshot_constraints: list[SnapshotConstraint] = Field(min_length=1)
    guardrail_database_list: list[Namespace] | None = None
    guardrail_database_exclusion_list: list[Namespace] | None = None

    @model_validator(mode="after")
    def _one_list(self) -> Milestone:
        if self.guardrail_database_list is not None and self.guardrail_database_exclusion_list is not None:
            raise ValueError("give at most one of guardrail_database_list and guardrail_database_exclusion_list")
        return self


class Evaluation(BaseModel):
    """Milestones and minefields, each with an optional DAG edge list (default: the chain 0→1→…)."""

    model_config = ConfigDict(extra="forbid")

    milestones: list[Milestone] = Field(default_factory=list)
    milestone_edges: list[tuple[int, int]] | None = None
    minefields: list[Milestone] = Field(default_factory=list)
    minefield_edges: list[tuple[int, int]] | None = None

    @model_validator(mode="after")
    def _valid_dags(self) -> Evaluation:
        for label, nodes, edges in (
            ("milestone", self.milestones, self.milestone_edges),
            ("minefield", self.minefields, self.minefield_edges),
        ):
            for a, b in edges or []:
                if not (0 <= a < len(nodes) and 0 <= b < len(nodes)) or a == b:
                    raise ValueError(f"{label}_edges: edge ({a}, {b}) does not join two different {label}s")
            _topological(len(nodes), _edges(len(nodes), edges))
            for index, node in enumerate(nodes):
                for constraint in node.snapshot_constraints:
                    ref = constraint.reference_milestone_node_index
                    if ref is not None and ref >= 0 and ref not in _ancestors(index, _edges(len(nodes), edges)):
                        raise ValueError(f"{label} {index} references {label} {ref}, which is not its ancestor")
        return self


def _edges(n: int, edges: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(n - 1)] if edges is None else [tuple(e) for e in edges]  # type: ignore[misc]


def _ancestors(node: int, edges: list[tuple[int, int]]) -> set[int]:
    parents: dict[int, list[int]] = {}
    for a, b in edges:
        parents.setdefault(b, []).append(a)
    found: set[int] = set()
    stack = list(parents.get(node, []))
    while stack:
        current = stack.pop()
        if current not in found:
            found.add(current)
            stack.extend(parents.get(current, []))
    return found


def _topological(n: int, edges: list[tuple[int, int]]) -> list[int]:
    indegree = [0] * n
    for _, b in edges:
        indegree[b] += 1
    order, ready = [], [i for i in range(n) if indegree[i] == 0]
    while ready:
        node = ready.pop(0)
        order.append(node)
        for a, b in edges:
            if a == node:
                indegree[b] -= 1
                if indegree[b] == 0:
                    ready.append(b)
    if len(order) != n:
        raise ValueError("the edges contain a cycle; milestones must form a DAG")
    return order


# ----- the trajectory ---------------------------------------------------------------------------
class SandboxMessage(BaseModel):
    """One row of ToolSandbox's SANDBOX table (the message log)."""

    sender: str
    recipient: str
    content: str | None = None
    openai_tool_call_id: str | None = None
    openai_function_name: str | None = None
    conversation_active: bool | None = True
    tool_call_exception: str | None = None
    tool_trace: list[str] | None = None
    visible_to: list[str] | None = None


class Trajectory(BaseModel):
    """Messages and, for each message index, the state tables after that message."""

    messages: list[SandboxMessage]
    snapshots: list[dict[str, Any]]
    first_user: int = Field(description="Index of the first real user utterance (where matching starts).")

    @model_validator(mode="after")
    def _aligned(self) -> Trajectory:
        if len(self.messages) != len(self.snapshots):
            raise ValueError("a trajectory needs one snapshot per message")
        return self

    def rows(self, namespace: str, index: int) -> list[dict[str, Any]]:
        if namespace == "SANDBOX":
            return [self.messages[index].model_dump()]
        rows: list[dict[str, Any]] = self.snapshots[index][namespace]
        return rows


# ----- column measures --------------------------------------------------------------------------
def _alnum(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _trace_matches(trace: dict[str, Any], target: dict[str, Any], atol: dict[str, float]) -> bool:
    if trace.get("tool_name") != target.get("tool_name"):
        return False
    traced = trace.get("arguments") or {}
    for arg, wanted in (target.get("arguments") or {}).items():
        if arg not in traced:
            return False
        got = traced[arg]
        if arg in atol and _number(got) and _number(wanted):
            if abs(got - wanted) > atol[arg]:
                return False
        elif got != wanted or isinstance(got, bool) != isinstance(wanted, bool):
            return False
    return True


def _as_trace_targets(target: Any) -> list[dict[str, Any]]:
    if isinstance(target, str):
        target = json.loads(target)
    if isinstance(target, dict):
        return [target]
    return [json.loads(t) if isinstance(t, str) else t for t in target]


def column_similarity(measure: ColumnMeasure, column: str, cell: Any, target: Any) -> float | None:
    """A value in [0, 1], or None where polars yields null (null cell vs non-null exact target)."""
    name = measure.name
    if name == "one":
        return 1.0
    if name == "exact" or (name == "close" and not (_number(cell) and _number(target))):
        if target is None:
            return 1.0 if cell is None else 0.0
        if cell is None:
            return None
        if isinstance(cell, bool) != isinstance(target, bool):
            return 0.0
        return 1.0 if cell == target else 0.0
    if name == "close":
        return 1.0 if abs(cell - target) <= measure.atol.get(column, 0.0) else 0.0
    if name == "contains":
        if not (isinstance(cell, str) and isinstance(target, str)):
            return 0.0
        if measure.normalize:
            cell, target = _alnum(cell), _alnum(target)
        return 1.0 if target in cell else 0.0
    if name == "rouge_l":
        if cell is None or target is None:
            return 0.0
        return rouge_l(str(target), str(cell))
    # tool_trace
    if not cell:
        return 0.0
    traces = [json.loads(t) for t in cell]
    wanted = _as_trace_targets(target)
    return 1.0 if any(_trace_matches(t, w, measure.atol) for t in traces for w in wanted) else 0.0


# ----- snapshot measures ------------------------------------------------------------------------
def _assignment_cost(cost: list[list[float]]) -> float:
    """Minimum total cost of a one-to-one assignment of a square matrix (Hungarian algorithm)."""
    n = len(cost)
    big = 1e18
    u, v, p, way = [0.0] * (n + 1), [0.0] * (n + 1), [0] * (n + 1), [0] * (n + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = [big] * (n + 1), [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], big, 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = min(cost[i0 - 1][j - 1], big) - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    total = 0.0
    for j in range(1, n + 1):
        total += cost[p[j] - 1][j - 1]
    return total


_COST_ORDER = {"one": 0, "exact": 1, "close": 1, "contains": 2, "tool_trace": 3, "rouge_l": 4}


def snapshot_similarity(
    rows: list[dict[str, Any]], constraint: SnapshotConstraint, target: list[dict[str, Any]]
) -> float:
    """Geometric mean over target rows of their best one-to-one matched row similarity (0 if sizes differ)."""
    n = len(target)
    if len(rows) != n:
        return 0.0
    if n == 0:
        return 1.0
    columns = list(dict.fromkeys(c for t in target for c in t))
    if any(c not in rows[0] for c in columns):
        return 0.0
    cost: list[list[float]] = []
    for t in target:
        line = []
        for s in rows:
            logs: list[float] = []
            for column in sorted(t, key=lambda c: _COST_ORDER[constraint.measure(c).name]):
                sim = column_similarity(constraint.measure(column), column, s.get(column), t[column])
                if sim is None:
                    continue
                if sim <= 0:  # one zero column makes the row similarity 0: skip the costlier measures
                    logs = [math.inf]
                    break
                logs.append(-math.log(sim))
            line.append(sum(logs) / len(logs) if logs else math.inf)
        cost.append(line)
    best = cost[0][0] if n == 1 else _assignment_cost(cost)
    if not math.isfinite(best) or best >= 1e17:
        return 0.0
    return math.exp(-best / n)


def _zero(kind: str) -> Any:
    return {"str": "", "bool": False, "num": 0}.get(kind)


def _fill(namespace: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kinds = TABLE_COLUMN_TYPES[namespace]
    return [{k: (_zero(kinds.get(k, "")) if v is None else v) for k, v in row.items()} for row in rows]


def _key(row: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in row.items()))


def _anti_join(left: list[dict[str, Any]], right: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = {_key(r) for r in right}
    return [row for row in left if _key(row) not in keys]


def _inner_count(left: list[dict[str, Any]], right: list[dict[str, Any]]) -> int:
    a, b = Counter(_key(r) for r in left), Counter(_key(r) for r in right)
    return sum(count * b[key] for key, count in a.items())


def addition_similarity(s: list[dict[str, Any]], r: list[dict[str, Any]], c: SnapshotConstraint, ns: str) -> float:
    """All reference rows kept, and the added rows match the target."""
    s, r = _fill(ns, s), _fill(ns, r)
    if _inner_count(s, r) != len(r):
        return 0.0
    return snapshot_similarity(_anti_join(s, r), c, _fill(ns, c.target_dataframe or []))


def update_similarity(s: list[dict[str, Any]], r: list[dict[str, Any]], c: SnapshotConstraint, ns: str) -> float:
    """Same row count, and the changed rows (as they are now) match the target."""
    s, r = _fill(ns, s), _fill(ns, r)
    if len(s) != len(r):
        return 0.0
    return snapshot_similarity(_anti_join(s, r), c, _fill(ns, c.target_dataframe or []))


def tool_trace_dependant_similarity(s: list[dict[str, Any]], r: list[dict[str, Any]], c: SnapshotConstraint) -> float:
    """Fill the target with values extracted from the reference message's tool traces; best match wins.

    As upstream, a fill that fails (a ``str.format`` field the values lack) makes the similarity 0.
    """
    traces = (r[0].get("tool_trace") or []) if r else []
    candidates = [values for raw in traces for values in extract(c.extractor or "result", json.loads(raw))]
    best = 0.0
    try:
        for values in candidates:
            filled: list[dict[str, Any]] = []
            for row in c.target_dataframe or []:
                row = dict(row)
                if c.fill_to == "tool_trace" and "tool_trace" in row:
                    alternatives = []
                    for target in _as_trace_targets(row["tool_trace"]):
                        args = target.get("arguments") or {}
                        alternatives.append({**target, "arguments": {**args, **values}})
                        alternatives.append({**target, "arguments": {**values, **args}})
                    row["tool_trace"] = alternatives
                elif c.fill_to == "content" and isinstance(row.get("content"), str):
                    row["content"] = row["content"].format(**values)
                filled.append(row)
            best = max(best, snapshot_similarity(s, c, filled))
    except (KeyError, IndexError):
        return 0.0
    return best


def constraint_similarity(
    constraint: SnapshotConstraint, trajectory: Trajectory, index: int, reference_index: int | None
) -> float:
    """One constraint's measure with S at ``index`` and R at ``reference_index``."""
    ns = constraint.database_namespace
    s = trajectory.rows(ns, index)
    kind = constraint.snapshot_constraint
    if kind == "snapshot":
        return snapshot_similarity(s, constraint, constraint.target_dataframe or [])
    assert reference_index is not None
    r = trajectory.rows(ns, reference_index)
    if kind == "addition":
        return addition_similarity(s, r, constraint, ns)
    if kind == "removal":
        return addition_similarity(r, s, constraint, ns)
    if kind == "update":
        return update_similarity(s, r, constraint, ns)
    if kind == "guardrail":
        return 1.0 if s == r else 0.0
    return tool_trace_dependant_similarity(s, r, constraint)


# ----- matching -----------------------------------------------------------------------------------
class MatchResult(BaseModel):
    similarity: float
    mapping: dict[int, tuple[int, float]] = Field(description="node -> (message index, similarity)")


def with_guardrails(nodes: list[Milestone], edges: list[tuple[int, int]]) -> list[list[SnapshotConstraint]]:
    """Each node's constraints plus the guardrails upstream adds automatically (reference §7.4)."""
    parents: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for a, b in edges:
        parents[b].append(a)
    result = []
    for i, node in enumerate(nodes):
        refs: list[int] = sorted(
            {
                c.reference_milestone_node_index
                for c in node.snapshot_constraints
                if c.reference_milestone_node_index is not None
            }
        )
        related = sorted(set(parents[i]) | {r for r in refs if r >= 0})
        if node.guardrail_database_list is not None:
            guarded = list(node.guardrail_database_list)
        else:
            excluded = set(node.guardrail_database_exclusion_list or [])
            guarded = [n for n in ALL_NAMESPACES if n not in excluded]
        touched = {c.database_namespace for c in node.snapshot_constraints if c.snapshot_constraint != "guardrail"}
        for j in related:
            touched |= {
                c.database_namespace for c in nodes[j].snapshot_constraints if c.snapshot_constraint != "guardrail"
            }
        namespaces = [g for g in guarded if g != "SANDBOX" and g not in touched]
        constraints = list(node.snapshot_constraints)
        for j in sorted(set(parents[i]) | set(refs)):
            for g in namespaces:
                constraints.append(
                    SnapshotConstraint(
                        database_namespace=g, snapshot_constraint="guardrail", reference_milestone_node_index=j
                    )
                )
        result.append(constraints)
    return result


def match_nodes(
    nodes: list[Milestone], edges: Sequence[tuple[int, int]] | None, trajectory: Trajectory, empty_value: float
) -> MatchResult:
    """Best DAG-respecting mapping of nodes to message indices (``empty_value`` when there are none)."""
    n = len(nodes)
    if n == 0:
        return MatchResult(similarity=empty_value, mapping={})
    dag = _edges(n, edges)
    constraints = with_guardrails(nodes, dag)
    parents: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in dag:
        parents[b].add(a)
    first, last = trajectory.first_user, len(trajectory.messages) - 1
    if last < first:
        return MatchResult(similarity=0.0, mapping={})
    non_guard = [max(1, sum(c.snapshot_constraint != "guardrail" for c in cs)) for cs in constraints]
    cache: dict[tuple[int, int, tuple[int | None, ...]], float] = {}

    def ref_index(j: int | None, assigned: dict[int, int]) -> int | None:
        if j is None:
            return None
        return first if j < 0 else assigned[j]

    def sim(node: int, index: int, assigned: dict[int, int]) -> float:
        refs = tuple(ref_index(c.reference_milestone_node_index, assigned) for c in constraints[node])
        key = (node, index, refs)
        if key not in cache:
            product = 1.0
            for constraint, ref in zip(constraints[node], refs, strict=True):
                product *= constraint_similarity(constraint, trajectory, index, ref)
                if product == 0.0:
                    break
            cache[key] = product ** (1.0 / non_guard[node]) if product > 0 else 0.0
        return cache[key]

    # optimistic bound per node and start index: assignment-dependent constraints count as 1
    bound: list[list[float]] = []
    for node in range(n):
        free = [
            c
            for c in constraints[node]
            if c.snapshot_constraint == "snapshot" or c.reference_milestone_node_index == -1
        ]
        values = []
        for index in range(first, last + 1):
            product = 1.0
            for c in free:
                product *= constraint_similarity(c, trajectory, index, first)
                if product == 0.0:
                    break
            values.append(product ** (1.0 / non_guard[node]) if product > 0 else 0.0)
        suffix = [0.0] * (len(values) + 1)
        for k in range(len(values) - 1, -1, -1):
            suffix[k] = max(values[k], suffix[k + 1])
        bound.append(suffix)

    best_sum = -1.0
    best_map: dict[int, tuple[int, float]] = {}

    def search(assigned: dict[int, int], scores: dict[int, float], floor: int, total: float) -> None:
        nonlocal best_sum, best_map
        if len(assigned) == n:
            if total > best_sum:
                best_sum, best_map = total, {k: (assigned[k], scores[k]) for k in sorted(assigned)}
            return
        ready = [m for m in range(n) if m not in assigned and parents[m] <= set(assigned)]
        candidates = [(sim(m, i, assigned), m, i) for m in ready for i in range(floor, last + 1)]
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
        for score, m, i in candidates:
            rest = sum(bound[o][i - first] for o in range(n) if o not in assigned and o != m)
            if total + score + rest <= best_sum:
                continue
            assigned[m], scores[m] = i, score
            search(assigned, scores, i, total + score)
            del assigned[m], scores[m]

    search({}, {}, first, 0.0)
    return MatchResult(similarity=max(best_sum, 0.0) / n, mapping=best_map)


class EvaluationResult(BaseModel):
    """Upstream's per-scenario record (the parts that do not depend on how the run was played)."""

    similarity: float = Field(ge=0.0, le=1.0)
    milestone_similarity: float
    minefield_similarity: float
    milestone_mapping: dict[int, tuple[int, float]]
    minefield_mapping: dict[int, tuple[int, float]]


def evaluate(evaluation: Evaluation, trajectory: Trajectory) -> EvaluationResult:
    """``similarity = milestone_similarity * [minefield_similarity == 0]``."""
    milestones = match_nodes(evaluation.milestones, evaluation.milestone_edges, trajectory, empty_value=1.0)
    minefields = match_nodes(evaluation.minefields, evaluation.minefield_edges, trajectory, empty_value=0.0)
    similarity = milestones.similarity if minefields.similarity == 0 else 0.0
    return EvaluationResult(
        similarity=min(1.0, max(0.0, similarity)),
        milestone_similarity=milestones.similarity,
        minefield_similarity=minefields.similarity,
        milestone_mapping=milestones.mapping,
        minefield_mapping=minefields.mapping,
    )
