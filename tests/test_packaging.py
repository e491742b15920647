"""The wheel carries the templates, py.typed, generated_envs and the entry points; importing is light."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO_ROOT

HEAVY = ["torch", "transformers", "trl", "peft", "anthropic", "openai", "typer", "rich", "datasets", "hypothesis"]


def test_wheel_contents(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO_ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("trace_envs-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "trace_envs/templates/prompts/agent_system.jinja" in names
    assert "trace_envs/py.typed" in names
    assert "generated_envs/__init__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "shared/", "examples/"))]
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "trace-envs = trace_envs.cli:main" in text
    assert "[pytest11]" in text
    assert "[trace_envs.envs]\nshipped = generated_envs:register" in text


def test_import_is_light() -> None:
    code = f"import sys, json, trace_envs; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []


def test_the_demo_extra_installs_the_model_clients_and_the_tutorial_says_so() -> None:
    """The tutorial's real recipe asks Anthropic and a vLLM server: the install it names must have the clients."""
    import re
    import tomllib

    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    (demo,) = extras["demo"]
    assert "llm" in re.findall(r"\[(.*)\]", demo)[0].split(",")
    tutorial = (REPO_ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    recipe = tutorial[tutorial.index("## 3. The real recipe") : tutorial.index("## 4.")]
    assert re.search(r"pip install [^\n]*\[[^\]\n]*\bllm\b", recipe), "the real recipe must install the llm extra"
