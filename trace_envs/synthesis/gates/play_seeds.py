"""Which seeds validation plays: the fixed ones, and seeds drawn afresh on every run from the range use plays.

A module that behaves on validation's fixed seeds (0 to ``context.seeds - 1``) and pays junk elsewhere would pass
a fixed sample. So beside them validation plays :data:`DRAWN_SEEDS` seeds drawn at random on each run, half from
the seeds training rows use by default (:data:`TRAINING_ROW_SEEDS`, ``TrainConfig``'s ``first_seed`` and
``num_seeds``) and half from the whole range a reset without a seed draws from (:data:`RESET_SEEDS`). The draw's
seed is fresh (``os.urandom``) unless the context fixes it, and the report records it and every seed played, so a
run can be replayed exactly.
"""

from __future__ import annotations

import os
from random import Random

DRAWN_SEEDS = 10
"""Seeds drawn per validation run, besides the fixed ones."""
TRAINING_ROW_SEEDS = range(0, 1000)
"""The seeds of a training run's rows by default (``TrainConfig.first_seed`` 0, ``num_seeds`` 1000)."""
RESET_SEEDS = range(0, 2**31 - 1 - 1000)
"""Where a reset without a seed draws its task seed (kept 1,000 short of the top: the suite reads seeds just past
the ones it checks)."""


def fresh_draw_seed() -> int:
    """A seed for the draw that no module can know in advance."""
    return int.from_bytes(os.urandom(4), "big")


def validation_seeds(fixed: int, drawn: int, draw_seed: int) -> list[int]:
    """The fixed seeds ``0 .. fixed - 1``, then ``drawn`` others (none repeated): half from the training rows'
    range (beyond the fixed ones, where it has room), half from the whole reset range."""
    rng = Random(draw_seed)
    seeds, chosen = list(range(fixed)), set(range(fixed))
    ranges = (TRAINING_ROW_SEEDS, RESET_SEEDS)
    for index in range(drawn):
        space = ranges[index % 2]
        if len(space) <= len(chosen) + 1:
            space = RESET_SEEDS
        seed = rng.choice(space)
        while seed in chosen:
            seed = rng.choice(space)
        seeds.append(seed)
        chosen.add(seed)
    return seeds
