"""Gate 4: run the property suite against the module's boxed env, twice in parallel, and judge what came back.

The module runs only in boxes (:mod:`trace_envs.box`); the checks run here, in the validator, through
the same proxy training and evaluation use. The first run runs trace_envs.testing's checks (Gymnasium's
check_env, diversity, oracle 1.0, the flawed solution failing, junk policies 0, Hypothesis actions, no
state leak) and fingerprints every seed; the second, in other boxes (each box has a fresh random
``PYTHONHASHSEED``), only fingerprints. Equal fingerprints are the cross-process determinism check.
Anything the audit hook refused, a timeout, a crash, a limit hit or a broken protocol rejects the
module. The first run's outcome is left in ``context.evidence["execution"]`` for later gates.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from concurrent.futures import ThreadPoolExecutor

from trace_envs.registry import get_domain, ids
from trace_envs.registry.targets import TargetDataError, target

from ..sandbox.process import run_in_sandbox
from ..sandbox.protocol import BoxMode, SandboxOutcome
from .ast_names import parse_module
from .context import GateContext, named_gate
from .env_identity import env_id_findings
from .leakage import evaluation_index, scan_generated_texts
from .play_seeds import fresh_draw_seed, validation_seeds
from .reports import Finding, GateResult

MODES: tuple[BoxMode, BoxMode] = ("suite", "fingerprint")
MODEL_USER_DRAWN = 3
"""Drawn seeds also played with a model-played user (besides the first fixed seed)."""
SEED_IN_MESSAGE = re.compile(r"\bseeds? (\d+)")
PROPERTY_FIXES: dict[str, str] = {
    "gym_api": "reset(seed=s) must give the same observation every time; keep reset/step signatures and the spaces.",
    "tool_schemas": "Offer only the target domain's tools, selected with tool_names.",
    "diversity": "Make generate() draw the task from rng, so that different seeds give different tasks.",
    "oracle_solves": "Make Task.solution solve the task with the real tools and tell every required fact.",
    "flawed_fails": "Make Task.flawed_solution skip the capability (e.g. act without the check), so that it fails on some seeds.",
    "junk_fails": "Require a state change or a fact that only a correct solution produces (the verifier is too lax).",
    "constant_answer_fails": (
        "Require facts only the lookup reveals (the record's own values), or list the deciding lookups in "
        "Task.required_reads, so that one canned message cannot pass."
    ),
    "any_action_is_safe": "Let the base class handle actions; never raise from step() or from a tool on bad input.",
    "no_state_leak": "Keep all episode state on the instance and rebuild it in generate(); no class-level or module-level mutable state.",
    "determinism": "Draw everything from rng: no global random, hash(), set iteration order or clock.",
    "model_user": "Score the episode the same whoever plays the user: the verifier must not read the user's kind.",
}
REFERENCE_STEP = "reference solution step"
REFERENCE_STEP_FIX = (
    "Make that call of Task.solution succeed on the task's initial state (an id the state holds, arguments the "
    "tool accepts), or mark a call that must fail with plan.call(..., expect_error=...)."
)
"""The fix of a reference call that failed, whichever property check replayed the reference and saw it."""
ERROR_FIXES = {
    "import": "The module must import without errors and define exactly one concrete CapabilityEnv subclass.",
    "reset": (
        "generate() must build a valid Task for every seed, and reset() must not raise: a plan.call that fails "
        "names a record the state lacks or arguments the tool refuses; build the state so the call succeeds, "
        "or pass expect_error= for a call that must fail."
    ),
    "run": "step() must never raise, whatever the action; the reference solution must run without errors.",
}
SIGNAL_MEANINGS = {
    "SIGXCPU": "used more CPU time than its limit",
    "SIGXFSZ": "wrote a file larger than its limit",
    "SIGKILL": "was killed (most likely by the kernel for memory)",
    "SIGSEGV": "crashed the interpreter",
}


def candidate_env_id(source: str) -> str:
    """The temporary id the module is registered under inside the box."""
    return ids.candidate_env_id(hashlib.sha256(source.encode("utf-8")).hexdigest())


@named_gate("execution")
def execution_gate(source: str, context: GateContext) -> GateResult:
    """Gate 4: the property suite in a sandbox, plus determinism across two sandboxed processes."""
    if importlib.util.find_spec("hypothesis") is None:
        missing = Finding(
            rule="missing-dependency",
            message="the property suite run in the sandbox needs Hypothesis, which is not installed.",
            fix="pip install 'trace-envs[synthesis]' (this is not the module's fault).",
        )
        return GateResult(gate="execution", status="failed", findings=[missing])
    draw_seed = fresh_draw_seed() if context.draw_seed is None else context.draw_seed
    seeds = validation_seeds(context.seeds, context.drawn_seeds, draw_seed)
    env_id = candidate_env_id(source)
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = [
            pool.submit(
                run_in_sandbox,
                source,
                mode=mode,
                seeds=seeds,
                env_id=env_id,
                fuzz_examples=context.fuzz_examples,
                limits=context.limits,
                model_user_seeds=model_user_seeds(context, seeds),
            )
            for mode in MODES
        ]
        suite, second = (run.result() for run in runs)
    context.evidence["execution"] = suite
    findings = outcome_findings(suite)
    findings += [f for f in outcome_findings(second, "the second process") if f not in findings]
    findings += runtime_contract_findings(suite, context) + determinism_findings(suite, second)
    findings += generated_leak_findings(suite, context)
    findings += paced_findings(suite)
    if suite.result is not None and suite.result.module is not None:
        module = suite.result.module
        findings += env_id_findings(source, parse_module(source), module.env_id, module.capability)
    return GateResult(
        gate="execution",
        status="failed" if findings else "passed",
        findings=findings,
        details={
            "isolation": suite.isolation,
            "wall_seconds": [round(suite.wall_seconds, 3), round(second.wall_seconds, 3)],
            "seconds": suite.result.seconds if suite.result else {},
            "blocked": len(suite.blocked) + len(second.blocked),
            "seeds": len(seeds),
            "drawn_seeds": seeds[context.seeds :],
            "draw_seed": draw_seed,
        },
    )


def model_user_seeds(context: GateContext, seeds: list[int]) -> list[int]:
    """The seeds played with a model-played user where the target's users are a model's (tau2's): the first
    fixed seed and up to :data:`MODEL_USER_DRAWN` of the drawn ones; none for a target with scripted users."""
    if not target(context.target).needs_user_model:
        return []
    return [seeds[0], *seeds[context.seeds :][:MODEL_USER_DRAWN]]


def paced_findings(outcome: SandboxOutcome) -> list[Finding]:
    """A finding when the episodes played at a model's pace scored otherwise than at machine speed (a verifier
    that reads the time since its reset: validation must not be told from use by its speed)."""
    if outcome.result is None or outcome.result.paced is None:
        return []
    return [
        Finding(
            rule="paced-episode",
            message=f"played at a model's pace, {outcome.result.paced}: the env scores by how long an episode "
            "took, which tells validation from use.",
            fix="Score the episode by its messages and final state only, never by time.",
        )
    ]


def generated_leak_findings(outcome: SandboxOutcome, context: GateContext) -> list[Finding]:
    """The evaluation tasks' ids and instructions in what the env generated (the source check cannot see text
    built at run time); nothing when the target's data is missing (the leakage gate already says so)."""
    if outcome.result is None or not outcome.result.generated_texts:
        return []
    try:
        index = evaluation_index(context)
    except TargetDataError:
        return []
    return scan_generated_texts(outcome.result.generated_texts, index)


