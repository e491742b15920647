"""UnicodeText accepts any string; vector envs return the right text in sync and async modes."""

from __future__ import annotations

import copy

import gymnasium as gym
import pytest
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
from hypothesis import given
from hypothesis import strategies as st

import trace_envs  # noqa: F401  (registers the envs)
from trace_envs.core import MAX_TEXT_LENGTH, UnicodeText
from trace_envs.core.spaces import clip_text


@given(st.text(max_size=300))
def test_contains_any_unicode_text(text: str) -> None:
    assert UnicodeText().contains(text)


def test_bounds_and_samples() -> None:
    space = UnicodeText(max_length=5, seed=0)
    assert not space.contains("toolong")
    assert not space.contains(b"bytes")
    assert all(space.contains(space.sample()) for _ in range(20))
    assert space == UnicodeText(max_length=5) and space != UnicodeText(max_length=6)
    clipped = clip_text("x" * (MAX_TEXT_LENGTH + 10))
    assert len(clipped) == MAX_TEXT_LENGTH and clipped.endswith("[truncated]")


@given(st.lists(st.text(max_size=50), min_size=3, max_size=3))
def test_shared_memory_round_trips_unicode(values: list[str]) -> None:
    space = UnicodeText(max_length=64)
    memory = create_shared_memory(space, n=3)
    for index, value in enumerate(values):
        write_to_shared_memory(space, index, value, memory)
    live = read_from_shared_memory(space, memory, n=3)
    assert tuple(live) == tuple(values)
    write_to_shared_memory(space, 0, "changed ✓", memory)
    assert live[0] == "changed ✓"  # a live view, as AsyncVectorEnv expects of its buffer
    assert copy.deepcopy(live) == ("changed ✓", *values[1:])
    assert type(copy.deepcopy(live)) is tuple


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_returns_the_envs_own_observations(mode: str) -> None:
    envs = gym.make_vec("trace/order-cancel-v0", num_envs=3, vectorization_mode=mode)
    try:
        observations, _infos = envs.reset(seed=[7, 8, 9])
        expected = tuple(gym.make("trace/order-cancel-v0").reset(seed=s)[0] for s in (7, 8, 9))
        assert tuple(observations) == expected
        actions = ("Could you tell me your order id? ✓", "Vielen Dank für Ihre Geduld", "中文 message")
        observations, _rewards, _terminated, _truncated, _ = envs.step(actions)
        assert len(observations) == 3
        assert all(isinstance(o, str) and o for o in observations)
        assert observations[0].startswith("It's #W")
    finally:
        envs.close()
