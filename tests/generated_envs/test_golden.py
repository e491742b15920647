"""Every shipped env's tasks, solutions, transcripts and gold hashes equal the recorded fingerprints
(``golden.py`` explains them and rewrites the file when a change to tasks is intended)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .golden import GOLDEN_PATH, SEEDS, key, record, targets

GOLDEN: dict[str, list[dict[str, Any]]] = json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))


def test_every_shipped_env_and_variant_is_recorded() -> None:
    assert sorted(GOLDEN) == sorted(key(env_id, kwargs) for env_id, kwargs in targets())


@pytest.mark.parametrize(("env_id", "kwargs"), targets(), ids=lambda value: str(value))
def test_tasks_match_the_recorded_fingerprints(env_id: str, kwargs: dict[str, Any]) -> None:
    recorded = GOLDEN[key(env_id, kwargs)]
    assert len(recorded) == len(SEEDS)
    for seed, (now, then) in enumerate(zip(record(env_id, kwargs), recorded, strict=True)):
        changed = {field: (then[field], now[field]) for field in then if now.get(field) != then[field]}
        assert not changed, f"{key(env_id, kwargs)} seed {seed}: changed {changed}"
