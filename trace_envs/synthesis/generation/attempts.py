"""Every attempt of a synthesis, kept on disk so that a killed run resumes without paying twice.

Layout under ``OUT/attempts/<capability>/``: ``synthesis.json`` (the request, the generator, the prompt
hash) and one folder per round, ``round-<n>/``, holding ``prompt.json`` (the messages sent, written
before the request), ``generation.json`` (the reply and its cost, written atomically once it came:
a round that has it is never asked again), ``response.md`` (the reply, for reading), ``module.py``
(the module taken from it) and ``report.json`` (the gate report: a round that has it is not validated
again).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..gates.reports import ValidationReport
from .generators import Generation
from .prompt import SynthesisRequest


class SynthesisHeader(BaseModel):
    """What a folder of attempts was made for (a resume must ask for the same)."""

    request: SynthesisRequest
    generator: str
    prompt_sha256: str


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


class Attempt:
    """One round's files."""

    def __init__(self, folder: Path, number: int):
        self.number = number
        self.folder = folder / f"round-{number}"

    def generation(self) -> Generation | None:
        path = self.folder / "generation.json"
        return Generation.model_validate_json(path.read_text(encoding="utf-8")) if path.exists() else None

    def report(self) -> ValidationReport | None:
        path = self.folder / "report.json"
        return ValidationReport.model_validate_json(path.read_text(encoding="utf-8")) if path.exists() else None

    def module(self) -> str | None:
        path = self.folder / "module.py"
        return path.read_text(encoding="utf-8") if path.exists() else None

    def save_prompt(self, messages: list[dict[str, Any]]) -> None:
        _write_atomic(self.folder / "prompt.json", json.dumps(messages, indent=1, ensure_ascii=False))

    def save_generation(self, generation: Generation) -> None:
        _write_atomic(self.folder / "response.md", generation.text)
        _write_atomic(self.folder / "generation.json", generation.model_dump_json(indent=1))

    def save_result(self, source: str | None, report: ValidationReport) -> None:
        if source is not None:
            _write_atomic(self.folder / "module.py", source)
        _write_atomic(self.folder / "report.json", report.model_dump_json(indent=1))


class AttemptStore:
    """The attempts of one capability's synthesis."""

    def __init__(self, out: Path, capability: str):
        self.folder = out / "attempts" / capability

    def open(self, header: SynthesisHeader) -> None:
        """Start, or check that a resumed run asks for what the saved attempts were made for."""
        path = self.folder / "synthesis.json"
        if path.exists():
            saved = SynthesisHeader.model_validate_json(path.read_text(encoding="utf-8"))
            for field, label in (("generator", "generator"), ("prompt_sha256", "generation prompt")):
                if getattr(saved, field) != getattr(header, field):
                    raise ValueError(
                        f"out: {self.folder} holds attempts made with another {label} "
                        f"({getattr(saved, field)[:40]!r}); use another --out folder, or delete it to start over"
                    )
            return
        _write_atomic(path, header.model_dump_json(indent=1))

    def attempt(self, number: int) -> Attempt:
        return Attempt(self.folder, number)
