"""The built-ins register through entry points, as a plugin's do (issue 36): pyproject.toml declares them, each
names what the package may not import, and a stale install fails loudly naming the reinstall."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import pytest

from trace_envs.core import Domain
from trace_envs.registry import builtins, sources
from trace_envs.registry.builtins import DISTRIBUTION, REINSTALL, MissingBuiltin, builtin_entry_points, is_builtin
from trace_envs.registry.envs import resolve
from trace_envs.registry.targets import ENTRY_POINT_GROUP as TARGET_GROUP

from .conftest import REPO_ROOT

BUILTINS = {
    TARGET_GROUP: {"builtin": "trace_envs.targets.builtin:builtin_targets"},
    sources.DOMAIN_GROUP: {"toy_shop": "trace_envs.domains.toy_shop:TOY_SHOP"},
    sources.TEXT_SCAN_GROUP: {"leakage": "trace_envs.synthesis.gates.leakage:generated_leak"},
}
"""The built-in entry points, by group (the only place besides pyproject.toml that names them)."""


def declared() -> dict[str, dict[str, str]]:
    """pyproject.toml's entry points, by group."""
    with (REPO_ROOT / "pyproject.toml").open("rb") as file:
        groups: dict[str, dict[str, str]] = tomllib.load(file)["project"]["entry-points"]
    return groups


def test_pyproject_declares_the_builtins() -> None:
    groups = declared()
    assert {group: groups.get(group) for group in BUILTINS} == BUILTINS


def test_each_builtin_names_what_it_registers() -> None:
    from trace_envs.synthesis.gates.leakage import generated_leak
    from trace_envs.targets.builtin import BUILTIN_TARGETS

    targets = resolve(BUILTINS[TARGET_GROUP]["builtin"])()
    assert targets == BUILTIN_TARGETS and [resolve(t).name for t in targets] == ["airline", "retail", "device"]
    domain = resolve(BUILTINS[sources.DOMAIN_GROUP]["toy_shop"])
    assert isinstance(domain, Domain) and domain.name == "toy_shop"
    assert resolve(BUILTINS[sources.TEXT_SCAN_GROUP]["leakage"]) is generated_leak


def test_the_installed_metadata_is_current() -> None:
    """The install's entry points are pyproject.toml's (else: reinstall, as the failure says)."""
    for group, points in BUILTINS.items():
        installed = {p.name: p.value for p in entry_points(group=group) if is_builtin(p)}
        assert installed == points, f"stale install: {group} is {installed}; reinstall it: {REINSTALL}"


def test_the_builtins_load_first_and_register() -> None:
    from trace_envs.registry import get_domain
    from trace_envs.registry.targets import targets

    assert list(targets())[:3] == ["airline", "retail", "device"]
    assert get_domain("toy_shop").name == "toy_shop"
    assert [scan.__name__ for scan in sources.text_scans()][:1] == ["generated_leak"]
    assert sources.builtin_domains()["toy_shop"] == BUILTINS[sources.DOMAIN_GROUP]["toy_shop"]


@dataclass(frozen=True)
class _Dist:
    """A distribution as an entry point carries it (only its name is read)."""

    name: str


@dataclass(frozen=True)
class _Point:
    """An entry point of the distribution ``dist``, as the registry reads one."""

    name: str
    value: str
    group: str
    dist: _Dist


def _point(name: str, value: str, group: str, dist: str) -> _Point:
    """An entry point of the distribution ``dist``."""
    return _Point(name, value, group, _Dist(dist))


def test_a_stale_install_fails_naming_the_reinstall(monkeypatch: pytest.MonkeyPatch) -> None:
    other = _point("library", "my_envs.library:LIBRARY", sources.DOMAIN_GROUP, "my-envs")
    monkeypatch.setattr(builtins, "entry_points", lambda group: [other] if group == sources.DOMAIN_GROUP else [])
    with pytest.raises(MissingBuiltin, match=r"trace_envs\.domains.*Reinstall.*pip install -e \. --no-deps"):
        sources.builtin_domains()
    with pytest.raises(MissingBuiltin, match="the shipped targets"):
        builtin_entry_points(TARGET_GROUP, "the shipped targets")


def test_builtins_come_first_then_the_others_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    points = [
        _point("a_lib", "a:A", sources.DOMAIN_GROUP, "a-envs"),
        _point("toy_shop", "t:T", sources.DOMAIN_GROUP, DISTRIBUTION),
        _point("library", "my_envs.library:LIBRARY", sources.DOMAIN_GROUP, "my-envs"),
    ]
    monkeypatch.setattr(builtins, "entry_points", lambda group: points)
    assert list(sources.builtin_domains()) == ["toy_shop", "a_lib", "library"]


def test_the_deprecated_names_warn_and_read_the_entry_points() -> None:
    import trace_envs.registry as registry

    with pytest.warns(DeprecationWarning, match="BUILTIN_DOMAINS"):
        found: Any = registry.BUILTIN_DOMAINS
    assert found == BUILTINS[sources.DOMAIN_GROUP]
    with pytest.warns(DeprecationWarning, match="LEAK_SCAN"):
        scan: Any = sources.LEAK_SCAN
    assert scan == BUILTINS[sources.TEXT_SCAN_GROUP]["leakage"]
