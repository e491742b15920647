"""Base, single-adapter and routed policies on the tiny local model: the route is recorded per task and the
route-only evaluation is built from the adapters' own evaluations."""

from __future__ import annotations

from pathlib import Path

from tests.routing.conftest import adapters, tiny_model
from trace_envs.evaluation import BASE_ROUTE
from trace_envs.evaluation.harness import evaluate
from trace_envs.evaluation.policies import parse_policy
from trace_envs.evaluation.targets import load_target

__all__ = ["adapters", "tiny_model"]  # the routing tests' session fixtures, shared


def test_routed_policy_records_routes_and_route_only_evaluation(
    tiny_model: Path, adapters: list[Path], tmp_path: Path
) -> None:
    first, second = adapters
    entries = [
        parse_policy(f"base=hf:{tiny_model}"),
        parse_policy(f"one=hf:{tiny_model}@{first}"),
        parse_policy(f"two=hf:{tiny_model}@{second}"),
        parse_policy(f"routed=routed:{tiny_model}@{first},{second}"),
    ]
    assert [e.kind for e in entries] == ["base", "adapter", "adapter", "routed"]
    target = load_target("device", limit=2)
    results = evaluate(target, entries, tmp_path, max_steps=1, sampling={"max_tokens": 4}, concurrency=1)
    routed = results.policy("routed")
    names = {"precondition_verification", "datetime_reasoning", BASE_ROUTE}
    assert len(routed.outcomes) == 2 and all(o.route in names for o in routed.outcomes)
    assert all(o.route is None for o in results.policy("one").outcomes)
    (route,) = results.routing
    assert route.routed == "routed"
    assert route.candidates == {"precondition_verification": "one", "datetime_reasoning": "two", BASE_ROUTE: "base"}
    assert [t.chosen for t in route.tasks] == [o.route for o in routed.outcomes]
    assert len(results.comparisons) == 3  # each later policy against the base