def outcome_findings(outcome: SandboxOutcome, which: str = "the sandbox") -> list[Finding]:
    """What went wrong in one sandboxed run, most serious first: refusals, limits, failed properties, then
    the exception that stopped the run (often a consequence of the failures before it)."""
    findings = [
        Finding(
            rule="sandbox-refused",
            subject=event.event,
            message=(
                f"during {event.stage or 'startup'} the module attempted {event.event}: {event.detail}. The sandbox "
                "refused it; a module that tries once would try again when imported for training."
            ),
            fix="Remove that code: a capability env needs no files, processes, network, native code or introspection.",
        )
        for event in outcome.blocked
    ]
    limits = outcome.limits
    if outcome.timed_out:
        findings.append(
            Finding(
                rule="timeout",
                subject=outcome.last_stage,
                message=(
                    f"{which} did not finish within {limits.wall_seconds:g} s (wall clock) during {outcome.last_stage}; "
                    "its whole process group was killed."
                ),
                fix=f"Look for an infinite loop or unbounded work in {outcome.last_stage}: generate, step and the verifier must finish fast.",
            )
        )
    elif outcome.signal is not None:
        meaning = SIGNAL_MEANINGS.get(outcome.signal, "was killed by a signal")
        limit = {
            "SIGXCPU": f" ({limits.cpu_seconds} CPU seconds)",
            "SIGXFSZ": f" ({limits.file_size_bytes:,} bytes)",
        }.get(outcome.signal, "")
        findings.append(
            Finding(
                rule="killed",
                subject=outcome.signal,
                message=f"{which} {meaning}{limit} during {outcome.last_stage} ({outcome.signal}).",
                fix=f"Make {outcome.last_stage} do bounded work with bounded memory.",
            )
        )
    elif outcome.crashed is not None:
        findings.append(
            Finding(
                rule="box-crashed",
                subject=outcome.last_stage,
                message=f"{which}: during {outcome.last_stage} {outcome.crashed}",
                fix="Do not exit the process, close its descriptors or write to them; let errors propagate as exceptions.",
            )
        )
    elif outcome.result is None:
        findings.append(
            Finding(
                rule="no-result",
                subject=outcome.last_stage,
                message=(
                    f"{which} exited with code {outcome.exit_code} during {outcome.last_stage} without a result; "
                    f"stderr ends: {outcome.stderr_tail[-300:].strip() or '(empty)'}"
                ),
                fix="Do not exit the process or close its descriptors; let errors propagate as exceptions.",
            )
        )
    result = outcome.result
    if result is not None and result.suite is not None:
        for failure in result.suite.failures():
            seed = SEED_IN_MESSAGE.search(failure.message)
            reference = REFERENCE_STEP in failure.message  # the reference failed, whichever check ran it
            findings.append(
                Finding(
                    rule="reference-step-failed" if reference else f"property-{failure.name}",
                    subject=failure.name,
                    seed=int(seed.group(1)) if seed else None,
                    message=failure.message.replace(f"{result.suite.env_id}: ", "", 1),
                    fix=REFERENCE_STEP_FIX
                    if reference
                    else PROPERTY_FIXES.get(failure.name, "See docs/testing-an-env.md for what this property checks."),
                )
            )
    if result is not None and result.error is not None:
        error = result.error
        memory = error.kind == "MemoryError"
        findings.append(
            Finding(
                rule="memory" if memory else f"error-{error.stage.replace(' ', '-')}",
                line=error.line,
                seed=error.seed,
                subject=error.stage,
                message=(
                    f"{which}: the module ran out of memory (address-space limit {limits.memory_bytes:,} bytes) during {error.stage}."
                    if memory
                    else f"{which}: {error.kind} during {error.stage}: {error.message}"
                ),
                fix=(
                    "Keep the state small: a capability env needs kilobytes, not gigabytes."
                    if memory
                    else ERROR_FIXES.get(error.stage, ERROR_FIXES["run"])
                ),
            )
        )
    return findings


