"""Model specs: one string (``anthropic:<model>``, ``openai:<base_url>#<model>``, ``hf:<path>[@<adapter>]``)
or the equivalent pydantic :class:`ModelConfig`, which also holds timeouts, retries, cache and prices."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import MissingAPIKey, ModelFolderMissing

Provider = Literal["anthropic", "openai", "hf"]
MODEL_SPEC_FORMS = "anthropic:<model>, openai:<base_url>#<model>, hf:<path>[@<adapter>]"
API_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
"""Where each provider's key is read from by default."""
HOSTED_API = {
    "anthropic": ("ANTHROPIC_BASE_URL", "api.anthropic.com"),
    "openai": ("OPENAI_BASE_URL", "api.openai.com"),
}
"""Per provider: the SDK's base-URL variable and the host of the hosted API, the endpoint that needs a key
(a vLLM server, a proxy or a local test server gets a placeholder key when none is set)."""


def looks_like_local_path(model: str) -> bool:
    """Whether an hf model name is meant as a folder (``./m``, ``/abs``, ``~/m``, ``a/b/c``, ``m/``) rather than a
    hub id (``Qwen/Qwen3-0.6B``): the one rule every check of a local model folder uses."""
    return model.startswith((".", "/", "~")) or model.endswith("/") or model.count("/") > 1


def missing_model_folder(model: str) -> str | None:
    """Why an hf model cannot be loaded when it names a folder that does not exist (the fix included), else
    None; transformers would answer "Repo id must use alphanumeric chars" for a mistyped path."""
    if not looks_like_local_path(model) or Path(model).expanduser().exists():
        return None
    return (
        f"no model directory {model!r}: pass a local model folder (e.g. one written by "
        "`trace-envs make-tiny-model DIR`) or a hub id such as Qwen/Qwen3-0.6B"
    )


class RetryConfig(BaseModel):
    """Retries on 429 / 5xx / timeouts: exponential backoff from ``initial_delay_s`` (doubling, capped
    at ``max_delay_s``, with jitter), or the server's ``retry-after`` when it sends one."""

    model_config = ConfigDict(extra="forbid")

    max_retries: int = Field(default=6, ge=0, le=100)
    initial_delay_s: float = Field(default=1.0, ge=0.0)
    max_delay_s: float = Field(default=60.0, ge=0.0)
    jitter: float = Field(default=0.25, ge=0.0, le=1.0, description="Random extra delay, as a fraction of the delay.")
    max_retry_after_s: float = Field(default=300.0, ge=0.0, description="Cap on a server-requested retry-after.")


