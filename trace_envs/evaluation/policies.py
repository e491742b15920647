"""The policies an evaluation compares, from ``[NAME=]SPEC`` strings.

Any policy spec of :mod:`trace_envs.rollout` (``oracle`` is the gold policy, ``flawed:<capability>``,
``anthropic:…``, ``openai:…``), and for a local model: ``hf:<base>`` (the base model), ``hf:<base>@<adapter>``
(base + one adapter; ``merged`` when its ``trace_adapter.json`` says so) and ``routed:<base>@<adapter>,<adapter>…``
(the router picks one adapter, or none, per task; see :mod:`.routed`), or through one OpenAI-compatible server
that serves every adapter from one base (vLLM ``--enable-lora``): ``routed:openai:<base_url>#<base>@<adapter>,…``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.rollout import PolicySpec

from .results import PolicyKind

ROUTED_PREFIX = "routed:"
ROUTED_SERVER_PREFIX = "openai:"
POLICY_FORMS = "[NAME=]SPEC with SPEC one of: oracle, flawed:<capability>, noop, random, anthropic:<model>, " \
    "openai:<base_url>#<model>, hf:<base>, hf:<base>@<adapter>, routed:<base>@<adapter>,<adapter>…, " \
    "routed:openai:<base_url>#<base>@<adapter>,<adapter>…"  # fmt: skip


class PolicyEntry(BaseModel):
    """One policy to evaluate: its label, spec and what it is."""

    name: str
    spec: str
    kind: PolicyKind
    base_model: str | None = None
    adapters: list[str] = Field(default_factory=list)
    server_url: str | None = Field(
        default=None, description="routed:openai: the OpenAI-compatible server that serves every route."
    )
    rollouts_spent: int | None = None

    @property
    def slug(self) -> str:
        """The name as a file name (its trajectory store is ``episodes/<slug>.jsonl``)."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.name).strip("_") or "policy"


def parse_policy(text: str, **model_options: Any) -> PolicyEntry:
    """Read ``[NAME=]SPEC``; a bad spec raises ``ValueError`` naming the valid forms, a hosted model without
    its API key ``MissingAPIKey``."""
    name, equals, spec = text.partition("=")
    if not equals or ":" in name or "/" in name:  # no label: 'openai:http://h/v1#m=x' must not split at '='
        name, spec = text, text
    name, spec = name.strip(), spec.strip()
    if not spec:
        raise ValueError(f"policy {text!r} has no spec; expected {POLICY_FORMS}")
    if spec.startswith(ROUTED_PREFIX):
        return _routed(name, spec)
    try:
        parsed = PolicySpec.parse(spec, **model_options)
    except ValueError as exc:
        raise ValueError(f"{exc}; evaluation also takes {POLICY_FORMS}") from None
    if parsed.model is None:
        return PolicyEntry(name=name, spec=parsed.spec, kind="scripted")
    config = parsed.model
    if config.provider != "hf":
        config.check_api_key()  # a missing key fails here, before any episode (MissingAPIKey names the variable)
        return PolicyEntry(name=name, spec=parsed.spec, kind="model")
    config.check_local_model()  # a mistyped folder is bad input, named now (not a hub error mid-run)
    if config.adapter is None:
        return PolicyEntry(name=name, spec=parsed.spec, kind="base", base_model=config.model)
    adapter = str(config.resolve_adapter())
    kind: PolicyKind = "merged" if _adapter_status(adapter) == "merged" else "adapter"
    return PolicyEntry(name=name, spec=parsed.spec, kind=kind, base_model=config.model, adapters=[adapter])


def _routed(name: str, spec: str) -> PolicyEntry:
    """A ``routed:[openai:<base_url>#]<base>@<adapter>,…`` policy (the server, when given, serves every route)."""
    rest, server = spec[len(ROUTED_PREFIX) :], None
    if rest.startswith(ROUTED_SERVER_PREFIX):
        server, hash_sign, rest = rest[len(ROUTED_SERVER_PREFIX) :].partition("#")
        if not hash_sign or not server.startswith(("http://", "https://")):
            raise ValueError(
                f"routed policy {spec!r}: write routed:openai:<base_url>#<base model>@<adapter dir>,<adapter dir>… "
                "(e.g. routed:openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct@adapters/a,adapters/b)"
            )
    base, at, adapters = rest.partition("@")
    dirs = [str(Path(a.strip()).expanduser()) for a in adapters.split(",") if a.strip()]
    if not base or not at or not dirs:
        raise ValueError(f"routed policy {spec!r}: write routed:<base model dir>@<adapter dir>,<adapter dir>…")
    for directory in dirs:
        _adapter_status(directory)
    return PolicyEntry(name=name, spec=spec, kind="routed", base_model=base, adapters=dirs, server_url=server)


def _adapter_status(directory: str) -> str | None:
    """The ``status`` of an adapter's ``trace_adapter.json`` (None without one); a missing folder is an error."""
    path = Path(directory)
    if not path.is_dir():
        raise FileNotFoundError(f"adapter folder {path} does not exist; pass a folder written by `trace-envs train`")
    meta = path / "trace_adapter.json"
    if not meta.is_file():
        return None
    from trace_envs.training.metadata import load_metadata

    return load_metadata(path).status


def check_names(entries: list[PolicyEntry]) -> None:
    """Policy names (and their store files) must be distinct; the error says to label them ``NAME=SPEC``."""
    seen: dict[str, str] = {}
    for entry in entries:
        if entry.slug in seen:
            raise ValueError(
                f"policies {seen[entry.slug]!r} and {entry.name!r} share the name {entry.slug!r}: label them NAME=SPEC"
            )
        seen[entry.slug] = entry.name
