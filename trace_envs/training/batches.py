"""Row operations on TRL's scored generation batch (the dict ``GRPOTrainer._generate_and_score_completions``
returns): which groups have constant rewards, keeping some rows, joining two batches, and splitting one into
micro-batches of equal size. Pure tensor code, so the parts of the loss that are ours are testable alone.

Layout relied on (TRL 1.16): ``prompt_ids``/``prompt_mask`` left-padded ``(B, P)``; ``completion_ids``,
``completion_mask``, ``tool_mask`` and the per-token log-prob tensors right-padded ``(B, C)`` (or ``(B, 1)``
for sequence-level ratios); ``advantages`` ``(B,)``; ``num_items_in_batch`` a 0-d tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Batch = dict[str, Any]

LEFT_PADDED = {"prompt_ids", "prompt_mask"}
ROW_KEYS = {
    "prompt_ids",
    "prompt_mask",
    "completion_ids",
    "completion_mask",
    "tool_mask",
    "advantages",
    "old_per_token_logps",
    "sampling_per_token_logps",
    "ref_per_token_logps",
    "importance_sampling_ratio",
}
SCALAR_KEYS = {"num_items_in_batch"}


def check_supported(batch: Batch) -> None:
    """Refuse batch fields these operations do not know how to slice (multimodal inputs)."""
    unknown = sorted(set(batch) - ROW_KEYS - SCALAR_KEYS)
    if unknown:
        raise NotImplementedError(
            f"constant_groups 'drop'/'resample' cannot reorder batches holding {unknown} (multimodal models); "
            "use constant_groups: count"
        )


def constant_groups(rewards: Sequence[float], k: int) -> list[bool]:
    """For each group of ``k`` consecutive rows, whether all its rewards are equal (no learning signal)."""
    if len(rewards) % k:
        raise ValueError(f"{len(rewards)} rewards do not form groups of {k}")
    return [len({float(r) for r in rewards[i : i + k]}) == 1 for i in range(0, len(rewards), k)]


def select_rows(batch: Batch, rows: Sequence[int]) -> Batch:
    """The batch restricted to ``rows`` (in that order); scalars are kept as they are."""
    import torch

    index = torch.tensor(list(rows), dtype=torch.long)
    return {
        key: value if key in SCALAR_KEYS or value is None else value[index.to(value.device)]
        for key, value in batch.items()
    }


def _pad_value(key: str, pad_token_id: int) -> float:
    if key in ("prompt_ids", "completion_ids"):
        return float(pad_token_id)
    return 1.0 if key == "tool_mask" else 0.0


def join_batches(first: Batch, second: Batch, pad_token_id: int) -> Batch:
    """Rows of ``first`` then rows of ``second``, each tensor padded to the wider of the two on its padding
    side (prompts on the left, completions on the right). ``num_items_in_batch`` is left to the caller."""
    import torch
    import torch.nn.functional as F

    if set(first) != set(second):
        raise ValueError(f"batches with different fields: {sorted(set(first) ^ set(second))}")
    joined: Batch = {}
    for key, a in first.items():
        b = second[key]
        if key in SCALAR_KEYS or a is None:
            joined[key] = a
            continue
        if a.dim() == 2 and a.size(1) != b.size(1):
            width = max(a.size(1), b.size(1))
            value = _pad_value(key, pad_token_id)
            left = key in LEFT_PADDED
            a, b = (F.pad(t, (width - t.size(1), 0) if left else (0, width - t.size(1)), value=value) for t in (a, b))
        joined[key] = torch.cat([a, b.to(a.device)], dim=0)
    return joined


def split_rows(batch: Batch, chunks: int, loss_type: str, filler: Batch) -> list[Batch]:
    """``chunks`` micro-batches holding the batch's rows as evenly as possible (sizes differ by at most one),
    then copies of ``filler`` for accumulation steps left without rows.

    TRL divides each micro-batch's loss by its own row count (``grpo``, ``dr_grpo``) or token count (``bnpo``)
    and by the number of accumulation steps, which is the batch mean only when all micro-batches are equal.
    Each micro-batch's advantages are therefore scaled by its share (rows, or tokens for ``bnpo``) x ``chunks``;
    the clipped objective is linear in a positive advantage scale, so the policy loss summed over
    micro-batches is exactly the mean over the kept rows (``dapo`` normalises by the batch's tokens already).
    """
    first = next(v for k, v in batch.items() if k not in SCALAR_KEYS and v is not None)
    rows = int(first.size(0))
    base, extra = divmod(rows, chunks)
    sizes = [base + (i < extra) for i in range(chunks)]
    mask = batch["completion_mask"] * batch["tool_mask"] if "tool_mask" in batch else batch["completion_mask"]
    tokens = mask.sum(dim=1)
    total_tokens = float(tokens.sum().clamp(min=1))
    parts: list[Batch] = []
    start = 0
    for size in sizes:
        if size == 0:
            parts.append(dict(filler))
            continue
        part = select_rows(batch, range(start, start + size))
        if loss_type in ("grpo", "dr_grpo"):
            scale = size * chunks / rows
        elif loss_type == "bnpo":
            scale = float(tokens[start : start + size].sum()) * chunks / total_tokens
        else:
            scale = 1.0
        part["advantages"] = part["advantages"] * scale
        parts.append(part)
        start += size
    return parts


def masked_row(batch: Batch) -> Batch:
    """The batch's first row with its completion mask zeroed: a micro-batch that trains nothing."""
    row = select_rows(batch, [0])
    row["completion_mask"] = row["completion_mask"].clone().zero_()
    return row
