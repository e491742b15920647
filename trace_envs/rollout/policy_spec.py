"""Policy spec strings, parsed in one place: ``oracle``, ``noop``, ``random``, ``flawed[:<capability>,…]``
and the model specs (``anthropic:<model>``, ``openai:<base_url>#<model>``, ``hf:<path>[@<adapter>]``,
whose grammar is :meth:`trace_envs.llm.ModelConfig.parse`'s)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from trace_envs.llm.spec import ModelConfig

POLICY_SPEC_FORMS = (
    "oracle, noop, random, flawed, flawed:<capability>[,<capability>…], anthropic:<model>, openai:<base_url>#<model>, "
    "hf:<path>[@<adapter>]"
)
SCRIPTED_KINDS = ("oracle", "noop", "random")
MODEL_PROVIDERS = ("anthropic", "openai", "hf")


class PolicySpec(BaseModel):
    """A parsed policy spec: a scripted kind, the capabilities a ``flawed`` policy lacks, or a model's
    config (a ``flawed`` spec without capabilities plays each env's own). :attr:`spec` writes the canonical string back (what trajectory records carry)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["oracle", "noop", "random", "flawed", "model"]
    capabilities: tuple[str, ...] = ()
    model: ModelConfig | None = None

    @classmethod
    def parse(cls, spec: str, **model_options: Any) -> PolicySpec:
        """Read a spec string; ``model_options`` set :class:`ModelConfig` fields of a model spec
        (``timeout_s``, ``cache_dir`` …). A bad spec raises ``ValueError`` listing the valid forms."""
        kind, colon, rest = spec.partition(":")
        if kind in MODEL_PROVIDERS and colon:
            return cls(kind="model", model=ModelConfig.parse(spec, **model_options))
        if spec in SCRIPTED_KINDS:
            return cls.model_validate({"kind": spec})
        if spec == "flawed":
            return cls(kind="flawed")
        if kind == "flawed":
            capabilities = tuple(c.strip() for c in rest.split(",") if c.strip())
            if not capabilities:
                raise ValueError(
                    f"policy spec {spec!r} names no capability; write e.g. 'flawed:unit_conversion' "
                    "(or plain 'flawed' for each env's own capability)"
                )
            return cls(kind="flawed", capabilities=capabilities)
        raise ValueError(f"unknown policy spec {spec!r}; expected one of: {POLICY_SPEC_FORMS}")

    @property
    def is_model(self) -> bool:
        """Whether a model chooses the actions (rather than a script)."""
        return self.model is not None

    @property
    def spec(self) -> str:
        """The canonical spec string."""
        if self.model is not None:
            return self.model.spec
        if self.kind == "flawed" and self.capabilities:
            return "flawed:" + ",".join(self.capabilities)
        return self.kind
