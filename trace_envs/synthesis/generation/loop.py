"""``synthesize``: one capability -> a validated module in ``out`` (with its manifest entry), or a
rejection report. The loop: prompt -> generator -> module -> gates; on a failure the gate report goes
back to the generator (findings reported in an earlier round are listed in brief, not again in full),
for at most ``settings.rounds`` rounds. Every attempt is kept on disk (:mod:`.attempts`), so a killed
run resumes where it stopped without asking the generator again for a round it has the reply of.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trace_envs.llm.base import Usage
from trace_envs.problems import renamed_keys

from ..gates.ast_names import parse_module
from ..gates.calibration_settings import CalibrationSettings
from ..gates.context import GateContext
from ..gates.env_identity import source_env_id
from ..gates.reports import GateResult, ValidationReport
from ..gates.validation import default_gates, validate_source
from ..manifest import ModuleEntry, Rejection, env_id_for, gate_summaries, record_module, record_rejection
from ..sandbox.protocol import SandboxLimits
from .attempts import AttemptStore, SynthesisHeader
from .catalogue import NoCatalogueEnv
from .extract import extract_module
from .factory import make_generator
from .generators import CATALOGUE, Generator
from .prompt import PromptBudget, SynthesisRequest, generation_prompt, prompt_hash, repair_prompt

Progress = Callable[[str, str], None]
"""Called with (capability, what is happening), e.g. ``("unit_conversion", "round 2: validating")``."""


class SynthesisSettings(BaseModel):
    """The knobs of a synthesis: repair rounds, gate settings, calibration and the prompt budget."""

    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(default=3, ge=1, le=20, description="Attempts at most (the first plus repairs).")
    seeds: int = Field(default=50, ge=1, description="Seeds of the property suite.")
    fuzz_examples: int = Field(default=50, ge=1, description="Hypothesis examples of the any-action check.")
    flawed_failure_share: float = Field(default=0.2, gt=0.0, le=1.0, description="Capability gate share.")
    limits: SandboxLimits = Field(default_factory=SandboxLimits)
    data: Path | None = Field(
        default=None, description="The target's data folder (e.g. tau2's; else its variable, $TRACE_ENVS_TAU2_DATA)."
    )
    calibration: CalibrationSettings | None = Field(default=None, description="Calibrate with this policy.")
    budget: PromptBudget = Field(default_factory=PromptBudget)

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, values: Any) -> Any:
        return renamed_keys(values, {"tau2_data": "data"})

    def context(self, request: SynthesisRequest, generator: Generator, filename: str) -> GateContext:
        return GateContext(
            target=request.target,
            capability=request.capability,
            seeds=self.seeds,
            fuzz_examples=self.fuzz_examples,
            limits=self.limits,
            data=self.data,
            filename=filename,
            flawed_failure_share=self.flawed_failure_share,
            trusted_imports=tuple(getattr(generator, "trusted_imports", ())),
            calibration=self.calibration,
        )


class SynthesisResult(BaseModel):
    """What became of one capability."""

    capability: str
    target: str
    generator: str
    status: Literal["passed", "rejected"]
    module: str | None = Field(default=None, description="Path of the validated module written to out.")
    env_id: str | None = None
    attempts: int = 0
    stopped_by: str | None = Field(default=None, description="The gate that stopped the last attempt.")
    reason: str = ""
    report: ValidationReport | None = Field(default=None, description="The last attempt's gate report.")
    prompt_sha256: str | None = None
    cost_usd: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    notes: list[str] = Field(default_factory=list)


def validate_reply(reply: str, context: GateContext) -> tuple[str | None, ValidationReport]:
    """The module taken from a reply and its gate report (a reply without one fails the format gate)."""
    source, format_result = extract_module(reply)
    if source is None:
        skipped = [
            GateResult(gate=gate.gate_name, status="skipped", details={"note": "stopped by format"})
            for gate in default_gates(calibrate=context.calibration is not None)
        ]
        report = ValidationReport(
            module=context.filename,
            source_sha256=prompt_hash(reply),
            target=context.target,
            capability=context.capability,
            results=[format_result, *skipped],
        )
        return None, report
    report = validate_source(source, context)
    report.results.insert(0, format_result)
    return source, report


def _finding_lines(report: ValidationReport) -> list[tuple[str, str]]:
    """``(dedup key, text)`` of each finding of the failed gates."""
    lines = []
    for result in report.results:
        if result.status == "failed":
            for finding in result.findings:
                key = "|".join((result.gate, finding.rule, finding.subject, finding.message))
                lines.append((key, f"[{result.gate}] {finding.render()}"))
    return lines


def build_request(
    capability: str | SynthesisRequest,
    target: str,
    *,
    description: str | None = None,
    analysis: Any = None,
    store: Path | None = None,
    budget: PromptBudget | None = None,
) -> SynthesisRequest:
    """The request for a capability: given whole, from an analysis (result or path), from a description,
    or from the known capabilities' dictionary."""
    if isinstance(capability, SynthesisRequest):
        return capability
    if analysis is not None:
        from trace_envs.analysis.runner import load_analysis

        from .evidence import request_from_analysis

        base = Path(analysis).parent if isinstance(analysis, str | Path) else None
        result = load_analysis(analysis) if isinstance(analysis, str | Path) else analysis
        return request_from_analysis(result, capability, target, store=store, base=base, budget=budget)
    if description is None:
        from trace_envs.analysis.known import known_dictionary

        known = known_dictionary().get(capability)
        if known is None:
            raise ValueError(f"description: {capability!r} is not a known capability; pass description= or analysis=")
        description = known.description
    return SynthesisRequest(capability=capability, description=description, target=target)


