"""One registry home (issue 36, item 4): env ids are formed and read apart only in ``trace_envs/registry/ids.py``,
and a synthesis ``manifest.json`` is parsed only by the one ``Manifest`` model in ``trace_envs/registry/manifest.py``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from trace_envs.registry import ids

from .conftest import REPO_ROOT

IDS_MODULE = "trace_envs/registry/ids.py"
MANIFEST_MODULE = "trace_envs/registry/manifest.py"
SPLITTERS = {"split", "rsplit", "partition", "rpartition", "removeprefix", "removesuffix", "startswith"}


def _library() -> Iterator[tuple[str, ast.Module]]:
    for package in ("trace_envs", "generated_envs"):
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            yield path.relative_to(REPO_ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _id_text(text: str) -> bool:
    """Whether a string piece is part of an id's grammar: the ``trace/`` namespace or a ``-v`` version."""
    return text.startswith("trace/") or text.endswith("-v") or bool(text.endswith("-v0") and "/" not in text)


def _starts_a_name(node: ast.JoinedStr, index: int) -> bool:
    """Whether the f-string piece after ``node.values[index]`` starts with ``/`` (``{NAMESPACE}/...``)."""
    after = node.values[index + 1] if index + 1 < len(node.values) else None
    return isinstance(after, ast.Constant) and str(after.value).startswith("/")


def id_formation(tree: ast.Module, path: str) -> list[str]:
    """``path:line`` of every place that forms an id (an f-string or ``+`` with ``trace/`` or ``-v``) or reads
    one apart (``.split("/")`` of an id, ``.rsplit("-v")``, ``.startswith("trace/")``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and len(node.values) > 1:
            pieces = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            namespaced = any(
                isinstance(v, ast.FormattedValue) and ast.unparse(v.value) == "NAMESPACE" and _starts_a_name(node, i)
                for i, v in enumerate(node.values)
            )
            if namespaced or any(_id_text(p) for p in pieces):
                found.append(f"{path}:{node.lineno} forms an id: {ast.unparse(node)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            sides = [
                s.value for s in (node.left, node.right) if isinstance(s, ast.Constant) and isinstance(s.value, str)
            ]
            if any(_id_text(s) for s in sides):
                found.append(f"{path}:{node.lineno} forms an id: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SPLITTERS:
            argument = node.args[0] if node.args else None
            text = argument.value if isinstance(argument, ast.Constant) and isinstance(argument.value, str) else None
            receiver = ast.unparse(node.func.value)
            if text is not None and (
                text in ("-v", "trace/", "trace")
                or (text == "/" and ("env_id" in receiver or receiver.endswith("_id")))
            ):
                found.append(f"{path}:{node.lineno} reads an id apart: {ast.unparse(node)}")
    return found


def test_env_ids_are_formed_and_read_only_in_the_ids_module() -> None:
    found = [line for path, tree in _library() if path != IDS_MODULE for line in id_formation(tree, path)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        'env_id = f"trace/{name}-v0"',
        'env_id = f"{NAMESPACE}/{name}-v0"',
        'boxed = f"{name}-boxed-v{version}"',
        'env_id = "trace/" + name + "-v0"',
        "name, _, version = env_id.rpartition('-v')",
        'tail = synthesized_id.split("/", 1)[1]',
        'ours = env_id.startswith("trace/")',
    ],
)
def test_the_scan_catches_an_id_formed_elsewhere(source: str) -> None:
    assert id_formation(ast.parse(source), "x.py")


def test_the_scan_leaves_paths_and_literal_ids_alone() -> None:
    source = 'parts = real.split("/")\nENV = "trace/device-v0"\nurl = f"http://{host}/v1"\n'
    assert id_formation(ast.parse(source), "x.py") == []


def test_the_ids_module_forms_and_reads_every_kind_of_id() -> None:
    assert ids.env_id("order-cancel") == "trace/order-cancel-v0"
    assert ids.capability_env_id("unit_conversion") == "trace/unit-conversion-v0"
    assert ids.capability_env_id("unit_conversion", "retail") == "trace/retail-unit-conversion-v0"
    assert ids.prefixed_id("trace/unit-conversion-v0", "retail") == "trace/retail-unit-conversion-v0"
    assert ids.boxed_twin_id("trace/order-cancel-v2") == "trace/order-cancel-boxed-v2"
    assert ids.candidate_env_id("ab" * 32) == "trace/candidate-abababababab-v0"
    assert ids.parse_env_id("trace/multi-step-v10") == ("trace", "multi-step", 10)
    assert ids.parse_env_id("CartPole") == (None, "CartPole", None)
    assert ids.is_trace_id("trace/x-v0") and not ids.is_trace_id("CartPole-v1")
    with pytest.raises(ValueError, match="not an env id"):
        ids.parse_env_id("trace/a b-v0")


def _manifest_reads(tree: ast.Module, path: str) -> list[str]:
    """``json.load``/``json.loads`` calls and ``model_validate*`` of a ``Manifest`` in a module that names the
    manifest file (``MANIFEST``, ``manifest.json``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            call = ast.unparse(node.func)
            if call in ("json.load", "json.loads") and "manifest" in ast.unparse(node).lower():
                found.append(f"{path}:{node.lineno} parses a manifest as raw JSON: {ast.unparse(node)}")
            if call.startswith("Manifest.model_validate"):
                found.append(f"{path}:{node.lineno} reads a manifest outside its module: {ast.unparse(node)}")
    return found


def test_one_manifest_model_read_in_one_module() -> None:
    models = [
        f"{path}:{node.lineno}"
        for path, tree in _library()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name == "Manifest"
    ]
    assert models == [f"{MANIFEST_MODULE}:{_line_of_manifest()}"]
    found = [line for path, tree in _library() if path != MANIFEST_MODULE for line in _manifest_reads(tree, path)]
    assert not found, "\n".join(found)


def _line_of_manifest() -> int:
    tree = ast.parse((REPO_ROOT / MANIFEST_MODULE).read_text(encoding="utf-8"))
    return next(n.lineno for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Manifest")


def test_every_manifest_name_is_the_registry_one() -> None:
    from trace_envs.registry import manifest
    from trace_envs.synthesis import manifest as writing

    for name in ("Manifest", "ModuleEntry", "Rejection", "GateSummary", "MANIFEST", "MANIFEST_FORMAT"):
        assert getattr(writing, name) is getattr(manifest, name)
    assert writing.ModuleChanged is manifest.UnvalidatedModule


def test_the_box_reads_the_registry_s_plugin_group(tmp_path: Path) -> None:
    from trace_envs.box.protocol import PLUGIN_GROUP
    from trace_envs.registry.sources import ENTRY_POINT_GROUP

    assert PLUGIN_GROUP == ENTRY_POINT_GROUP


def test_the_box_s_old_box_installed_env_warns_and_is_the_registry_s() -> None:
    import trace_envs.box
    from trace_envs.registry import box_installed_env

    with pytest.warns(DeprecationWarning, match=r"trace_envs\.registry\.box_installed_env"):
        old = trace_envs.box.box_installed_env
    assert old is box_installed_env
