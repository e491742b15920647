"""The whole analysis: load the store, discover the dictionary once (or use the probes' known one),
label R times (resumable), compute the statistics per run and across runs, check agreement with the
probes, and write ``analysis.json`` plus the report.

Output folder layout: ``dictionary.json`` (discovery and the store it analysed, reused on resume; a folder
made from another store is refused), ``labels.jsonl`` (appended as labels come), ``batch.json`` (a Message
Batch in flight), ``analysis.json``, ``report.md``, plots.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from trace_envs.llm.base import ChatModel, Usage
from trace_envs.llm.client import closing_connections
from trace_envs.rollout.store import EpisodeRecord, load_episodes

from .known import known_dictionary
from .label_store import LabelStore
from .models import AnalysisConfig, AnalysisResult, CapabilityDictionary, TrajectoryLabels
from .stats import kept_names, run_stats, summarize
from .trajectories import episode_id

PROBES_ANALYST = "probes"

Progress = Callable[[str, int, int], None]
"""Called with (phase, done, total); phases: ``discover``, ``label``."""


class DiscoveryRecord(BaseModel):
    """``dictionary.json``: the dictionary found once, from which store, who found it and what it cost."""

    analyst: str
    store: str | None = Field(default=None, description="Resolved path of the analysed store (None: not recorded).")
    dictionary: CapabilityDictionary
    usage: Usage = Field(default_factory=Usage)


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def load_records(store: str | Path) -> list[EpisodeRecord]:
    """Finished episodes of a trajectory store; a missing or empty store is an error that says so."""
    path = Path(store)
    records = load_episodes(path)  # a missing store raises FileNotFoundError naming the fix
    if not records:
        raise ValueError(f"trajectory store {path} holds no finished episode; nothing to analyse")
    return records


def _store_key(store: str | Path) -> str:
    return str(Path(store).resolve())


async def _dictionary(
    config: AnalysisConfig,
    analyst: ChatModel | None,
    records: list[EpisodeRecord],
    out: Path,
    progress: Progress | None,
    store: str | Path,
) -> DiscoveryRecord:
    path = out / "dictionary.json"
    if path.exists():
        saved = DiscoveryRecord.model_validate_json(path.read_text(encoding="utf-8"))
        if saved.store is not None and saved.store != _store_key(store):
            raise ValueError(
                f"{out} holds the analysis of another store ({saved.store}, not {_store_key(store)}); its dictionary "
                "and labels would be reused: use another --out folder, or delete this one to start over"
            )
        if saved.analyst != config.analyst:
            raise ValueError(
                f"{path} was discovered by {saved.analyst!r}, not {config.analyst!r}; use another --out folder "
                "or delete it to discover again"
            )
        return saved
    if progress is not None:
        progress("discover", 0, 1)
    if analyst is None:
        saved = DiscoveryRecord(analyst=config.analyst, dictionary=known_dictionary(), store=_store_key(store))
    else:
        from .discovery import discover

        dictionary, usage = await discover(
            analyst,
            records,
            token_budget=config.discovery_token_budget,
            per_trajectory=config.trajectory_token_budget,
            seed=config.seed,
            known=config.known_capabilities,
            max_repairs=config.max_repairs,
            sampling=config.sampling,
        )
        saved = DiscoveryRecord(analyst=config.analyst, dictionary=dictionary, usage=usage, store=_store_key(store))
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, saved.model_dump_json(indent=2))
    if progress is not None:
        progress("discover", 1, 1)
    return saved


def _check_labels(rows: dict[tuple[int, str], TrajectoryLabels], dictionary: CapabilityDictionary, path: Path) -> None:
    names = set(dictionary.names)
    for row in rows.values():
        if set(row.labels) != names:
            raise ValueError(
                f"{path} holds labels for capabilities {sorted(row.labels)}, not this dictionary's {sorted(names)}; "
                "use another --out folder"
            )


async def arun_analysis(
    store: str | Path,
    config: AnalysisConfig,
    out: str | Path,
    *,
    analyst: ChatModel | None = None,
    progress: Progress | None = None,
    report: bool = True,
    poll_s: float = 30.0,
) -> AnalysisResult:
    """Run (or resume) an analysis of ``store`` into ``out``. ``analyst`` overrides the client built
    from ``config.analyst`` (pass one to share it or to point it at a test server)."""
    records = load_records(store)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if config.analyst == PROBES_ANALYST:
        analyst = None  # the probes need no model
    elif analyst is None:
        from trace_envs.llm.factory import make_chat_model

        analyst = make_chat_model(config.analyst)
    async with closing_connections(analyst):
        discovery = await _dictionary(config, analyst, records, out_dir, progress, store)
        dictionary = discovery.dictionary
        labels = LabelStore(out_dir / "labels.jsonl")
        _check_labels(labels.load(), dictionary, labels.path)

        def on_label(done: int, total: int) -> None:
            if progress is not None:
                progress("label", done, total)

        if analyst is None:
            from .labelling import label_with_probes

            label_with_probes(records, dictionary, labels, runs=config.runs, on_progress=on_label)
        elif config.batch:
            from .batches import label_with_batches

            await label_with_batches(
                analyst, records, dictionary, labels, out_dir / "batch.json", runs=config.runs,
                token_budget=config.trajectory_token_budget, max_repairs=config.max_repairs, sampling=config.sampling,
                poll_s=poll_s, on_progress=on_label,
            )  # fmt: skip
        else:
            from .labelling import label_all

            await label_all(
                analyst, records, dictionary, labels, runs=config.runs, concurrency=config.concurrency,
                token_budget=config.trajectory_token_budget, max_repairs=config.max_repairs, sampling=config.sampling,
                on_progress=on_label,
            )  # fmt: skip
    result = build_result(config, str(store), records, dictionary, labels.load(), discovery.usage)
    _write_atomic(out_dir / "analysis.json", result.model_dump_json(indent=2))
    if report:
        from .report import write_report

        write_report(result, out_dir)
    return result


def build_result(
    config: AnalysisConfig,
    store: str,
    records: list[EpisodeRecord],
    dictionary: CapabilityDictionary,
    rows: dict[tuple[int, str], TrajectoryLabels],
    discovery_usage: Usage,
) -> AnalysisResult:
    """Statistics per run and across runs, the kept names, agreement with the probes and the cost."""
    ids = {episode_id(r) for r in records}
    names = dictionary.names
    labels = [row for (run, episode), row in sorted(rows.items()) if run < config.runs and episode in ids]
    per_run = [
        run_stats(
            [row for row in labels if row.run == run],
            names,
            run=run,
            delta=config.delta,
            rho=config.rho,
            require_contrast=config.require_contrast,
        )
        for run in range(config.runs)
    ]
    summary = summarize(per_run, names, min_selection=config.min_selection)
    labelling_usage = Usage()
    for row in labels:
        labelling_usage = labelling_usage + row.usage
    agreement: list[Any] = []
    if config.analyst != PROBES_ANALYST:
        from .agreement import agreement as compute_agreement

        agreement = compute_agreement(labels, records)
    successes = sum(r.success for r in records)
    return AnalysisResult(
        config=config,
        store=store,
        episodes=len(records),
        successes=successes,
        failures=len(records) - successes,
        dictionary=dictionary,
        labels=labels,
        runs=per_run,
        summary=summary,
        kept=kept_names(summary),
        agreement=agreement,
        discovery_usage=discovery_usage,
        labelling_usage=labelling_usage,
        cost_usd=discovery_usage.cost_usd + labelling_usage.cost_usd,
    )


def run_analysis(store: str | Path, config: AnalysisConfig, out: str | Path, **options: Any) -> AnalysisResult:
    """Synchronous :func:`arun_analysis`."""
    return asyncio.run(arun_analysis(store, config, out, **options))


def load_analysis(path: str | Path) -> AnalysisResult:
    """Read an ``analysis.json`` (or the folder holding one)."""
    file = Path(path)
    if file.is_dir():
        file = file / "analysis.json"
    return AnalysisResult.model_validate_json(file.read_text(encoding="utf-8"))
