"""The ``catalogue`` generator: reuse a shipped env whose capability matches by name (no model asked).

It writes a small module that subclasses the shipped env, declares the capability and the target
domain literally, and pins a ``variant`` knob to the target where the env has one. That module goes
through the same gates as any other (with the env's package, ``generated_envs`` for the shipped envs,
as a trusted import). A capability no shipped env trains on the target gets a clear "no catalogue env
for X".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .generators import CATALOGUE, Generation
from .prompt import SynthesisRequest, plugin_package_names, shipped_envs, supports


class NoCatalogueEnv(LookupError):
    """No shipped env trains the capability on the target."""


def catalogue_env(capability: str, target: str) -> tuple[str, type]:
    """``(env id, class)`` of the shipped env for ``capability`` on ``target``: the one that runs on the most
    targets first (the env built for transfer, not a single-target starter), then one whose own domain is the
    target, then by id."""
    matches = [(env_id, cls) for env_id, cls in shipped_envs(target) if cls.capability.name == capability]  # type: ignore[attr-defined]
    if not matches:
        offered = sorted({cls.capability.name for _, cls in shipped_envs(target)})  # type: ignore[attr-defined]
        raise NoCatalogueEnv(
            f"no catalogue env for {capability} on {target}: the shipped envs for {target} train "
            f"{', '.join(offered) or 'nothing'}; use a model generator (anthropic:…, openai:…#…, hf:…)"
        )
    from trace_envs.registry.targets import targets

    def breadth(cls: type) -> int:
        return sum(supports(cls, name) for name in targets())

    matches.sort(
        key=lambda item: (
            -breadth(item[1]),
            getattr(getattr(item[1], "domain", None), "name", None) != target,
            item[0],
        )
    )
    return matches[0]


def catalogue_source(capability: str, target: str) -> str:
    """The module that reuses the shipped env for ``capability`` on ``target``."""
    from trace_envs.registry.targets import target as registered

    from ..gates.contract import domain_attribute

    env_id, cls = catalogue_env(capability, target)
    domain = domain_attribute(target)
    name = "".join(part.title() for part in capability.split("_"))
    knobs: Any = getattr(cls, "Knobs", None)
    pinned = knobs is not None and "variant" in getattr(knobs, "model_fields", {})
    description = cls.capability.description  # type: ignore[attr-defined]
    lines = [
        f'"""Catalogue env: the shipped {env_id} ({cls.__module__}.{cls.__qualname__}) on the {target} domain.',
        "",
        "Written by the catalogue generator (no model was asked): it reuses a shipped env for a capability",
        'that analysis kept, and passes through the same gates as a generated module."""',
        "",
        "from __future__ import annotations",
        "",
    ]
    if pinned:
        lines += ["from typing import Literal", "", "from pydantic import Field", ""]
    lines.append(f"from {cls.__module__} import {cls.__qualname__}")
    if pinned and knobs.__module__ != cls.__module__:
        lines.append(f"from {knobs.__module__} import {knobs.__qualname__}")
    elif pinned:
        lines[-1] += f", {knobs.__qualname__}"
    lines += [
        "from trace_envs.core import Capability",
        f"from {registered(target).synthesis_domain()[1]} import {domain}",
        "",
        "",
    ]
    if pinned:
        lines += [
            f"class {name}Knobs({knobs.__qualname__}):",
            f'    """The shipped knobs with the variant pinned to {target}."""',
            "",
            f'    variant: Literal["{target}"] = Field(default="{target}", description="Target domain of the tasks.")',
            "",
            "",
        ]
    lines += [
        f"class Catalogue{name}Env({cls.__qualname__}):",
        f'    """{cls.__qualname__} on the {target} domain."""',
        "",
        f"    capability = Capability(name={capability!r}, description={description!r})",
        f"    domain = {domain}",
    ]
    if pinned:
        lines.append(f"    Knobs = {name}Knobs")
    return "\n".join(lines) + "\n"


class CatalogueGenerator:
    """``catalogue``: the shipped env's module, fenced as a model would answer; nothing to repair."""

    spec = CATALOGUE
    repairable = False

    @property
    def trusted_imports(self) -> tuple[str, ...]:
        """What a catalogue module imports besides the allow-list: the packages of the envs it reuses."""
        return plugin_package_names()

    def generate(self, messages: list[dict[str, Any]], request: SynthesisRequest) -> Generation:
        source = catalogue_source(request.capability, request.target)
        return Generation(text=f"```python\n{source}```\n", model=CATALOGUE)


def module_trusted_imports(path: Path, extra: Sequence[str] | None = None) -> tuple[str, ...]:
    """Packages a module may import besides the allow-list when it is validated again: ``extra`` (the user's
    ``--trust``), and for a module the catalogue wrote (its folder's manifest says so) the packages of the
    installed envs, as when it was synthesised."""
    from ..manifest import read_manifest

    packages = list(extra or [])
    try:
        manifest = read_manifest(path.parent)
    except ValueError:
        manifest = None
    entry = manifest.modules.get(path.name) if manifest is not None else None
    if entry is not None and entry.generator == CATALOGUE:
        packages += CatalogueGenerator().trusted_imports
    return tuple(dict.fromkeys(packages))
