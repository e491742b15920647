"""Findings a model can act on: each gate's findings for a broken copy of the guide's starter, read as text
alone (what the repair prompt gives the model), name where (line or seed), the cause and a fix about it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from trace_envs.synthesis import GateContext
from trace_envs.synthesis.gates.validation import validate_source

STARTER = (REPO_ROOT / "generated_envs" / "retail_order_cancel.py").read_text(encoding="utf-8")


def broken(old: str, new: str) -> str:
    assert STARTER.count(old) == 1, old
    return STARTER.replace(old, new)


def leaked_sentence(tau2_data: Path) -> str:
    """A customer's words from the first retail evaluation task (what a leak copies)."""
    tasks = json.loads((tau2_data / "retail" / "tasks.json").read_text(encoding="utf-8"))
    return str(tasks[0]["user_scenario"]["instructions"]["reason_for_call"]).split(".")[0] + "."


# name -> (gate that must stop it, the broken module, what the finding must name: where, cause, fix)
CASES = {
    "syntax": ("parse", lambda d: broken("-> Task:\n", "-> Task\n"), (r"line \d+", r"expected ':'", r"Fix: .+")),
    "import": (
        "static_policy",
        lambda d: broken("import random\n", "import random\nimport os\n"),
        (r"line 1\d", r"\bos\b", r"Fix: Remove it"),
    ),
    "domain": (
        "contract",
        lambda d: broken("    domain = RETAIL\n", ""),
        (r"line \d+", r"no domain", r"domain = RETAIL"),
    ),
    "fact": (
        "execution",
        lambda d: broken("else status]", 'else status, "refunded in full"]'),
        (r"seed \d+", r"'refunded in full'.*none of the messages", r"Fix: state the fact"),
    ),
    "call": (
        "execution",
        lambda d: broken(
            "        plan.call(lookup.name, **lookup.arguments)\n",
            '        plan.call(lookup.name, **lookup.arguments)\n        plan.call("get_order_details", order_id="#W0")\n',
        ),
        (r"line \d+, seed \d+", r"get_order_details.*'#W0'.*failed.*not found", r"Fix: .*plan\.call that fails"),
    ),
    "reference": (
        "execution",
        lambda d: broken(
            "        plan.call(lookup.name, **lookup.arguments)\n",
            "        plan.call(lookup.name, **lookup.arguments)\n"
            '        plan.steps.append(ToolCall(name="get_order_details", arguments={"order_id": "#W0"}))\n',
        ),
        (
            r"seed \d+",
            r"step 2 \(get_order_details with \{'order_id': '#W0'\}\) failed.*not found",
            r"Fix: Make that call of Task\.solution succeed",
        ),
    ),
    "flawed": (
        "execution",
        lambda d: broken("flawed_solution=[", "flawed_solution=[*plan.steps] or ["),
        (r"all \d+ seeds", r"flawed_actions\(\) scores 1\.0", r"Fix: Make Task\.flawed_solution skip"),
    ),
    "leak": (
        "leakage",
        lambda d: broken("Please cancel my order {order_id}", leaked_sentence(d) + " Order {order_id}"),
        (r"line \d+|seed \d+", r"retail|task", r"Fix: .+"),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_gates_finding_names_where_the_cause_and_the_fix(name: str, tau2_data: Path) -> None:
    gate, make, (where, cause, fix) = CASES[name]
    report = validate_source(make(tau2_data), GateContext(target="retail", data=tau2_data, seeds=20))
    assert report.stopped_by == gate, [r.summary() for r in report.results if r.status == "failed"]
    texts = [f.render() for r in report.results if r.gate == gate for f in r.findings]
    assert any(re.search(where, text) and re.search(cause, text, re.S) and re.search(fix, text) for text in texts), (
        texts
    )
