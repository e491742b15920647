"""Model spec strings and ModelConfig."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trace_envs.llm import ModelConfig

NAME = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,30}", fullmatch=True)


def test_parse_each_provider() -> None:
    anthropic = ModelConfig.parse("anthropic:claude-sonnet-4-5")
    assert (anthropic.provider, anthropic.model, anthropic.base_url) == ("anthropic", "claude-sonnet-4-5", None)
    openai = ModelConfig.parse("openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-4B")
    assert (openai.base_url, openai.model) == ("http://127.0.0.1:8000/v1", "Qwen/Qwen3-4B")
    assert ModelConfig.parse("openai:#gpt-4o").base_url is None
    hf = ModelConfig.parse("hf:./models/tiny@precondition_verification")
    assert (hf.model, hf.adapter) == ("./models/tiny", "precondition_verification")


@given(model=NAME, adapter=st.none() | NAME, port=st.integers(1, 65535))
def test_spec_round_trips(model: str, adapter: str | None, port: int) -> None:
    for config in (
        ModelConfig(provider="anthropic", model=model),
        ModelConfig(provider="openai", model=model, base_url=f"http://127.0.0.1:{port}/v1"),
        ModelConfig(provider="hf", model=model, adapter=adapter),
    ):
        assert ModelConfig.parse(config.spec) == config


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("claude", "not one of"),
        ("vertex:gemini", "unknown provider"),
        ("openai:http://host:8000/v1", "needs the endpoint and the model"),
        ("hf:path@", "nothing after '@'"),
        ("openai:ftp://x#m", "base_url must start with http"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        ModelConfig.parse(spec)


def test_overrides_and_unknown_fields() -> None:
    config = ModelConfig.parse("anthropic:claude-haiku-4-5", timeout_s=5, cache_dir="/tmp/c")
    assert config.timeout_s == 5 and config.cache_dir == "/tmp/c"
    with pytest.raises(ValueError, match="timeout"):
        ModelConfig.parse("anthropic:m", timeoutt=3)


def test_named_adapter_resolution(tmp_path) -> None:
    (tmp_path / "adapters" / "cap").mkdir(parents=True)
    config = ModelConfig.parse("hf:base@cap", adapter_root=str(tmp_path / "adapters"))
    assert config.resolve_adapter() == tmp_path / "adapters" / "cap"
    with pytest.raises(FileNotFoundError, match="adapter 'nope' not found"):
        ModelConfig.parse("hf:base@nope", adapter_root=str(tmp_path)).resolve_adapter()