class ModelConfig(BaseModel):
    """Everything needed to build a :class:`~trace_envs.llm.ChatModel`. ``ModelConfig.parse(spec)``
    reads a spec string; :attr:`spec` writes it back."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider
    model: str = Field(min_length=1, description="Model name (Anthropic/OpenAI) or local path (hf).")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
    adapter: str | None = Field(default=None, description="hf: PEFT adapter directory or name under adapter_root.")
    adapter_root: str | None = Field(default=None, description="hf: where named adapters live (default ./adapters).")
    api_key: str | None = Field(default=None, repr=False, description="Explicit API key (else api_key_env).")
    api_key_env: str | None = Field(default=None, description="Environment variable with the API key.")
    timeout_s: float = Field(default=120.0, gt=0.0)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    cache_dir: str | None = Field(default=None, description="On-disk response cache (None: no cache).")
    sampling: dict[str, Any] = Field(default_factory=dict, description="Default sampling params of every request.")
    prices: dict[str, float] | None = Field(
        default=None, description="USD per million tokens: input, output, cache_read, cache_write (else the table)."
    )
    max_concurrency: int = Field(default=64, ge=1, description="Requests in flight at once from this client.")
    http_transport: Literal["auto", "aiohttp", "httpx"] = Field(
        default="auto",
        description="anthropic/openai async requests: the SDK's aiohttp transport (auto: when installed; it "
        "takes half the CPU per request) or its default httpx one (e.g. for httpx proxy settings).",
    )
    prompt_caching: bool = Field(default=True, description="anthropic: mark system/tools/history for prompt caching.")
    device: str | None = Field(default=None, description="hf: torch device (default cuda if available, else cpu).")
    dtype: str | None = Field(default=None, description="hf: torch dtype name, e.g. bfloat16 (default float32).")
    max_batch: int = Field(
        default=16, ge=1, description="hf: requests decoded together (rows of the running batch), at most."
    )
    prefix_cache_tokens: int = Field(
        default=32_768, ge=0, description="hf: tokens of earlier requests' key/value states kept for reuse (0: none)."
    )

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value

    @classmethod
    def parse(cls, spec: str, **overrides: Any) -> ModelConfig:
        """Read a spec string; keyword ``overrides`` set the other fields."""
        provider, sep, rest = spec.partition(":")
        if not sep or not rest:
            raise ValueError(f"model spec {spec!r} is not one of: {MODEL_SPEC_FORMS}")
        if provider == "anthropic":
            fields: dict[str, Any] = {"model": rest}
        elif provider == "openai":
            base_url, hash_sign, model = rest.rpartition("#")
            if not hash_sign or not model:
                raise ValueError(
                    f"model spec {spec!r}: an openai spec needs the endpoint and the model, e.g. "
                    "'openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-4B' (or 'openai:#gpt-4o' for the default endpoint)"
                )
            fields = {"model": model, "base_url": base_url or None}
        elif provider == "hf":
            path, at, adapter = rest.partition("@")
            if at and not adapter:
                raise ValueError(f"model spec {spec!r}: nothing after '@'; write hf:<path>@<adapter> or drop the '@'")
            fields = {"model": path, "adapter": adapter or None}
        else:
            raise ValueError(
                f"model spec {spec!r} has unknown provider {provider!r}; expected one of: {MODEL_SPEC_FORMS}"
            )
        return cls.model_validate({"provider": provider, **fields, **overrides})

    @property
    def spec(self) -> str:
        """The spec string of this config (what trajectories record as the policy)."""
        if self.provider == "openai":
            return f"openai:{self.base_url or ''}#{self.model}"
        if self.provider == "hf":
            return f"hf:{self.model}" + (f"@{self.adapter}" if self.adapter else "")
        return f"anthropic:{self.model}"

    def resolve_api_key(self, default_env: str) -> str | None:
        """The explicit key, else ``$api_key_env``, else ``$default_env``."""
        if self.api_key:
            return self.api_key
        return os.environ.get(self.api_key_env or default_env)

    def needs_api_key(self) -> bool:
        """Whether the endpoint is the provider's hosted API (``base_url``, else the SDK's base-URL
        variable, unset or naming the hosted host), which rejects requests without a key."""
        if self.provider not in HOSTED_API:
            return False
        url_env, host = HOSTED_API[self.provider]
        base_url = self.base_url or os.environ.get(url_env)
        return base_url is None or urlparse(base_url).hostname == host

    def check_api_key(self) -> None:
        """Raise :class:`MissingAPIKey`, naming the variable to set, when the endpoint needs a key and
        none is set (checked up front: without it every request fails, after retries if offline)."""
        if self.provider not in API_KEY_ENV or not self.needs_api_key():
            return
        variable = self.api_key_env or API_KEY_ENV[self.provider]
        if self.resolve_api_key(API_KEY_ENV[self.provider]) is None:
            raise MissingAPIKey(
                f"{self.spec}: no API key: set ${variable} (or pass api_key), or point base_url at an endpoint "
                "that needs none",
                variable=variable,
            )

    def check_local_model(self) -> None:
        """hf: raise :class:`ModelFolderMissing` (a ``ValueError``, naming the fix) when the model names a folder
        that does not exist; checked before any weights are loaded, and by the commands when they read
        ``--policy``."""
        if self.provider != "hf":
            return
        problem = missing_model_folder(self.model)
        if problem is not None:
            raise ModelFolderMissing(f"{self.spec}: {problem}")

    def resolve_adapter(self) -> Path | None:
        """hf: the adapter directory (an existing path, else ``<adapter_root>/<name>``)."""
        if not self.adapter:
            return None
        direct = Path(self.adapter).expanduser()
        if direct.is_dir():
            return direct
        root = Path(self.adapter_root or os.environ.get("TRACE_ENVS_ADAPTERS", "adapters")).expanduser()
        named = root / self.adapter
        if named.is_dir():
            return named
        raise FileNotFoundError(
            f"adapter {self.adapter!r} not found: neither {direct} nor {named} is a directory; pass a PEFT adapter "
            "directory or set adapter_root / $TRACE_ENVS_ADAPTERS to the folder holding named adapters"
        )
