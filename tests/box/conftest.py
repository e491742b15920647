"""Shared pieces of the box tests: the good module, hostile variants of it, and synthesis folders."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

from ..conftest import vouching_entry

GOOD_MODULE = Path(__file__).parents[1] / "synthesis" / "modules" / "retail_cancel.py"
GOOD = GOOD_MODULE.read_text(encoding="utf-8")
CLASS = "RetailCancelEnv"

if not sys.platform.startswith("linux"):
    pytest.skip("boxes need Linux", allow_module_level=True)


def with_payload(payload: str, *, at: str = "generate") -> str:
    """The good module with ``payload`` (indented code, ``self`` and ``rng``/``action`` in scope) run first
    in its ``generate`` (or ``step``), or at import (``at="import"``)."""
    if at == "import":
        return GOOD + "\n" + payload + "\n"
    body = "\n".join("    " + line for line in payload.strip("\n").splitlines())
    if at == "generate":
        return GOOD + (
            f"\n\n_generate = {CLASS}.generate\n\n\ndef _hostile_generate(self, rng):\n{body}\n"
            f"    return _generate(self, rng)\n\n\n{CLASS}.generate = _hostile_generate\n"
        )
    return GOOD + (
        f"\n\n_step = {CLASS}.step\n\n\ndef _hostile_step(self, action):\n{body}\n"
        f"    return _step(self, action)\n\n\n{CLASS}.step = _hostile_step\n"
    )


def synthesis_folder(folder: Path, modules: dict[str, str]) -> Path:
    """A folder as ``trace-envs synthesize`` writes it: the modules and a manifest vouching for each."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = {}
    for name, source in modules.items():
        (folder / name).write_text(source, encoding="utf-8")
        entries[name] = vouching_entry(name, source)
    manifest = {"format": "trace-envs/synthesis@1", "modules": entries, "rejected": {}}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


@pytest.fixture
def clean_ids() -> Iterator[list[str]]:
    """Ids a test registers (appended to the list), unregistered after it."""
    ids: list[str] = []
    yield ids
    for env_id in ids:
        gym.registry.pop(env_id, None)
