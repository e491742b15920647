"""Without an optional extra, a command says which one to install in one line (exit code 2), and the
property suite names the extra that has Hypothesis instead of blaming the env.

Each case runs in a subprocess whose import system refuses the extra's modules, as if not installed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from trace_envs.extras import missing_extra

BLOCKER = """
import sys
BLOCKED = set({blocked!r})
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""
TRAIN_MODULES = ["torch", "transformers", "trl", "peft"]


def run_blocked(blocked: list[str], code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    program = BLOCKER.format(blocked=blocked) + code
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=cwd, timeout=300, check=False
    )


@pytest.mark.parametrize(
    "args",
    [
        ["make-tiny-model", "tiny"],
        ["train", "--env", "trace/order-cancel-v0", "--model", "tiny", "--out", "adapter"],
        ["route", "--model", "tiny", "--adapter", "adapter", "--task", "Cancel my order."],
        ["baseline", "merge", "--model", "tiny", "--adapter", "a", "--adapter", "b", "--budget", "8", "--out", "m"],
    ],
)
def test_train_commands_without_the_train_extra(args: list[str], tmp_path: Path) -> None:
    code = f"sys.argv = ['trace-envs', *{args!r}]\nfrom trace_envs.cli import main\nmain()\n"
    result = run_blocked(TRAIN_MODULES, code, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    command = " ".join(args[:2]) if args[0] == "baseline" else args[0]  # a subcommand is named in full
    assert lines[0].startswith(f"trace-envs {command}: needs the 'train' extra")
    assert 'pip install "trace-envs[train]"' in lines[0]
    assert not (tmp_path / "tiny").exists()  # nothing half-built


def test_make_model_without_gguf_names_the_train_extra(tmp_path: Path) -> None:
    args = ["make-model", "smollm2-135m-instruct", "-o", "smol"]
    code = f"sys.argv = ['trace-envs', *{args!r}]\nfrom trace_envs.cli import main\nmain()\n"
    result = run_blocked(["gguf"], code, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "trace-envs make-model: needs the 'train' extra (gguf is not installed): pip install \"trace-envs[train]\""
    ]
    assert not (tmp_path / "smol").exists()  # checked before any download


def test_property_suite_without_hypothesis_names_the_dev_extra(tmp_path: Path) -> None:
    code = (
        "from trace_envs.testing import check_capability_env\n"
        "try:\n"
        "    check_capability_env('trace/order-cancel-v0', seeds=range(2))\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc)\n"
    )
    result = run_blocked(["hypothesis"], code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'pip install "trace-envs[dev]"' in result.stdout
    assert "fails" not in result.stdout  # not reported as the env failing a property


def test_missing_extra_reads_the_cause_chain() -> None:
    outer = RuntimeError("loading the adapter failed")
    outer.__cause__ = ModuleNotFoundError("No module named 'peft'", name="peft")
    assert missing_extra(outer) == "needs the 'train' extra (peft is not installed): pip install \"trace-envs[train]\""
    assert missing_extra(ModuleNotFoundError("No module named 'numpy_fancy'", name="numpy_fancy")) is None
    wrapped = ModuleNotFoundError("anthropic: models need the 'llm' extra: pip install 'trace-envs[llm]'")
    assert missing_extra(wrapped) == str(wrapped)


LLM_MODULES = ["anthropic", "openai"]


def test_the_llm_extra_is_named_with_its_brackets_wherever_it_is_printed(tmp_path: Path) -> None:
    """rich reads ``[llm]`` as markup: every path that prints the hint must keep it (rollout's usage error,
    the pipeline's preflight table and its failure line)."""
    from trace_envs.pipeline import DEMO_YAML

    config = tmp_path / "trace.yaml"
    config.write_text(re.sub(r"policy: flawed\S*", "policy: openai:http://127.0.0.1:9/v1#m", DEMO_YAML, count=1))
    assert "policy: openai:http://127.0.0.1:9/v1#m\n" in config.read_text()
    commands = [
        ["rollout", "-e", "trace/order-cancel-v0", "-n", "1", "-o", "x.jsonl", "-p", "openai:http://127.0.0.1:9/v1#m"],
        ["pipeline", str(config), "--check"],
        ["pipeline", str(config), "-o", "out"],
    ]
    for args in commands:
        code = f"sys.argv = ['trace-envs', *{args!r}]\nfrom trace_envs.cli import main\nmain()\n"
        result = run_blocked(LLM_MODULES, code, tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "trace-envs[llm]" in result.stdout + result.stderr, (args, result.stdout + result.stderr)
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.jsonl").exists()


def test_error_lines_are_printed_as_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    from trace_envs.cli.errors import fail

    fail("needs the 'llm' extra: pip install \"trace-envs[llm]\"")
    assert 'pip install "trace-envs[llm]"' in capsys.readouterr().out
