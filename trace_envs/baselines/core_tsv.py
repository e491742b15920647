"""CORE-TSV for one LoRA layer: merge T adapters in their shared core space with task-singular vectors.

The reference (TRACE's ``core_tsv_merge_adapters.py``) does, per layer: reference bases from the SVDs of
the stacked A's (V) and B's (U); core matrices ``M_i = U^T B_i A_i V``; per task the top ``k = Tr/T``
singular directions of ``w_i M_i``; the concatenated directions re-orthogonalised by polar decomposition;
all singular values replaced by their mean (isotropy); truncation to the target rank; factors back through
U and V. The paper adds TIES-style sign resolution, which that code lacks; here it is an explicit step
(:func:`ties_pieces`) that can be switched off. Choices where the reference is silent are in docs/baselines/merge.md.
Everything runs in float64 on the tensors it is given; no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

ZERO_TOLERANCE = 1e-9
"""A task direction whose singular value is below this share of the layer's largest one is dropped:
isotropy would otherwise give a zero (arbitrary) direction the mean singular value."""


def trim(matrix: Tensor, density: float) -> Tensor:
    """TIES trim: keep the ``int(density * numel)`` entries of largest magnitude (ties broken by position)."""
    import torch

    if density >= 1.0:
        return matrix.clone()
    keep = int(density * matrix.numel())
    flat = matrix.reshape(-1)
    order = torch.sort(flat.abs(), descending=True, stable=True).indices[:keep]
    mask = torch.zeros_like(flat)
    mask[order] = 1.0
    return (flat * mask).reshape(matrix.shape)


def ties_pieces(cores: Sequence[Tensor], weights: Sequence[float], density: float) -> list[Tensor]:
    """The TIES step on the core matrices, kept per task: trim each, elect each entry's sign (sign of the
    sum of the trimmed values), keep only the entries that agree with it, weight them, and divide by how
    many tasks agree there (disjoint mean). The pieces sum to the TIES merge; TSV then runs on each piece."""
    import torch

    trimmed = torch.stack([trim(core, density) for core in cores])
    elected = torch.where(trimmed.sum(dim=0) >= 0, 1.0, -1.0).to(trimmed.dtype)
    agree = (torch.sign(trimmed) == elected).to(trimmed.dtype)  # a zero (trimmed) entry never agrees
    count = agree.sum(dim=0).clamp(min=1.0)
    return [weight * trimmed[i] * agree[i] / count for i, weight in enumerate(weights)]


def _polar(matrix: Tensor) -> Tensor:
    """The orthogonal factor of ``matrix`` (nearest matrix with orthonormal columns): ``X Y^T`` of its SVD."""
    import torch

    x, _, yh = torch.linalg.svd(matrix, full_matrices=False)
    return x @ yh


def core_tsv_layer(
    a_factors: Sequence[Tensor],
    b_factors: Sequence[Tensor],
    weights: Sequence[float],
    rank: int,
    ties_density: float | None = None,
) -> tuple[Tensor, Tensor]:
    """Merge one layer's LoRA factors; returns ``(A, B)`` (``rank x d_in``, ``d_out x rank``) whose product
    is the merged delta-W at scaling 1.

    Args:
        a_factors: Each adapter's A (``r_i x d_in``), already multiplied by its scaling (alpha / r).
        b_factors: Each adapter's B (``d_out x r_i``).
        weights: One weight per adapter (applied to its core matrix).
        rank: Target rank of the merged adapter (zero columns pad it when fewer directions survive).
        ties_density: Run the TIES step with this trim density first; ``None`` skips it (the repo's code).
    """
    import torch

    a_list = [a.to(torch.float64) for a in a_factors]
    b_list = [b.to(torch.float64) for b in b_factors]
    d_in, d_out = a_list[0].shape[1], b_list[0].shape[0]
    _, _, vh = torch.linalg.svd(torch.cat(a_list, dim=0), full_matrices=False)
    u, _, _ = torch.linalg.svd(torch.cat(b_list, dim=1), full_matrices=False)
    v = vh.T
    cores = [(u.T @ b) @ (a @ v) for a, b in zip(a_list, b_list, strict=True)]
    if ties_density is None:
        pieces = [w * core for w, core in zip(weights, cores, strict=True)]
    else:
        pieces = ties_pieces(cores, weights, ties_density)
    keep = max(1, min(u.shape[1], v.shape[1]) // len(pieces))  # k = Tr / T in the reference
    svds = [torch.linalg.svd(piece, full_matrices=False) for piece in pieces]
    largest = max((float(s[0]) for _, s, _ in svds if s.numel()), default=0.0)
    lefts, rights, values = [], [], []
    for p, s, qh in svds:
        top = [j for j in range(min(keep, s.numel())) if float(s[j]) > ZERO_TOLERANCE * largest]
        lefts.append(p[:, top])
        rights.append(qh[top].T)
        values.append(s[top])
    sigma = torch.cat(values)
    a_out = torch.zeros(rank, d_in, dtype=torch.float64)
    b_out = torch.zeros(d_out, rank, dtype=torch.float64)
    if sigma.numel() == 0 or largest == 0.0:
        return a_out, b_out
    left, right = _polar(torch.cat(lefts, dim=1)), _polar(torch.cat(rights, dim=1))
    mean = float(sigma.mean())  # isotropy: every kept direction gets the mean singular value
    order = torch.sort(sigma, descending=True, stable=True).indices[:rank]  # truncation by the TSV values
    scale = mean**0.5
    b_out[:, : order.numel()] = (u @ left[:, order]) * scale
    a_out[: order.numel()] = scale * (right[:, order].T @ v.T)
    return a_out, b_out
