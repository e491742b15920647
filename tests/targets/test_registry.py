"""The target registry is the one place that knows the targets: nothing outside ``trace_envs/targets`` branches
on a target's name or lists targets, and a third-party target registered by entry point is listed and used."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from trace_envs.evaluation.targets import load_target
from trace_envs.registry.targets import (
    ENTRY_POINT_GROUP,
    Target,
    TargetSpec,
    TargetTask,
    TargetTasks,
    register_target,
    select_targets,
    target,
    target_env_ids,
    targets,
)

from ..conftest import REPO_ROOT

OWN_FOLDERS = ("trace_envs/targets/", "trace_envs/domains/")
"""Where target names may be code: the targets package (the registry, the specs) and the domains they play."""


def target_words() -> set[str]:
    """Every registered target's name and aliases, and every family name."""
    words = set()
    for spec in targets().values():
        words |= {spec.name, *spec.aliases, *([spec.family] if spec.family else [])}
    return words


def _strings(node: ast.AST) -> list[str]:
    """The string constants ``node`` is, or holds directly (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def target_name_branches(source: str, path: str, words: set[str]) -> list[str]:
    """Comparisons with a target name (``x == "device"``, ``x in ("retail", "airline")``), ``match`` cases on
    one, and literal collections or dict keys that list two or more targets."""
    found = []
    for node in ast.walk(ast.parse(source)):
        named: list[str] = []
        if isinstance(node, ast.Compare):
            named = [s for side in (node.left, *node.comparators) for s in _strings(side) if s in words]
        elif isinstance(node, ast.MatchValue):
            named = [s for s in _strings(node.value) if s in words]
        elif isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            listed = [s for item in items if item is not None for s in _strings(item) if s in words]
            named = listed if len(listed) >= 2 else []
        if named:
            found.append(f"{path}:{node.lineno} names the target {named[0]!r}: ask trace_envs.registry.targets")
    return list(dict.fromkeys(found))


def test_no_module_outside_the_targets_package_branches_on_or_lists_a_target() -> None:
    words = target_words()
    problems = []
    for path in sorted((REPO_ROOT / "trace_envs").rglob("*.py")):
        rel = str(path.relative_to(REPO_ROOT))
        if not rel.startswith(OWN_FOLDERS):
            problems += target_name_branches(path.read_text(encoding="utf-8"), rel, words)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "source",
    [
        "if target == 'device':\n    pass",
        "x = 'retail' != name",
        "if name not in ('retail', 'airline'):\n    pass",
        "TARGETS = ('airline', 'retail', 'device')",
        "TABLE = {'device': 1, 'tau2-retail': 2}",
        "match name:\n    case 'tau2':\n        pass",
    ],
)
def test_the_scan_catches_a_branch_on_a_target_name(source: str) -> None:
    assert target_name_branches(source, "m.py", target_words())


def test_the_scan_lets_other_strings_be() -> None:
    source = "DOC = 'the device target'\nif kind == 'tau2-bench':\n    pass\nNAMES = ('device',)\nf(target='retail')"
    assert target_name_branches(source, "m.py", target_words()) == []


def test_the_shipped_targets_are_registered_with_their_envs_and_families() -> None:
    assert list(targets()) == ["airline", "retail", "device"]
    assert [s.name for s in select_targets("tau2")] == ["airline", "retail"]
    assert select_targets("tau2-retail") == [target("retail")]
    assert set(target_env_ids()) == {"trace/tau2-airline-v0", "trace/tau2-retail-v0", "trace/device-v0"}
    with pytest.raises(ValueError, match="unknown target 'mars'; use one of airline, retail, device"):
        target("mars")
    with pytest.raises(ValueError, match="unknown target 'tau2-retail'"):  # an alias selects, it does not name
        target("tau2-retail")


def test_registering_is_idempotent_and_a_taken_name_is_an_error() -> None:
    device = target("device")
    assert register_target(device) is device
    clash = dataclasses.replace(device, name="phone", aliases=("device",))
    with pytest.raises(ValueError, match="target name 'device' is taken by the target 'device'"):
        register_target(clash)
    assert "phone" not in targets()


THIRD_PARTY = """
from pathlib import Path

from trace_envs.registry.targets import LeakageRecords, LeakageTask, Target, TargetTask, TargetTasks


class ShopTarget(Target):
    \"\"\"A third-party target, written from docs/plugins.md alone: three built-in tasks.\"\"\"

    def tasks(self, data: str | Path | None, split: str, limit: int | None) -> TargetTasks:
        seeds = [1, 2, 3][:limit]
        tasks = [  # a capability env names its task after its capability and seed
            TargetTask(
                task_id=f"precondition_verification-{s}", domain="toy_shop", env_id="trace/shop-counter-v0", seed=s
            )
            for s in seeds
        ]
        return TargetTasks(source="built in", split=split, tasks=tasks)

    def leakage(self, data: str | Path | None) -> LeakageRecords:
        return RECORDS


RECORDS = LeakageRecords(source="three counter tasks", tasks=(LeakageTask(where="shop task a", ids=("counter_order_0042",), task_ids=("counter_order_0042",)),))

SHOP = ShopTarget(
    name="shop",
    description="A third-party target: orders to cancel at a toy shop counter.",
    domains={"toy_shop": "trace_envs.domains.toy_shop:TOY_SHOP"},
    envs={"trace/shop-counter-v0": "generated_envs.order_cancel:OrderCancelEnv"},
    kit=("trace_envs.core", "trace_envs.domains.toy_shop"),
    aliases=("toy-shop",),
    builtin_tasks=True,
)
"""

USE_IT = """
import json, sys, tempfile, warnings
from pathlib import Path
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import trace_envs
from trace_envs.registry.targets import target, targets
from trace_envs.evaluation.harness import evaluate
from trace_envs.evaluation.policies import parse_policy
from trace_envs.evaluation.targets import load_target
from trace_envs.pipeline.config import parse_config
from trace_envs.pipeline.targets import target_jobs
from trace_envs.rollout import policy_factory, rollout_into_store
from trace_envs.synthesis import GateContext
from trace_envs.synthesis.gates.leakage import evaluation_index, leakage_gate
from trace_envs.synthesis.module_checks import read_module, validate_modules

