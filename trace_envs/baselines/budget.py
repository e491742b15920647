"""Rollout budgets: how many GRPO steps, groups or episodes a ``--budget ROLLOUTS`` buys.

A GRPO step spends ``TrainConfig.rollouts_per_step`` rollouts (G groups of K); a budget buys
``budget // rollouts_per_step`` steps, and a budget smaller than one step is refused.
"""

from __future__ import annotations

from trace_envs.training.config import TrainConfig


def grpo_steps(budget: int, config: TrainConfig) -> int:
    """GRPO iterations that fit in ``budget`` rollouts: ``budget // (G x K)`` (the remainder is not spent).

    Raises ``ValueError`` naming the fix when the budget does not buy one step."""
    if budget < 1:
        raise ValueError(f"--budget must be a positive number of rollouts, got {budget}")
    per_step = config.rollouts_per_step
    if budget < per_step:
        raise ValueError(
            f"{budget} rollouts do not buy one GRPO step ({config.groups_per_step} group(s) x "
            f"K={config.num_generations} = {per_step} rollouts): give --budget {per_step} or more, or a smaller "
            "batch (per_device_train_batch_size x gradient_accumulation_steps)"
        )
    return budget // per_step


def budgeted_config(config: TrainConfig, budget: int) -> TrainConfig:
    """``config`` with ``max_steps`` set to the steps ``budget`` buys (see :func:`grpo_steps`)."""
    return config.model_copy(update={"max_steps": grpo_steps(budget, config)})
