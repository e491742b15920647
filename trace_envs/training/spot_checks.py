"""Spot checks of a training run's dataset (:mod:`trace_envs.core.spot_checks`), before any GRPO step.

Each env's first row seed and a share of its other row seeds (``TrainConfig.spot_check_share``, drawn with
``spot_check_seed``) get an oracle, a junk and a flawed episode on the env the run trains. An env that pays junk
or whose oracle fails is stopped before the trainer sees a row of it: its rows leave the dataset, one line naming
it and the seed is logged, and the run trains on the other envs; with no env left it stops with that line.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from random import Random
from typing import Any

from trace_envs.core.spot_checks import (
    SpotCheckFailure,
    SpotCheckStop,
    chosen_seeds,
    fresh_spot_check_seed,
    spot_check,
)

LOG = logging.getLogger(__name__)


def spot_checked_rows(
    rows: Sequence[dict[str, Any]], envs: Mapping[str, Any], share: float, seed: int | None = None
) -> tuple[list[dict[str, Any]], dict[str, SpotCheckFailure]]:
    """``rows`` without those of envs a spot check stopped, and the failures (``envs``: one env per env id)."""
    run_seed = fresh_spot_check_seed() if seed is None else seed
    rng = Random(run_seed)
    seeds: dict[str, list[int]] = {}
    for row in rows:
        env_seeds = seeds.setdefault(str(row["environment"]), [])
        if int(row["seed"]) not in env_seeds:
            env_seeds.append(int(row["seed"]))
    failures: dict[str, SpotCheckFailure] = {}
    for env_id, env_seeds in seeds.items():
        for checked in chosen_seeds(env_seeds, share, rng):
            failure = spot_check(envs[env_id], env_id, checked, Random(f"{run_seed}/{env_id}/{checked}"))
            if failure is not None:
                failures[env_id] = failure
                LOG.error("%s", failure.message)
                break
    kept = [row for row in rows if str(row["environment"]) not in failures]
    if rows and not kept:
        raise SpotCheckStop("; ".join(failure.message for failure in failures.values()))
    return kept, failures
