"""The README's shell commands: each makes its own virtual environment (so each is the fresh install it looks
like), every folder they create is ignored by git, and the test command is the one CI runs."""

from __future__ import annotations

import fnmatch
import re

from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = [line for block in re.findall(r"```bash\n(.*?)```", README, re.S) for line in block.splitlines()]
VENV = re.compile(r"python3 -m venv (\S+) && \. (\S+)/bin/activate")


def test_each_readme_command_makes_its_own_venv() -> None:
    venvs = [VENV.search(line) for line in COMMANDS if "venv" in line]
    assert len(venvs) >= 3 and all(venvs), COMMANDS
    names = [match.group(1) for match in venvs if match]
    assert all(match.group(1) == match.group(2) for match in venvs if match), "activate the venv just made"
    assert len(set(names)) == len(names), f"commands share a venv: {names}"


def test_readme_venvs_are_ignored_by_git() -> None:
    patterns = [line.strip().rstrip("/") for line in (REPO_ROOT / ".gitignore").read_text().splitlines()]
    for line in COMMANDS:
        match = VENV.search(line)
        if match:
            assert any(fnmatch.fnmatch(match.group(1), pattern) for pattern in patterns if pattern), match.group(1)


def test_the_demo_folder_is_ignored_by_git() -> None:
    """``trace-envs demo`` writes its run into ``trace-demo/`` beside the clone: ``git status`` stays clean."""
    from trace_envs.cli.pipeline import DEMO_OUT

    assert "trace-envs demo" in README and f"{DEMO_OUT}/report/report.html" in README
    patterns = [line.strip().rstrip("/") for line in (REPO_ROOT / ".gitignore").read_text().splitlines()]
    assert any(fnmatch.fnmatch(str(DEMO_OUT), pattern) for pattern in patterns if pattern), patterns


def test_readme_test_command_is_what_ci_runs() -> None:
    test_line = next(line for line in COMMANDS if "pytest" in line)
    extras = re.search(r'pip install "\.\[([^\]]+)\]"', test_line)
    assert extras, test_line
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f'pip install -q ".[{extras.group(1)}]"' in ci
    assert "pytest -n 2" in test_line and "pytest -n 2" in ci
