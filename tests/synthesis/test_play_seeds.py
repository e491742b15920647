"""Validation plays its fixed seeds and seeds drawn afresh on each run from the range use plays (issue 34, item 5)."""

from __future__ import annotations

from trace_envs.synthesis.gates.play_seeds import (
    RESET_SEEDS,
    TRAINING_ROW_SEEDS,
    fresh_draw_seed,
    validation_seeds,
)
from trace_envs.training.config import TrainConfig


def test_the_fixed_seeds_come_first_then_drawn_ones_from_the_training_rows_and_the_reset_range() -> None:
    seeds = validation_seeds(50, 10, draw_seed=1)
    assert seeds[:50] == list(range(50)) and len(seeds) == len(set(seeds)) == 60
    drawn = seeds[50:]
    assert all(seed in TRAINING_ROW_SEEDS for seed in drawn[0::2]) and all(seed in RESET_SEEDS for seed in drawn)
    assert any(seed >= TRAINING_ROW_SEEDS.stop for seed in drawn[1::2])


def test_the_draw_is_replayable_from_its_seed_and_differs_between_runs() -> None:
    assert validation_seeds(5, 6, draw_seed=9) == validation_seeds(5, 6, draw_seed=9)
    assert validation_seeds(5, 6, draw_seed=9) != validation_seeds(5, 6, draw_seed=10)
    assert fresh_draw_seed() != fresh_draw_seed() or fresh_draw_seed() != fresh_draw_seed()


def test_the_training_rows_range_is_the_train_configs_default() -> None:
    config = TrainConfig(env_ids=["trace/order-cancel-v0"])
    assert range(config.first_seed, config.first_seed + config.num_seeds) == TRAINING_ROW_SEEDS


def test_a_drawn_seed_never_repeats_a_fixed_one_even_when_the_training_range_is_nearly_used() -> None:
    seeds = validation_seeds(999, 4, draw_seed=2)
    assert len(set(seeds)) == len(seeds) == 1003
