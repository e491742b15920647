"""The leakage guard sees evaluation ids split across literals (folded string expressions), and scans the
task texts an env generates."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trace_envs.synthesis import GateContext
from trace_envs.synthesis.gates.constant_text import MAX_CHARS, folded_texts
from trace_envs.synthesis.gates.leakage import evaluation_index, leakage_gate, scan_generated_texts
from trace_envs.targets.tau2.data import load_domain_data


def folded(source: str) -> set[str]:
    return {text for _, text in folded_texts(ast.parse(source))}


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ('x = "#W12" + "34567"\n', "#W1234567"),
        ('x = "ab" * 3\n', "ababab"),
        ("x = f\"#W{'12'}34567\"\n", "#W1234567"),
        ('P = "#W12"\nx = f"{P}34567"\n', "#W1234567"),
        ('P = "#W12"\nx = P + "34567"\n', "#W1234567"),
        ('x = "".join(["#W12", "34567"])\n', "#W1234567"),
        ('parts = ("#W12", "34567")\nx = "".join(parts)\n', "#W1234567"),
        ('x = chr(35) + "W1234567"\n', "#W1234567"),
        ('pieces = ["#W12", "34567"]\n', "#W1234567"),
        ('words = ["I would like", "to cancel"]\n', "I would like to cancel"),
    ],
)
def test_string_expressions_fold_to_their_value(source: str, text: str) -> None:
    assert text in folded(source)


@pytest.mark.parametrize(
    "source",
    [
        'x = "#W12" + name\n',  # a run-time value
        'P = "#W12"\nP = "x"\ny = P + "34567"\n',  # bound twice: not a constant
        'x = "a" * 10**9\n',  # never built
        'x = f"#W{n:>3}34567"\n',
    ],
)
def test_what_is_not_known_statically_is_not_folded(source: str) -> None:
    assert "#W1234567" not in folded(source)
    assert all(len(text) <= MAX_CHARS for text in folded(source))


@pytest.fixture
def retail_order_id(tau2_data: Path) -> str:
    index = evaluation_index(GateContext(target="retail", data=tau2_data))
    return next(i for i in sorted(index.ids) if i.startswith("#W"))


@pytest.mark.parametrize(
    "template",
    [
        'ORDER = "{a}" + "{b}"\n',
        "ORDER = f\"{a}{{'{b}'}}\"\n",
        'HEAD = "{a}"\nORDER = f"{{HEAD}}{b}"\n',
        'ORDER = "".join(("{a}", "{b}"))\n',
        'PIECES = ["{a}", "{b}"]\n',
    ],
)
def test_an_evaluation_id_split_across_literals_is_leakage(
    template: str, retail_order_id: str, tau2_data: Path
) -> None:
    a, b = retail_order_id[:4], retail_order_id[4:]
    source = template.format(a=a, b=b)
    assert retail_order_id not in source  # no single literal holds it
    result = leakage_gate(source, GateContext(target="retail", data=tau2_data))
    assert not result.passed, source
    assert any(f.subject == retail_order_id and "retail evaluation task" in f.message for f in result.findings)


def test_generated_texts_with_evaluation_ids_task_ids_or_instructions_are_found(
    retail_order_id: str, tau2_data: Path
) -> None:
    index = evaluation_index(GateContext(target="retail", data=tau2_data))
    task = load_domain_data(tau2_data, "retail").task("5")
    instructions = task.user_scenario.instructions
    assert not isinstance(instructions, str)
    texts = [
        ("seed 0: opening", "Hi, I want to return a lamp I bought last week."),
        ("seed 1: opening", f"Please cancel order {retail_order_id}."),
        ("seed 2: task_id", "5"),
        ("seed 3: goal", instructions.reason_for_call),
        ("seed 4: opening", "Thanks, bye."),
    ]
    findings = scan_generated_texts(texts, index)
    assert [f.subject.split(":")[0] for f in findings] == ["seed 1", "seed 2", "seed 3"]
    assert retail_order_id in findings[0].subject and "retail evaluation task" in findings[0].message
    assert "task id '5'" in findings[1].message
    assert all(f.rule == "leaked-evaluation-data" and f.fix for f in findings)


def test_texts_of_its_own_pass(tau2_data: Path) -> None:
    index = evaluation_index(GateContext(target="retail", data=tau2_data))
    assert scan_generated_texts([("seed 0: opening", "Please cancel order #W0000001 for Ada.")], index) == []


def test_the_texts_an_env_generates_on_reset_are_gathered_and_scanned(retail_order_id: str, tau2_data: Path) -> None:
    import gymnasium as gym

    from trace_envs.synthesis.gates.leakage import played_texts, reset_texts

    index = evaluation_index(GateContext(target="retail", data=tau2_data))
    env = gym.make("trace/retail-order-cancel-v0")
    try:
        texts = reset_texts(env, range(3))
        replies = played_texts(env, range(3))
    finally:
        env.close()
    wheres = [where for where, _ in texts]
    assert [w for w in wheres if w.endswith(("opening", "task_id"))] == [
        f"seed {s}: {part}" for s in range(3) for part in ("opening", "task_id")
    ]
    # the policy and the system prompt (issue 34), once each while they are the same on every seed
    assert "seed 0: policy" in wheres and "seed 0: system message 0" in wheres and "seed 1: policy" not in wheres
    assert replies and all(": reply to reference step " in where for where, _ in replies)
    assert scan_generated_texts(texts + replies, index) == []  # a shipped env copies nothing

    class Leaky(gym.Env[str, str]):
        def reset(self, *, seed: int | None = None, options: dict[str, object] | None = None) -> tuple[str, dict]:
            return f"Cancel {retail_order_id[:4]}" + retail_order_id[4:] + " please", {"task_id": "5"}

    findings = scan_generated_texts(reset_texts(Leaky(), [7]), index)
    assert [f.subject.split(":")[0] for f in findings] == ["seed 7", "seed 7"]
    assert retail_order_id in findings[0].subject and "task id '5'" in findings[1].message
