"""The device scenario format: a starting world, what the user wants, milestones/minefields and a
reference solution. Pydantic, loadable from JSON or YAML (YAML needs ``pyyaml``).

Example (YAML)::

    name: turn_on_wifi_low_battery
    categories: [STATE_DEPENDENCY, MULTIPLE_TOOL_CALL, SINGLE_USER_TURN]
    base: base_low_battery_mode_on_wifi_off_location_service_off_cellular_off
    tools: [set_wifi_status, get_low_battery_mode_status, set_low_battery_mode_status]
    user_goal: Ask the assistant to turn on wifi.
    user: {opening: Turn on my wifi please.}
    evaluation:
      milestones:
        - snapshot_constraints:
            - {database_namespace: SETTING, target_dataframe: [{wifi: true}]}
    reference_solution:
      - {name: set_wifi_status, arguments: {on: true}}
      - Wifi is on now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trace_envs.core import ToolCall, UserScript
from trace_envs.domains.device import AGENT_TOOLSET, BASE_NOW, BASE_VARIANTS, build_base_world, load_world

from .milestones import Evaluation

Category = Literal[
    "SINGLE_TOOL_CALL",
    "MULTIPLE_TOOL_CALL",
    "SINGLE_USER_TURN",
    "MULTIPLE_USER_TURN",
    "STATE_DEPENDENCY",
    "CANONICALIZATION",
    "INSUFFICIENT_INFORMATION",
]
"""ToolSandbox's task categories (its augmentation categories are not used here)."""


class DeviceScenario(BaseModel):
    """One device task. Exactly one of ``base`` (a base-world variant) or ``world`` (JSON tables)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    categories: list[Category] = Field(min_length=1)
    split: Literal["train", "test"] = "train"
    base: str | None = Field(default=None, description="A base-world variant, e.g. 'base_cellular_off'.")
    base_now: float = Field(default=BASE_NOW, description="Simulated 'now' of the base world.")
    world: dict[str, Any] | None = Field(default=None, description="Explicit starting world as JSON tables.")
    tools: list[str] = Field(min_length=1, description="Tools offered to the agent (ToolSandbox's allow list).")
    user_goal: str = Field(min_length=1, description="What the user wants; the LLM user's task text.")
    user: UserScript = Field(description="The scripted user (opening utterance, facts it can tell, closing).")
    evaluation: Evaluation
    reference_solution: list[ToolCall | str] = Field(min_length=1)
    tags: list[str] = Field(default_factory=list, description="Free labels, e.g. 'permission_error', 'datetime'.")

    @model_validator(mode="after")
    def _check(self) -> DeviceScenario:
        if (self.base is None) == (self.world is None):
            raise ValueError(f"scenario {self.name!r}: give exactly one of 'base' (a base variant) or 'world' (tables)")
        if self.base is not None and self.base not in BASE_VARIANTS:
            raise ValueError(
                f"scenario {self.name!r}: unknown base {self.base!r}; choose one of {sorted(BASE_VARIANTS)}"
            )
        if self.world is not None:
            load_world(self.world)
        unknown = [t for t in self.tools if t not in AGENT_TOOLSET]
        if unknown:
            raise ValueError(f"scenario {self.name!r}: unknown agent tools {unknown}; see AGENT_TOOLSET for the names")
        for step in self.reference_solution:
            if isinstance(step, ToolCall) and step.name not in self.tools:
                raise ValueError(f"scenario {self.name!r}: reference step {step.name!r} is not in 'tools'")
        if not isinstance(self.reference_solution[-1], str):
            raise ValueError(f"scenario {self.name!r}: the reference solution must end with a message to the user")
        return self

    def initial_world(self) -> dict[str, Any]:
        """The starting world as JSON tables."""
        if self.world is not None:
            copied: dict[str, Any] = json.loads(json.dumps(self.world))
            return copied
        assert self.base is not None
        return build_base_world(self.base, now=self.base_now).model_dump(mode="json")

    # ----- files --------------------------------------------------------------------------------
    def to_json(self) -> str:
        return self.model_dump_json(indent=2, exclude_none=True)

    def to_yaml(self) -> str:
        yaml = _yaml()
        return str(yaml.safe_dump(self.model_dump(mode="json", exclude_none=True), sort_keys=False, allow_unicode=True))

    @classmethod
    def from_file(cls, path: str | Path) -> DeviceScenario:
        return load_scenarios(path)[0]


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("reading/writing YAML scenarios needs pyyaml: pip install pyyaml") from exc
    return yaml


def load_scenarios(path: str | Path) -> list[DeviceScenario]:
    """Scenarios from a ``.json``/``.yaml``/``.yml`` file holding one scenario or a list of them."""
    file = Path(path)
    if file.suffix not in (".json", ".yaml", ".yml"):
        raise ValueError(f"{file}: scenario files end in .json, .yaml or .yml")
    text = file.read_text(encoding="utf-8")
    data = _yaml().safe_load(text) if file.suffix in (".yaml", ".yml") else json.loads(text)
    items = data if isinstance(data, list) else [data]
    scenarios = []
    for index, item in enumerate(items):
        try:
            scenarios.append(DeviceScenario.model_validate(item))
        except ValueError as exc:
            raise ValueError(f"{file}: scenario #{index} is invalid: {exc}") from None
    return scenarios


def dump_scenarios(scenarios: list[DeviceScenario], path: str | Path) -> None:
    """Write scenarios as a JSON or YAML list (by file extension)."""
    file = Path(path)
    data = [s.model_dump(mode="json", exclude_none=True) for s in scenarios]
    if file.suffix in (".yaml", ".yml"):
        file.write_text(_yaml().safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    else:
        file.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


ScenarioSplit = Literal["train", "test", "all"]