def synthesize(
    capability: str | SynthesisRequest,
    target: str,
    generator: str | Generator,
    *,
    out: str | Path,
    settings: SynthesisSettings | None = None,
    description: str | None = None,
    analysis: Any = None,
    store: Path | None = None,
    progress: Progress | None = None,
    **model_options: Any,
) -> SynthesisResult:
    """Synthesise (or resume synthesising) one capability's env for ``target`` into ``out``.

    ``generator`` is ``catalogue``, a model spec or a :class:`~trace_envs.synthesis.generation.generators.Generator`;
    ``model_options`` set the model client's fields (``base_url``, ``api_key``, ...). Passing modules are
    written as ``out/<capability>.py`` and recorded in ``out/manifest.json``; rejections are recorded there
    too, and never written as a module.
    """
    settings = settings or SynthesisSettings()
    generator = make_generator(generator, **model_options) if isinstance(generator, str) else generator
    request = build_request(
        capability, target, description=description, analysis=analysis, store=store, budget=settings.budget
    )
    if request.target != target:
        raise ValueError(f"target: the request is for {request.target!r}, not {target!r}")
    out = Path(out)
    report_progress = progress or (lambda capability, message: None)
    prompt = generation_prompt(request, settings.budget, flawed_failure_share=settings.flawed_failure_share)
    digest = prompt_hash(prompt)
    attempts = AttemptStore(out, request.capability)
    attempts.open(SynthesisHeader(request=request, generator=generator.spec, prompt_sha256=digest))
    result = SynthesisResult(
        capability=request.capability,
        target=target,
        generator=generator.spec,
        status="rejected",
        prompt_sha256=digest,
        notes=list(request.notes),
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    reported: set[str] = set()
    rounds = settings.rounds if generator.repairable else 1
    filename = f"{request.capability}.py"
    for number in range(1, rounds + 1):
        attempt = attempts.attempt(number)
        generation = attempt.generation()
        if generation is None:
            report_progress(request.capability, f"round {number}: asking {generator.spec}")
            attempt.save_prompt(messages)
            try:
                generation = generator.generate(messages, request)
            except NoCatalogueEnv as exc:  # the catalogue has no env for it: final, nothing to repair
                result.reason = str(exc)
                result.attempts = number
                _reject(out, result)
                return result
            attempt.save_generation(generation)
        result.attempts = number
        result.usage = result.usage + generation.usage
        result.cost_usd = result.usage.cost_usd
        report = attempt.report()
        source = attempt.module()
        if report is None:
            report_progress(request.capability, f"round {number}: validating")
            context = settings.context(request, generator, filename)
            if context.calibration is not None:
                calibration = context.calibration.model_copy(update={"store": attempt.folder / "calibration.jsonl"})
                context.calibration = calibration
            source, report = validate_reply(generation.text, context)
            attempt.save_result(source, report)
        result.report = report
        result.stopped_by = report.stopped_by
        if report.passed and source is not None:
            return _accept(out, result, source, generator)
        lines = _finding_lines(report)
        new = [text for key, text in lines if key not in reported]
        repeated = [text for key, text in lines if key in reported]
        reported.update(key for key, _ in lines)
        report_progress(request.capability, f"round {number}: rejected by {report.stopped_by}")
        messages = [
            *messages,
            {"role": "assistant", "content": generation.text},
            {"role": "user", "content": repair_prompt(new, repeated, report.stopped_by or "")},
        ]
    last = result.report
    result.reason = (
        f"rejected by {result.stopped_by} after {result.attempts} attempt(s)"
        if last is not None
        else "no attempt was made"
    )
    _reject(out, result)
    return result


def _accept(out: Path, result: SynthesisResult, source: str, generator: Generator) -> SynthesisResult:
    """Write the module and its manifest entry."""
    assert result.report is not None
    path = out / f"{result.capability}.py"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    calibration = next((r.details for r in result.report.results if r.gate == "calibration" and r.passed), None)
    notes = list(result.notes)
    if generator.spec == CATALOGUE:
        notes.append("catalogue: a shipped env reused through the same gates; no model was asked")
    record_module(
        out,
        ModuleEntry(
            module=path.name,
            env_id=source_env_id(parse_module(source)) or env_id_for(result.capability),  # checked by the gates
            capability=result.capability,
            target=result.target,
            generator=result.generator,
            prompt_sha256=result.prompt_sha256,
            attempts=result.attempts,
            gates=gate_summaries(result.report),
            calibration=calibration,
            cost_usd=result.cost_usd,
            usage=result.usage,
            source_sha256=result.report.source_sha256,
            notes=notes,
        ),
    )
    return result.model_copy(
        update={"status": "passed", "module": str(path), "env_id": env_id_for(result.capability), "notes": notes}
    )


def _reject(out: Path, result: SynthesisResult) -> None:
    findings = [text for _, text in _finding_lines(result.report)] if result.report is not None else []
    record_rejection(
        out,
        Rejection(
            capability=result.capability,
            target=result.target,
            generator=result.generator,
            prompt_sha256=result.prompt_sha256,
            attempts=result.attempts,
            stopped_by=result.stopped_by,
            reason=result.reason,
            findings=findings,
            cost_usd=result.cost_usd,
        ),
    )
