"""``<target>.routes.json``: the router's choice for every task of a target, as the pipeline's route stage
writes it and the run report reads it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

ROUTES_SUFFIX = ".routes.json"


class RoutedTask(BaseModel):
    """One task and the adapter the router picked for it (``capability`` None: the base model alone)."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(description="The task's key, ENV_ID#SEED.")
    capability: str | None = Field(description="The chosen adapter's capability; None routes to the base model.")
    label: str | None = Field(default=None, description="The option letter the base model's logits picked.")
    adapter: str | None = Field(default=None, description="The chosen adapter's folder.")


ROUTES = TypeAdapter(list[RoutedTask])


def routes_target(path: Path) -> str:
    """The target a routes file is about: ``route/device.routes.json`` -> ``device``."""
    return path.name.removesuffix(ROUTES_SUFFIX)


def load_routes(path: Path) -> list[RoutedTask]:
    """The routed tasks of a routes file; malformed content raises ``ValueError`` (pydantic's)."""
    return ROUTES.validate_json(path.read_bytes())


def save_routes(path: Path, routed: list[RoutedTask]) -> None:
    """Write ``routed`` atomically (a killed write leaves the old file or none)."""
    import os

    temporary = path.with_suffix(".tmp")
    temporary.write_bytes(ROUTES.dump_json(routed, indent=1))
    os.replace(temporary, path)
