"""Stage keys: the library's one canonical JSON, and a format number that retires markers of older keys."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from trace_envs.core import canonical_hash
from trace_envs.pipeline.cache import CACHE_FORMAT, StageMarker, folder_digest, is_finished, stage_key, write_marker

SECTION = {"policy": "oracle", "title": "TRACE sur τ²-bench", "seeds": [0, 1]}
INPUTS = {"rollout": "ab" * 32}


def format_1_key(stage: str, version: str, section: object, inputs: dict[str, str]) -> str:
    """The key before format 2: the cache's own JSON (ASCII-escaped, no format field)."""
    payload = {"stage": stage, "version": version, "config": section, "inputs": inputs}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_key_is_the_canonical_hash_of_the_stage_inputs_with_the_format() -> None:
    key = stage_key("analyze", "1.0", SECTION, INPUTS)
    assert CACHE_FORMAT == 2
    expected = {"format": 2, "stage": "analyze", "version": "1.0", "config": SECTION, "inputs": INPUTS}
    assert key == canonical_hash(expected)
    assert key != stage_key("analyze", "1.0", {**SECTION, "seeds": [0]}, INPUTS)


def test_a_marker_written_under_the_old_key_is_not_taken_as_finished(tmp_path: Path) -> None:
    folder = tmp_path / "analyze"
    folder.mkdir()
    (folder / "analysis.json").write_text("{}", encoding="utf-8")
    old = format_1_key("analyze", "1.0", SECTION, INPUTS)
    write_marker(folder, StageMarker(stage="analyze", key=old, status="done", digest=folder_digest(folder)))
    assert is_finished(folder, old) is not None  # the marker itself is sound
    assert is_finished(folder, stage_key("analyze", "1.0", SECTION, INPUTS)) is None  # so it runs again
