"""The box's file-system view: which folders Landlock lets it read, and which it may only list.

A box reads the interpreter, the standard library and the trusted packages, but of trace-envs itself only its
:data:`KIT`: the contract (``core``), the targets' tool kits (``domains``) and the box's own server. The rest of
the package stays closed, ``targets`` above all, which holds the benchmarks' own tasks (the device target's
test split among them): a module that could read them could key its rewards or its replies on evaluation data.

Landlock only allows, so a folder is hidden by allowing around it: each folder on the way from an allowed root to
a hidden path may be listed (names only, no file's content), and each of its other entries is read as before.
Paths are compared resolved, so a link to a folder on the way (a venv's ``lib64``) does not open it again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

KIT = ("core", "domains", "box")
"""The parts of the trace_envs package a box reads (what a module may import, and the server)."""


def hidden_parts(package: Path) -> list[str]:
    """Every entry of the ``package`` folder but :data:`KIT`, resolved: what the box may not read of it."""
    return sorted(os.path.realpath(entry) for entry in package.iterdir() if entry.name not in KIT)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def carve(roots: Iterable[str], hidden: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(readable, listable)``: rules that cover everything under ``roots`` except the ``hidden`` paths. A root
    with no hidden path under it stays one readable rule; the folders on the way to one become listable only."""
    secret = [os.path.realpath(path) for path in hidden]
    readable: list[str] = []
    listable: list[str] = []
    seen: set[str] = set()

    def visit(path: str) -> None:
        if path in seen or any(_within(path, h) for h in secret):
            return
        seen.add(path)
        if not any(_within(h, path) for h in secret):
            readable.append(path)
            return
        listable.append(path)
        try:
            entries = sorted(os.scandir(path), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            visit(os.path.realpath(entry.path))

    for root in roots:
        visit(os.path.realpath(root))
    return readable, listable
