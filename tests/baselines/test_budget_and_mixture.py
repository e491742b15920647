"""Budget arithmetic (steps = budget // G x K) and the mixture's largest-remainder allocation, hand-computed."""

from __future__ import annotations

import pytest

from trace_envs.baselines.budget import budgeted_config, grpo_steps
from trace_envs.baselines.mixture import allocate_groups, check_weights, group_schedule
from trace_envs.baselines.sft_data import collection_jobs
from trace_envs.training import TrainConfig


def test_a_budget_buys_whole_grpo_steps() -> None:
    paper = TrainConfig(num_generations=16, per_device_train_batch_size=128)  # G = 8 groups of K = 16
    assert grpo_steps(5120, paper) == 40  # the paper's 5,120 rollouts: 40 iterations x 8 x 16
    assert grpo_steps(5247, paper) == 40  # the remainder (127 rollouts) is not spent
    assert budgeted_config(paper, 256).rollout_budget == 256
    small = TrainConfig(num_generations=2, per_device_train_batch_size=2, gradient_accumulation_steps=2)
    assert grpo_steps(9, small) == 2


def test_a_budget_below_one_step_is_refused_with_the_smallest_that_works() -> None:
    config = TrainConfig(num_generations=4, per_device_train_batch_size=8)
    with pytest.raises(
        ValueError,
        match=r"7 rollouts do not buy one GRPO step \(2 group\(s\) x K=4 = 8 rollouts\): "
        r"give --budget 8 or more",
    ):
        grpo_steps(7, config)
    with pytest.raises(ValueError, match="positive number of rollouts, got 0"):
        grpo_steps(0, config)


def test_groups_are_allocated_by_largest_remainder() -> None:
    envs = ["a", "b", "c"]
    # quotas 2.64, 2.64, 2.72 -> floors 2, 2, 2; the 2 left go to c (.72), then a (.64, listed before b)
    assert allocate_groups(envs, [0.33, 0.33, 0.34], 8) == {"a": 3, "b": 2, "c": 3}
    # uniform: 4/3 each -> 1, 1, 1; one left, all remainders tie -> the first env
    assert allocate_groups(envs, [1, 1, 1], 4) == {"a": 2, "b": 1, "c": 1}
    # 1:3 of 5 -> 1.25, 3.75 -> 1, 3 + 1 to b
    assert allocate_groups(["a", "b"], [1, 3], 5) == {"a": 1, "b": 4}
    assert allocate_groups(["a", "b"], [0, 1], 3) == {"a": 0, "b": 3}


def test_the_schedule_interleaves_envs_one_seed_per_group() -> None:
    # a's 2 groups sit at 1/4 and 3/4 of the run, b's one at 1/2; seeds count up per env
    assert group_schedule({"a": 2, "b": 1}, first_seed=10) == [("a", 10), ("b", 10), ("a", 11)]
    schedule = group_schedule(allocate_groups(["a", "b", "c"], [0.33, 0.33, 0.34], 8))
    assert schedule == [("a", 0), ("c", 0), ("b", 0), ("a", 1), ("c", 1), ("b", 1), ("a", 2), ("c", 2)]


@pytest.mark.parametrize(
    ("env_ids", "weights", "message"),
    [
        (["a", "b"], [1.0], "--weights has 1 value\\(s\\) for 2 env\\(s\\)"),
        (["a", "b"], [1.0, -1.0], "--weights must be >= 0 and not all 0"),
        (["a", "b"], [0.0, 0.0], "--weights must be >= 0 and not all 0"),
        (["a", "a"], None, "--env names an env twice"),
        ([], None, "a mixture needs at least one env"),
    ],
)
def test_bad_mixtures_name_the_fix(env_ids: list[str], weights: list[float] | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_weights(env_ids, weights)


def test_sft_collection_spends_exactly_the_budget_in_episodes() -> None:
    jobs = collection_jobs(["trace/order-cancel-v0", "trace/datetime-v0"], 5, first_seed=3)
    assert [(j.env_id, j.seed) for j in jobs] == [
        ("trace/order-cancel-v0", 3),
        ("trace/order-cancel-v0", 4),
        ("trace/order-cancel-v0", 5),
        ("trace/datetime-v0", 3),
        ("trace/datetime-v0", 4),
    ]