def runtime_contract_findings(outcome: SandboxOutcome, context: GateContext) -> list[Finding]:
    """The live env's domain, capability and tool schemas, checked here against our own domain object."""
    info = outcome.result.module if outcome.result else None
    if info is None:
        return []
    findings = []
    domain = target(context.target).synthesis_domain()[0]
    if info.domain != domain:
        findings.append(
            Finding(
                rule="contract-runtime",
                subject="domain",
                message=f"the live env runs on domain {info.domain!r}, not {domain!r}.",
                fix=f"Set domain to the {domain} domain object.",
            )
        )
    if context.capability is not None and info.capability != context.capability:
        findings.append(
            Finding(
                rule="contract-runtime",
                subject="capability",
                message=f"the live env declares capability {info.capability!r}, not {context.capability!r}.",
                fix="Declare the requested capability.",
            )
        )
    reference = {schema["function"]["name"]: schema for schema in get_domain(domain).toolset.schemas()}
    for schema in info.tool_schemas:
        name = schema.get("function", {}).get("name")
        if schema != reference.get(name):
            findings.append(
                Finding(
                    rule="contract-runtime",
                    subject=str(name),
                    message=f"the live env offers tool {name!r} with a schema that is not the {context.target} domain's.",
                    fix="Offer only the domain's own tools, selected with tool_names.",
                )
            )
    return findings


def determinism_findings(first: SandboxOutcome, second: SandboxOutcome) -> list[Finding]:
    """Seeds whose fingerprints differ between the two processes (different PYTHONHASHSEED)."""
    if first.result is None or second.result is None:
        return []
    here, there = first.result.fingerprints, second.result.fingerprints
    findings = []
    for seed in sorted(here.keys() & there.keys()):
        differing = [key for key in here[seed] if here[seed][key] != there[seed].get(key)]
        if differing:
            findings.append(
                Finding(
                    rule="property-determinism",
                    subject="determinism",
                    seed=seed,
                    message=(
                        f"seed {seed} is not deterministic across processes ({', '.join(differing)} differ between "
                        "two boxes, each with its own random PYTHONHASHSEED)."
                    ),
                    fix=PROPERTY_FIXES["determinism"],
                )
            )
            if len(findings) >= 3:
                break
    return findings
