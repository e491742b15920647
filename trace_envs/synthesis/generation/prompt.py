"""The generation prompt: what the generator is told about the capability, the target and the contract.

``SynthesisRequest`` holds what analysis found (the capability, its failure patterns and failed
trajectory excerpts, trimmed to a budget); :func:`generation_prompt` renders
``templates/prompts/synthesis_generate.jinja`` with it and with the target domain's tool schemas,
state model (JSON schema) and policy, the contract guide verbatim, one or two envs of the same domain
as worked examples (shipped, or a plugin package's prompt-only ``examples/``), the rules and the output format. :func:`repair_prompt` renders the
gate report of a failed attempt (``synthesis_repair.jinja``).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.core.templates import render_template
from trace_envs.registry import get_domain

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


class PromptBudget(BaseModel):
    """How much analysis evidence and how many worked examples go into a prompt."""

    patterns: int = Field(default=8, ge=0, description="Failure patterns (most frequent first).")
    excerpts: int = Field(default=3, ge=0, description="Failed-trajectory excerpts.")
    excerpt_tokens: int = Field(default=4000, ge=200, description="Token budget of all excerpts together.")
    examples: int = Field(default=2, ge=0, le=2, description="Shipped envs of the target domain shown whole.")
    example_chars: int = Field(default=60_000, ge=0, description="Character budget of the worked examples.")


class SynthesisRequest(BaseModel):
    """One env to write: the capability, the target domain and what analysis saw of the failures."""

    capability: str = Field(description="snake_case name, e.g. unit_conversion")
    description: str = Field(min_length=1)
    target: str
    failure_patterns: list[str] = Field(default_factory=list, description="Why failures lacked it, in words.")
    excerpts: list[str] = Field(default_factory=list, description="Rendered failed trajectories lacking it.")
    notes: list[str] = Field(default_factory=list, description="What could not be included, and why.")

    def model_post_init(self, context: Any) -> None:
        if not SNAKE_CASE.match(self.capability):
            raise ValueError(f"capability: {self.capability!r} is not snake_case (e.g. unit_conversion)")
        from trace_envs.registry.targets import target

        try:
            target(self.target)
        except ValueError as exc:
            raise ValueError(f"target: {exc}") from None


@functools.cache
def contract_guide() -> str:
    """The contract guide (writing an env), verbatim: what ``docs/writing-an-env.md`` holds, generated
    from the code by :mod:`trace_envs.guide` (once per process, and under the AST lock: it parses our
    sources, and syntheses run in threads)."""
    from trace_envs.guide import env_guide

    from ..gates.ast_names import exclusive_ast

    with exclusive_ast():
        return env_guide()


def supports(cls: Any, target: str) -> bool:
    """Whether a shipped env runs on ``target``: its domain, or a choice of its ``variant`` knob."""
    from typing import get_args

    domain = getattr(cls, "domain", None)
    if getattr(domain, "name", None) == target:
        return True
    field = getattr(getattr(cls, "Knobs", None), "model_fields", {}).get("variant")
    return field is not None and target in get_args(field.annotation)


def plugin_package_names() -> tuple[str, ...]:
    """The packages installed envs come from (``generated_envs`` for the shipped ones)."""
    import trace_envs  # noqa: F401  (loads the plugins)
    from trace_envs.registry.sources import plugin_packages

    return tuple(package.__name__ for package in plugin_packages())


def shipped_envs(target: str) -> list[tuple[str, type]]:
    """``(env id, class)`` of every installed env (a plugin package's: the shipped ``generated_envs`` and
    third-party ones, not folders of loaded modules) that runs on ``target``."""
    from trace_envs.registry import env_class, list_capability_envs

    packages = plugin_package_names()
    found = []
    for env_id in list_capability_envs():
        cls = env_class(env_id)
        if isinstance(cls, type) and cls.__module__.split(".")[0] in packages and supports(cls, target):
            found.append((env_id, cls))
    return found


def within_kit(source: str, target: str) -> bool:
    """Whether a module passes the static gate for ``target`` with nothing trusted besides the target's kit
    (so a model that copies it writes a module the gates accept)."""
    from ..gates.ast_names import parse_module
    from ..gates.static_policy import check_policy

    return not check_policy(parse_module(source), source, target)


UNREGISTERED = "(a worked example only, not registered)"
"""The env id shown for a prompt-only example (a plugin package's ``examples/`` module)."""


def _declared_capability(source: str) -> str | None:
    """The ``Capability(name=...)`` a module's source declares, read from its AST (None when it names none)."""
    from ..gates.ast_names import parse_module

    for node in ast.walk(parse_module(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Capability":
            for keyword in node.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return None


def prompt_only_examples() -> list[tuple[str, str]]:
    """``(module name, source)`` of every ``examples/*.py`` of the plugin packages: env modules a package ships
    for the generation prompt alone (read as text, never imported or registered)."""
    import trace_envs  # noqa: F401  (loads the plugins)
    from trace_envs.registry.sources import plugin_packages

    found = []
    for package in plugin_packages():
        folder = Path(package.__file__ or "").parent / "examples"
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            if not path.name.startswith("_"):
                found.append((f"{package.__name__}.examples.{path.stem}", path.read_text(encoding="utf-8")))
    return found


def worked_examples(target: str, capability: str, budget: PromptBudget) -> list[dict[str, str]]:
    """Up to ``budget.examples`` envs of the target's domain, whole: the shipped ones and the plugin packages'
    prompt-only examples (:func:`prompt_only_examples`), among those that import only the target's kit
    (:func:`within_kit`; the others lean on helpers a generated module may not import): the one for this
    capability first, then the shortest; each must fit in what is left of ``budget.example_chars``."""
    candidates = []
    for env_id, cls in shipped_envs(target):
        module = inspect.getmodule(cls)
        if module is None or module.__file__ is None:
            continue
        source = Path(module.__file__).read_text(encoding="utf-8")
        if not within_kit(source, target):
            continue
        same = cls.capability.name == capability  # type: ignore[attr-defined]
        candidates.append((not same, len(source), env_id, module.__name__, source))
    for module_name, source in prompt_only_examples():
        if within_kit(source, target):
            same = _declared_capability(source) == capability
            candidates.append((not same, len(source), UNREGISTERED, module_name, source))
    examples: list[dict[str, str]] = []
    left = budget.example_chars
    for _, size, env_id, module_name, source in sorted(candidates):
        if len(examples) >= budget.examples or size > left:
            continue
        examples.append({"env_id": env_id, "module": module_name, "source": source.rstrip("\n")})
        left -= size
    return examples


def _schema_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def generation_prompt(
    request: SynthesisRequest, budget: PromptBudget | None = None, *, flawed_failure_share: float = 0.2
) -> str:
    """The first prompt of a synthesis: everything the generator needs, and the output format."""
    from trace_envs.guide import helper_docs
    from trace_envs.registry.targets import target as target_spec

    from ..gates.allowlist import ALLOWED_DUNDER_METHODS, stdlib_summary
    from ..gates.static_policy import kit_modules

    budget = budget or PromptBudget()
    domain_key, domain_module, domain_object = target_spec(request.target).synthesis_domain()
    domain = get_domain(domain_key)
    return render_template(
        "prompts/synthesis_generate.jinja",
        capability=request.capability,
        description=request.description,
        target=request.target,
        patterns=request.failure_patterns[: budget.patterns],
        excerpts=request.excerpts[: budget.excerpts],
        tools=_schema_json(domain.toolset.schemas()),
        state_schema=_schema_json(domain.state_model.model_json_schema()),
        policy=domain.policy.strip(),
        guide=contract_guide().strip(),
        examples=worked_examples(request.target, request.capability, budget),
        domain_object=domain_object,
        domain_module=domain_module,
        kit=kit_modules(request.target),
        helpers=helper_docs(target_spec(request.target).helpers),
        stdlib=stdlib_summary(),
        dunder_methods=sorted(ALLOWED_DUNDER_METHODS),
        failure_share=f"{flawed_failure_share:.0%}",
    )


def repair_prompt(new: list[str], repeated: list[str], stopped_by: str) -> str:
    """The follow-up after a failed attempt: the new findings in full, the ones reported before in brief
    (without control characters: findings quote the module)."""
    from trace_envs.safe_text import clean_text

    new, repeated = [clean_text(text) for text in new], [clean_text(text) for text in repeated]
    return render_template(
        "prompts/synthesis_repair.jinja", new=new, repeated=repeated, stopped_by=clean_text(stopped_by)
    )


def prompt_hash(text: str) -> str:
    """sha256 of a prompt's text (the manifest records it for the first prompt of each synthesis)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def failure_patterns(rationales: list[str], limit: int) -> list[str]:
    """Distinct rationales, most frequent first (ties in text order), each with its count."""
    counts = Counter(" ".join(r.split()) for r in rationales if r.strip())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [f"{text} ({count}x)" if count > 1 else text for text, count in ranked]
