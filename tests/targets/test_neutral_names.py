"""No public name, YAML key, CLI flag or API field outside ``trace_envs/targets`` and ``trace_envs/domains`` names
one target: a third-party target takes its data through ``data`` and its split through ``split`` like the
shipped ones. The old names stay one release as deprecated aliases that say what to use."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest

from trace_envs.pipeline.config import parse_config
from trace_envs.registry.targets import targets
from trace_envs.synthesis import GateContext, SynthesisSettings
from trace_envs.synthesis.module_checks import check_target

from ..conftest import REPO_ROOT

OWN_FOLDERS = ("trace_envs/targets/", "trace_envs/domains/")
DEPRECATED = {"tau2_data": "data", "device_split": "split", "--tau2-data": "--data"}
"""The old names, kept for one release as aliases of the new ones (see CHANGELOG.md)."""
OTHER_MEANINGS = {
    "device": "a torch device (the model clients' and the training config's)",
    "per_device_train_batch_size": "TRL's name of the batch per accelerator",
}
TARGET_COMMANDS = {"trace_envs/cli/tau2.py": "the tau2 target's own tools: tau2-replay, tau2-evaluate, tau2-generate"}
"""Files whose public names are a target's own tools (they read that target's files), not the library's API."""


def target_words() -> set[str]:
    """Every registered target's name and aliases, and every family name."""
    words = set()
    for spec in targets().values():
        words |= {spec.name, *spec.aliases, *([spec.family] if spec.family else [])}
    return words


def _names_one_target(kind: str, name: str, words: set[str]) -> bool:
    """Whether a public name or flag holds a target word as one of its ``_``/``-`` separated parts (a constant's
    string value: is one)."""
    if kind == "constant value":
        return name in words
    if name in DEPRECATED or name in OTHER_MEANINGS or (name.startswith("_") and not name.startswith("--")):
        return False
    parts = set(re.split(r"[_\-.]+", name.lower().strip("-")))
    return bool(parts & words) or name.lower().strip("-") in words


def _public_names(tree: ast.Module) -> list[tuple[int, str, str]]:
    """(line, kind, name) of every function, class, argument, class field, CLI flag and module constant, and
    the value of a module constant that is a plain string (a folder name, a default)."""
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.lineno, "name", node.name))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [(a.lineno, "argument", a.arg) for a in [*node.args.args, *node.args.kwonlyargs]]
        if isinstance(node, ast.ClassDef):
            found += [
                (item.lineno, "field", item.target.id)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            ]
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "Option":
            found += [
                (a.lineno, "flag", a.value)
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
            ]
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            names = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(node.lineno, "constant", t.id) for t in names if isinstance(t, ast.Name)]
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                found.append((node.lineno, "constant value", node.value.value))
    return found


def target_names_in(source: str, path: str, words: set[str]) -> list[str]:
    """Every public name of ``source`` that names one target, as ``path:line kind name``."""
    return [
        f"{path}:{line} the {kind} {name!r} names a target: use a target-neutral name"
        for line, kind, name in _public_names(ast.parse(source))
        if _names_one_target(kind, name, words)
    ]


def test_no_public_name_outside_the_targets_names_one() -> None:
    words = target_words()
    problems = []
    for path in sorted((REPO_ROOT / "trace_envs").rglob("*.py")):
        rel = str(path.relative_to(REPO_ROOT))
        if not rel.startswith(OWN_FOLDERS) and rel not in TARGET_COMMANDS:
            problems += target_names_in(path.read_text(encoding="utf-8"), rel, words)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "source",
    [
        "def rollout(tau2_folder: str) -> None:\n    pass",
        "class Settings:\n    retail_split: str",
        "GENERATED = 'tau2'",
        "def airline_tasks() -> None:\n    pass",
        "x = typer.Option('--device-file')",
    ],
)
def test_the_scan_catches_a_name_of_one_target(source: str) -> None:
    assert target_names_in(source, "m.py", target_words())


def test_the_scan_lets_neutral_names_and_the_deprecated_aliases_be() -> None:
    source = (
        "def f(data: str, split: str, tau2_data: str = '', device: str = 'cpu') -> None:\n    pass\nDOC = 'a tau2 task'"
    )
    assert target_names_in(source, "m.py", target_words()) == []


def _config(**top: object) -> dict[str, object]:
    return {"targets": ["device"], "rollout": {"policy": "oracle"}, "train": {"model": "tiny"}, **top}


def test_the_pipeline_keys_of_old_are_moved_with_a_warning_that_says_what_to_use(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="tau2_data is deprecated .*: use data"):
        config = parse_config(_config(tau2_data=str(tmp_path)))
    assert config.data == tmp_path
    with pytest.warns(DeprecationWarning, match=r"rollout\.device_split is deprecated .*: use rollout\.split"):
        config = parse_config(_config(rollout={"policy": "oracle", "device_split": "train"}))
    assert config.rollout.split == "train"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ValueError, match="give only data"):
            parse_config(_config(tau2_data="a", data="b"))


def test_a_split_is_checked_against_every_target() -> None:
    with pytest.raises(
        ValueError, match=r"evaluate\.split: 'all' is not a split of the target retail; use one of base"
    ):
        parse_config(_config(targets=["device", "retail"], evaluate={"split": "all"}))
    assert parse_config(_config(targets=["device", "retail"], evaluate={"split": "test"})).evaluate.split == "test"


def test_the_api_fields_of_old_are_moved_with_a_warning(tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="use data"):
        assert SynthesisSettings(tau2_data=tmp_path).data == tmp_path  # type: ignore[call-arg]
    with pytest.warns(DeprecationWarning, match=r"GateContext\.tau2_data is deprecated .*: use GateContext\.data"):
        assert GateContext(target="device", tau2_data=tmp_path).data == tmp_path
    with pytest.warns(DeprecationWarning, match=r"check_target\(\): tau2_data is deprecated .*: use check_target"):
        check_target("device", tau2_data=None)  # type: ignore[call-arg]


def test_the_old_flag_is_a_hidden_alias_that_says_what_to_use(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from trace_envs.cli import build_app

    module = tmp_path / "absent.py"  # refused after the options are read: no gate runs
    old = CliRunner().invoke(build_app(), ["validate", str(module), "-t", "device", "--tau2-data", str(tmp_path)])
    said = " ".join(old.output.split())
    assert "--tau2-data is deprecated and will be removed in the next release: use --data" in said
    assert old.exit_code == 2 and "absent.py does not exist" in said
    both = CliRunner().invoke(build_app(), ["validate", str(module), "--data", "a", "--tau2-data", "b"])
    assert both.exit_code == 2 and "give only --data" in " ".join(both.output.split())
    shown = CliRunner().invoke(build_app(), ["validate", "--help"]).output
    assert "--data" in shown and "--tau2-data" not in shown


def test_the_command_line_shows_a_deprecated_name_as_a_warning_line() -> None:
    from trace_envs.cli.warning_lines import user_warning_line
    from trace_envs.problems import RenamedWarning

    message = "tau2_data is deprecated and will be removed in the next release: use data"
    assert user_warning_line(message, RenamedWarning) == f"warning: {message}"
    assert issubclass(RenamedWarning, DeprecationWarning)
