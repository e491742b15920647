"""Model clients (Anthropic, OpenAI-compatible, local transformers) behind one ``ChatModel`` protocol."""

from .base import ChatModel, ChatResponse, Usage

__all__ = ["ChatModel", "ChatResponse", "Usage"]
