"""The trajectory store: round trip, torn last lines, resume keys, dedupe, pandas/datasets views."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trace_envs.llm import Usage
from trace_envs.rollout import (
    FORMAT,
    EpisodeRecord,
    StoreWarning,
    ToolCallRecord,
    TrajectoryStore,
    episodes_dataset,
    episodes_frame,
    iter_episodes,
    load_episodes,
)
from trace_envs.rollout.store import finished_keys

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
RECORDS = st.builds(
    EpisodeRecord,
    env_id=st.sampled_from(["trace/order-cancel-v0", "trace/tau2-retail-v0"]),
    seed=st.integers(0, 10_000),
    sample=st.integers(0, 3),
    policy=st.sampled_from(["oracle", "openai:http://127.0.0.1:8000/v1#m"]),
    messages=st.lists(
        st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": TEXT}), max_size=4
    ),
    tool_calls=st.lists(
        st.builds(
            ToolCallRecord, step=st.integers(0, 9), name=TEXT, arguments=st.dictionaries(TEXT, JSONISH, max_size=3)
        ),
        max_size=3,
    ),
    reward=st.floats(0, 1),
    success=st.booleans(),
    components=st.dictionaries(st.sampled_from(["db", "communicate"]), st.floats(0, 1)),
    usage=st.builds(Usage, input_tokens=st.integers(0, 10**6), output_tokens=st.integers(0, 10**6)),
    metadata=st.dictionaries(TEXT, JSONISH, max_size=2),
)


def record(seed: int, **fields: object) -> EpisodeRecord:
    return EpisodeRecord(env_id="trace/order-cancel-v0", seed=seed, policy="oracle", **fields)  # type: ignore[arg-type]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=st.lists(RECORDS, max_size=5))
def test_round_trip(tmp_path: Path, records: list[EpisodeRecord]) -> None:
    path = tmp_path / f"store-{len(list(tmp_path.iterdir()))}.jsonl"
    with TrajectoryStore(path, fsync=False) as store:
        for item in records:
            store.append(item)
    assert list(iter_episodes(path)) == records
    lines = path.read_text(encoding="utf-8").splitlines()  # unicode line separators are escaped in records
    assert len(lines) == len(records)
    assert all(json.loads(line)["format"] == FORMAT for line in lines)


def test_torn_last_line_is_ignored_then_repaired(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "x.jsonl"
    with TrajectoryStore(path) as store:
        store.append(record(0))
        store.append(record(1))
    whole = path.read_bytes()
    path.write_bytes(whole + record(2).model_dump_json().encode()[:37])  # a kill in the middle of a write
    with pytest.warns(StoreWarning, match=r"x.jsonl:3: skipping a torn last line \(37 bytes\)"):
        assert [r.seed for r in iter_episodes(path)] == [0, 1]  # readers (analyze) used to skip it silently
    store = TrajectoryStore(path)
    with pytest.warns(UserWarning, match="torn last line"):
        store.open()
    assert path.read_bytes() == whole
    store.append(record(2))
    store.close()
    assert [r.seed for r in iter_episodes(path)] == [0, 1, 2]
    path.write_bytes(b'{"env_id": "x"')  # nothing but a torn line
    store = TrajectoryStore(path)
    with pytest.warns(UserWarning, match="torn last line"):
        assert store.repair() == len(b'{"env_id": "x"')
    store.close()
    assert path.read_bytes() == b""


def test_bad_line_in_the_middle_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(record(0).model_dump_json() + "\nnot a record\n" + record(1).model_dump_json() + "\n")
    with pytest.warns(StoreWarning, match=r"x.jsonl:2: skipping"):
        assert [r.seed for r in iter_episodes(path)] == [0, 1]


def test_finished_keys_dedupe_and_failed_episodes(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    with TrajectoryStore(path) as store:
        store.append(record(0, error="RetriesExhausted: 503"))
        store.append(record(1, reward=0.0))
        store.append(record(0, reward=1.0, success=True))
        store.append(record(2, error="boom"))
        assert store.finished_keys() == {
            ("trace/order-cancel-v0", 0, 0, "oracle"),
            ("trace/order-cancel-v0", 1, 0, "oracle"),
        }
    finished = load_episodes(path)
    assert sorted((r.seed, r.success) for r in finished) == [(0, True), (1, False)]
    everything = load_episodes(path, include_failed=True)
    assert sorted(r.seed for r in everything) == [0, 1, 2]
    assert len(load_episodes(path, include_failed=True, dedupe=False)) == 4


def test_pandas_and_datasets_views(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    with TrajectoryStore(path) as store:
        store.append(record(0, messages=[{"role": "user", "content": "hi"}], components={"db": 1.0}, success=True))
        store.append(
            record(1, tool_calls=[ToolCallRecord(step=0, name="get_order_details", arguments={"order_id": "#W1"})])
        )
    frame = episodes_frame(path)
    assert list(frame["seed"]) == [0, 1] and list(frame["success"]) == [True, False]
    assert json.loads(frame["messages"][0]) == [{"role": "user", "content": "hi"}]
    dataset = episodes_dataset(path)
    assert dataset.num_rows == 2
    assert json.loads(dataset[1]["tool_calls"])[0]["arguments"] == {"order_id": "#W1"}
    assert json.loads(dataset[0]["components"]) == {"db": 1.0}


def test_a_complete_record_without_its_newline_is_not_finished(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(record(0).model_dump_json().encode() + b"\n" + record(1).model_dump_json().encode())
    assert finished_keys(path) == {("trace/order-cancel-v0", 0, 0, "oracle")}
    store = TrajectoryStore(path)
    with pytest.warns(UserWarning, match="torn last line"):
        store.open()
    store.close()
    assert [r.seed for r in iter_episodes(path)] == [0]


@pytest.mark.parametrize("mode", ["background", "inline"])
def test_fsync_modes_sync_every_line_before_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """Inline fsyncs each append; background coalesces a burst of appends into few fsyncs (one per
    ``sync_interval_s``); both have fsync'd the last line once ``close()`` returns."""
    import trace_envs.rollout.store as store_module

    synced_sizes: list[int] = []
    real_fsync = store_module.os.fsync

    def counting_fsync(fd: int) -> None:
        real_fsync(fd)
        synced_sizes.append(store_module.os.fstat(fd).st_size)

    monkeypatch.setattr(store_module.os, "fsync", counting_fsync)
    path = tmp_path / "x.jsonl"
    store = TrajectoryStore(path, fsync=mode, sync_interval_s=60.0)  # type: ignore[arg-type]
    with store:
        for seed in range(50):
            store.append(record(seed))
        during = len(synced_sizes)
    if mode == "inline":
        assert during == 50
    else:
        assert 0 <= during <= 1  # the first append's fsync at most; the rest wait out the interval
    assert synced_sizes[-1] == path.stat().st_size  # close() fsync'd everything
    assert len(load_episodes(path)) == 50


def test_negative_sync_interval_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sync_interval_s"):
        TrajectoryStore(tmp_path / "x.jsonl", sync_interval_s=-1)


def test_reading_a_missing_store_names_the_path_and_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "typo.jsonl"
    for read in (load_episodes, iter_episodes, episodes_frame):
        with pytest.raises(FileNotFoundError, match=r"typo\.jsonl does not exist.*trace-envs rollout"):
            list(read(missing))  # type: ignore[operator]
    assert finished_keys(missing) == set()  # resuming into a new store is not an error