folder = Path(tempfile.mkdtemp())
chosen = load_target("toy-shop", limit=2)
results = evaluate(chosen, [parse_policy("oracle")], folder / "evaluate", trials=1, concurrency=1)
config = parse_config({"targets": ["shop"], "rollout": {"policy": "oracle", "max_tasks": 2}, "train": {"model": "tiny"}})
jobs = target_jobs(config, target("shop"), folder / "rollout")
factory, spec = policy_factory("oracle")
rolled = rollout_into_store(folder / "rollout" / "shop.jsonl", jobs, factory, spec=spec, concurrency=1)
module = read_module(Path(sys.argv[1]), "shop")
(validated,) = validate_modules([module], jobs=1, seeds=3, drawn_seeds=0, fuzz_examples=3)
index = evaluation_index(GateContext(target="shop"))
leaky = leakage_gate("TASK = 'counter_order_0042'", GateContext(target="shop"))
print(json.dumps({
    "targets": list(targets()),
    "envs": [e for e in trace_envs.list_envs() if e.startswith("trace/shop")],
    "tasks": [t.task_id for t in chosen.tasks],
    "pass_rate": results.policies[0].summary.overall.pass_rate.value,
    "config": config.targets,
    "jobs": [(j.env_id, j.seed) for j in jobs],
    "rollout": rolled.finished.pass_rate,
    "module": module.target,
    "validated": [validated.report.passed, [g.gate for g in validated.report.results if g.status == "failed"]],
    "leakage": sorted(index.task_ids),
    "leaky": leaky.status,
    "warned": [str(w.message) for w in caught if "trace_envs.targets" in str(w.message)],
}))
"""


def test_a_third_party_target_registered_by_entry_point_is_listed_and_used(tmp_path: Path) -> None:
    (tmp_path / "shop_target.py").write_text(THIRD_PARTY, encoding="utf-8")
    meta = tmp_path / "shop_target-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: shop-target\nVersion: 1.0\n", encoding="utf-8")
    (meta / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nshop = shop_target:SHOP\nbroken = shop_target:MISSING\n", encoding="utf-8"
    )
    shutil.copy(REPO_ROOT / "generated_envs" / "order_cancel.py", tmp_path / "shop_env.py")  # kit: core, toy_shop
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(USE_IT), str(tmp_path / "shop_env.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(tmp_path)]), "OMP_NUM_THREADS": "1"},
        cwd=REPO_ROOT,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["targets"] == ["airline", "retail", "device", "shop"]
    assert found["envs"] == ["trace/shop-counter-v0"]
    assert (
        found["tasks"] == ["precondition_verification-1", "precondition_verification-2"] and found["pass_rate"] == 1.0
    )
    assert found["config"] == ["shop"] and found["rollout"] == 1.0
    assert len(found["jobs"]) == 2 and {e for e, _ in found["jobs"]} == {"trace/shop-counter-v0"}
    assert {s for _, s in found["jobs"]} <= {1, 2, 3}  # the task's own seed, as the evaluation plays it
    assert found["validated"] == [True, []]  # every synthesis gate, the shop target's kit and leakage index
    assert found["module"] == "shop" and found["leakage"] == ["counter_order_0042"] and found["leaky"] == "failed"
    assert len(found["warned"]) == 1 and "'broken'" in found["warned"][0]  # a broken target warns, the rest load


def test_the_evaluation_reads_the_tasks_a_target_lists() -> None:
    chosen = load_target("device", split="test", limit=3)
    assert chosen.info.domains == ["device"] and not chosen.needs_user_model
    assert [t.env_id for t in chosen.tasks] == ["trace/device-v0"] * 3
    with pytest.raises(ValueError, match="device split must be train, test or all"):
        load_target("device", split="base")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from trace_envs.domains.retail import RETAIL\nfrom trace_envs.core import Task", "retail"),
        ("import trace_envs.domains.device.tasks", "device"),
        ("from trace_envs.domains.retail import RETAIL\nfrom trace_envs.domains.airline import AIRLINE", None),
        ("from trace_envs.core import Task", None),
        ("def broken(:", None),
    ],
)
def test_a_module_s_target_is_told_by_the_kit_it_imports(source: str, expected: str | None) -> None:
    from trace_envs.synthesis.gates.validation import infer_target

    assert infer_target(source) == expected


def _old_tasks(spec: Any, data: Any, split: str, limit: int | None) -> TargetTasks:
    task = TargetTask(task_id=f"{spec.name}-1", domain="toy_shop", env_id="trace/shop-v0", seed=1)
    return TargetTasks(source="old spec", split=split, tasks=[task][:limit])


def test_a_spec_of_the_old_form_still_works_for_one_release_and_says_what_to_use() -> None:
    with pytest.warns(DeprecationWarning, match="use a Target subclass with tasks"):
        old = TargetSpec(
            name="old-shop", description="x", domains={}, envs={}, tasks=f"{__name__}:_old_tasks",
            evaluation="m:e", leakage="m:l", flaws=None, kit=(), builtin_tasks=True,
        )  # fmt: skip
    assert isinstance(old, Target) and old.check_data(None) is None and old.flawed(None, None) is None
    assert [t.task_id for t in old.load_tasks().tasks] == ["old-shop-1"]
