"""Response cache keys and storage; prices and cost accounting."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trace_envs.core import canonical_hash
from trace_envs.llm import ChatResponse, Price, PriceTable, ResponseCache, Usage, cache_key

from .conftest import MESSAGES, TOOLS

PARAMS = st.dictionaries(st.sampled_from(["temperature", "top_p", "max_tokens", "seed"]), st.integers(0, 100))


@given(params=PARAMS)
def test_cache_key_ignores_dict_order_but_not_content(params: dict[str, int]) -> None:
    reordered = dict(reversed(list(params.items())))
    assert cache_key("m", MESSAGES, TOOLS, params) == cache_key("m", MESSAGES, TOOLS, reordered)
    assert cache_key("m", MESSAGES, TOOLS, params) != cache_key("m2", MESSAGES, TOOLS, params)
    assert cache_key("m", MESSAGES, TOOLS, params) != cache_key("m", MESSAGES[:1], TOOLS, params)
    assert cache_key("m", MESSAGES, TOOLS, params) != cache_key("m", MESSAGES, None, params)
    request = {"format": 1, "model": "m", "messages": MESSAGES, "tools": TOOLS, "sampling": params}
    assert cache_key("m", MESSAGES, TOOLS, params) == canonical_hash(request)  # keys of existing caches still hit


def test_cache_round_trip_and_damaged_entry(tmp_path) -> None:
    cache = ResponseCache(tmp_path)
    response = ChatResponse(
        content="hi", tool_calls=[{"id": "c1", "name": "t", "arguments": {"a": 1}}], usage=Usage(input_tokens=3)
    )
    key = cache_key("m", MESSAGES, None, {})
    assert cache.get(key) is None
    cache.put(key, response)
    assert cache.get(key) == response
    assert len(cache) == 1
    (tmp_path / key[:2] / f"{key}.json").write_text("{not json")
    assert cache.get(key) is None  # a damaged entry is a miss, not a crash


def test_price_table_longest_prefix_and_costs() -> None:
    table = PriceTable()
    assert table.lookup("claude-opus-4-5-20251101") == table.prices["claude-opus-4-5"]
    assert table.lookup("claude-opus-4-1") == table.prices["claude-opus-4"]
    assert table.lookup("Qwen/Qwen3-4B") is None
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000
    )
    assert table.cost("claude-sonnet-4-5", usage) == pytest.approx(3 + 15 + 0.3 + 3.75)
    assert table.cost("unknown-model", usage) == 0.0
    assert Price(input=1, output=2, cache_read=0.5, cache_write=0).cost(usage) == pytest.approx(3.5)


def test_price_file_overrides(tmp_path, monkeypatch) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"my-model": {"input": 1.0, "output": 2.0}}))
    monkeypatch.setenv("TRACE_ENVS_PRICES", str(path))
    table = PriceTable.default()
    assert table.lookup("my-model-v2") == Price(input=1.0, output=2.0)
    assert "claude-sonnet-4" in table.prices
    path.write_text(json.dumps({"m": {"inputt": 1}}))
    with pytest.raises(ValueError, match="price file"):
        PriceTable.from_file(path)
