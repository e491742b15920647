"""A missing API key is found when the client is built (not after a minute of retries), and the error
names the variable to set; endpoints other than the provider's hosted API need no key."""

from __future__ import annotations

import pytest

from trace_envs.llm import MissingAPIKey, ModelConfig, make_chat_model

pytest.importorskip("anthropic")
pytest.importorskip("openai")

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "MY_KEY")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
        ("openai:#gpt-4o", "OPENAI_API_KEY"),
        ("openai:https://api.openai.com/v1#gpt-4o", "OPENAI_API_KEY"),
    ],
)
def test_hosted_api_without_a_key_fails_at_once_naming_the_variable(spec: str, variable: str) -> None:
    with pytest.raises(MissingAPIKey, match=f"set \\${variable}") as caught:
        make_chat_model(spec, timeout_s=1)
    assert spec.split("#")[-1].split(":")[-1] in str(caught.value)


def test_a_custom_key_variable_is_the_one_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MissingAPIKey, match=r"set \$MY_KEY"):
        make_chat_model("anthropic:claude-sonnet-4-6", api_key_env="MY_KEY")
    monkeypatch.setenv("MY_KEY", "k")
    assert make_chat_model("anthropic:claude-sonnet-4-6", api_key_env="MY_KEY").spec == "anthropic:claude-sonnet-4-6"


def test_keys_from_the_environment_or_the_config_are_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_chat_model("openai:#gpt-4o", api_key="k").spec == "openai:#gpt-4o"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert make_chat_model("anthropic:claude-sonnet-4-6").spec == "anthropic:claude-sonnet-4-6"


@pytest.mark.parametrize(
    ("spec", "options"),
    [
        ("openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-4B", {}),
        ("openai:http://10.0.0.5:8000/v1#Qwen/Qwen3-4B", {}),
        ("anthropic:claude-sonnet-4-6", {"base_url": "http://127.0.0.1:9/"}),
    ],
)
def test_other_endpoints_need_no_key(spec: str, options: dict[str, str]) -> None:
    config = ModelConfig.parse(spec, **options)
    config.check_api_key()
    assert make_chat_model(config).spec == config.spec


def test_the_sdk_base_url_variable_counts_as_a_custom_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    ModelConfig.parse("openai:#served").check_api_key()
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    with pytest.raises(MissingAPIKey, match="OPENAI_API_KEY"):
        ModelConfig.parse("openai:#gpt-4o").check_api_key()
