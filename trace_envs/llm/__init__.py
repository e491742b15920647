"""Model clients (Anthropic, OpenAI-compatible, local transformers) behind one ``ChatModel`` protocol.

``make_chat_model("anthropic:claude-sonnet-4-5")`` / ``("openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-4B")`` /
``("hf:./tiny")`` build one; each SDK is imported only when its client is built.
"""

from .base import ChatModel, ChatResponse, Usage
from .cache import ResponseCache, cache_key
from .client import BaseChatModel, MeteredModel
from .errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionRefused,
    EndpointUnreachable,
    HostNotFound,
    LLMError,
    MissingAPIKey,
    ModelFolderMissing,
    RateLimited,
    RequestTimeout,
    RetriesExhausted,
    ServerError,
)
from .factory import make_chat_model
from .pricing import DEFAULT_PRICES, Price, PriceTable
from .spec import MODEL_SPEC_FORMS, ModelConfig, RetryConfig

__all__ = [
    "DEFAULT_PRICES",
    "MODEL_SPEC_FORMS",
    "AuthenticationFailed",
    "BadRequest",
    "BaseChatModel",
    "ChatModel",
    "ChatResponse",
    "ConnectionRefused",
    "EndpointUnreachable",
    "HostNotFound",
    "LLMError",
    "MeteredModel",
    "MissingAPIKey",
    "ModelConfig",
    "ModelFolderMissing",
    "Price",
    "PriceTable",
    "RateLimited",
    "RequestTimeout",
    "ResponseCache",
    "RetriesExhausted",
    "RetryConfig",
    "ServerError",
    "Usage",
    "cache_key",
    "make_chat_model",
]
