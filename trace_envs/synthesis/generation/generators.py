"""Generators: what writes a candidate module from the prompt.

A generator has a ``spec`` (recorded in the manifest), says whether a repair prompt can change its
answer (``repairable``), and turns the conversation so far into a reply holding one fenced module:

- :class:`ModelGenerator`: any model spec the library speaks (``anthropic:<model>``,
  ``openai:<base_url>#<model>`` including a vLLM server, ``hf:<path>``), through :mod:`trace_envs.llm`;
- :class:`~trace_envs.synthesis.generation.catalogue.CatalogueGenerator` (``catalogue``): a shipped env whose
  capability matches by name, no model asked (the offline path).

:func:`~trace_envs.synthesis.generation.factory.make_generator` builds one from its spec. To add one, implement the
:class:`Generator` protocol and pass an instance to :func:`~trace_envs.synthesis.synthesize`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from trace_envs.llm.base import Usage

if TYPE_CHECKING:
    from trace_envs.llm.base import ChatModel

    from .prompt import SynthesisRequest

CATALOGUE = "catalogue"
GENERATOR_FORMS = "catalogue, anthropic:<model>, openai:<base_url>#<model>, hf:<path>[@<adapter>]"
DEFAULT_MAX_TOKENS = 16_000
"""Room for a whole module (a few hundred lines) in one reply."""


class Generation(BaseModel):
    """One reply of a generator, and what it cost."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    model: str = ""


@runtime_checkable
class Generator(Protocol):
    """Writes candidate modules. ``messages`` is the conversation so far (the generation prompt, then
    each earlier reply and the repair prompt that answered it)."""

    spec: str
    repairable: bool

    def generate(self, messages: list[dict[str, Any]], request: SynthesisRequest) -> Generation: ...


class ModelGenerator:
    """A chat model as generator (one request per attempt; retries and pricing are the client's)."""

    repairable = True

    def __init__(self, model: ChatModel, sampling: dict[str, Any] | None = None):
        self.model = model
        self.spec = model.spec
        self.sampling = {"max_tokens": DEFAULT_MAX_TOKENS, **(sampling or {})}

    def generate(self, messages: list[dict[str, Any]], request: SynthesisRequest) -> Generation:
        response = self.model.chat(messages, **self.sampling)
        return Generation(text=response.content or "", usage=response.usage, model=response.model)
