"""Base, single-adapter and routed policies on the tiny local model: the route is recorded per task and the
route-only evaluation is built from the adapters' own evaluations."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_routed_policy_through_one_openai_server_asks_for_each_routes_served_adapter(
    tiny_model: Path, adapters: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest
    from trace_envs.routing import CapabilityCard, Router, RoutingDecision, vllm_lora_modules

    cards = [CapabilityCard.from_adapter(a) for a in adapters]
    routes: dict[str, RoutingDecision] = {}

    def route(router: Router, task: str) -> RoutingDecision:
        """The tiny model's logits pick one label for every task: spread the tasks over all three routes."""
        card = [*cards, None][len(routes) % 3] if task not in routes else None
        decision = routes.setdefault(
            task, RoutingDecision(label="x", capability=card and card.name, adapter_path=card and card.adapter_path,
                                  logits={})
        )  # fmt: skip
        return decision

    monkeypatch.setattr(Router, "route", route)
    requests: list[tuple[str, str]] = []

    def responder(request: FakeRequest) -> FakeReply:
        opening = next(m["content"] for m in request.messages if m["role"] == "user")
        requests.append((str(request.body["model"]), opening))
        return FakeReply(content="Done.")

    with FakeModelServer(responder) as server:
        entry = parse_policy(f"routed=routed:openai:{server.openai_url}#{tiny_model}@{adapters[0]},{adapters[1]}")
        assert (entry.kind, entry.server_url, entry.base_model) == ("routed", server.openai_url, str(tiny_model))
        results = evaluate(load_target("device", limit=3), [entry], tmp_path, max_steps=1, concurrency=2)

    outcomes = results.policy("routed").outcomes
    assert len(outcomes) == 3 and len(requests) >= 3 and all(o.error is None for o in outcomes)
    for model, opening in requests:  # every request names the served adapter (or base) of its task's route
        assert model == routes[opening].served_model_name(str(tiny_model))
    served = {module.split("=", 1)[0] for module in vllm_lora_modules(cards)}
    assert {model for model, _ in requests} == served | {str(tiny_model)}  # all three routes, one server
    names = {c.name: c.name for c in cards} | {BASE_ROUTE: str(tiny_model)}
    assert sorted(names[str(o.route)] for o in outcomes) == sorted(
        routes[opening].served_model_name(str(tiny_model)) for opening in routes
    )


def test_a_routed_server_spec_without_a_model_is_a_clear_error(adapters: list[Path]) -> None:
    with pytest.raises(ValueError, match=r"routed:openai:<base_url>#<base model>@"):
        parse_policy(f"routed:openai:http://127.0.0.1:8000/v1@{adapters[0]}")
