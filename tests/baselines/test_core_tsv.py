"""CORE-TSV on 4x4 layers worked out by hand, and its TIES step entry by entry."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from trace_envs.baselines.core_tsv import core_tsv_layer, ties_pieces, trim  # noqa: E402

E = torch.eye(4, dtype=torch.float64)
ROOT3 = math.sqrt(3.0)


def _delta(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return b @ a


def test_hand_case_without_ties_selects_orthogonalises_isotropises_and_truncates() -> None:
    """Adapter 1 (rank 1): dW1 = 4 e1 e1^T. Adapter 2 (rank 2): dW2 = 2 b e2^T + 1 e3 e3^T with
    b = (sqrt3/2, 1/2, 0, 0), 30 degrees from e1.

    Core size 3 (sum of ranks), T = 2, so k = 3 // 2 = 1 direction per task: (4, e1, e1) and (2, b, e2);
    the sigma = 1 direction of adapter 2 is dropped. Polar decomposition of [e1, b] turns the pair
    symmetrically into an orthonormal pair at -30 and +60 degrees: a' = (sqrt3/2, -1/2), b' = (1/2, sqrt3/2);
    [e1, e2] is already orthonormal. Isotropy: both singular values become (4 + 2) / 2 = 3.
    Rank 2: dW = 3 (a' e1^T + b' e2^T). Rank 1 keeps the direction whose TSV value was larger: 3 a' e1^T.
    """
    a1, b1 = 2 * E[0:1], 2 * E[:, 0:1]
    b = torch.tensor([ROOT3 / 2, 0.5, 0.0, 0.0], dtype=torch.float64)
    a2, b2 = torch.stack([E[1], E[2]]), torch.stack([2 * b, E[:, 2]], dim=1)
    expected = torch.tensor(
        [[3 * ROOT3 / 2, 3 / 2, 0, 0], [-3 / 2, 3 * ROOT3 / 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], dtype=torch.float64
    )
    a, b_out = core_tsv_layer([a1, a2], [b1, b2], [1.0, 1.0], rank=2)
    assert a.shape == (2, 4) and b_out.shape == (4, 2)
    torch.testing.assert_close(_delta(a, b_out), expected)
    a, b_out = core_tsv_layer([a1, a2], [b1, b2], [1.0, 1.0], rank=1)
    rank_one = torch.zeros(4, 4, dtype=torch.float64)
    rank_one[:, 0] = torch.tensor([3 * ROOT3 / 2, -3 / 2, 0, 0], dtype=torch.float64)
    torch.testing.assert_close(_delta(a, b_out), rank_one)


def test_hand_case_with_ties_drops_the_minority_sign() -> None:
    """Two rank-2 adapters: dW1 = 4 e1 e1^T + 2 e2 e2^T, dW2 = -1 e1 e1^T + 3 e3 e3^T.

    The factors are chosen so the stacked A's (A^T A = diag(5, 1, 9, 0)) and B's (B B^T = diag(5, 4, 1, 0))
    have distinct singular values: the core basis is the standard one up to order and sign, so the core
    matrices are dW1 and dW2 themselves. TIES with density 0.25 keeps 4 of 16 entries each (both non-zeros
    of each). Entry (1,1): 4 + (-1) = 3 > 0, so the -1 of adapter 2 is dropped; no entry has two agreeing
    tasks, so the disjoint mean divides by 1. Pieces: diag(4, 2, 0, 0) and diag(0, 0, 3, 0).
    TSV, k = 4 // 2 = 2: (4, e1), (2, e2) from adapter 1, (3, e3) from adapter 2 (its other value is 0,
    dropped). Isotropy: (4 + 2 + 3) / 3 = 3. Rank 2 keeps the two largest, e1 and e3: dW = 3 e1 e1^T + 3 e3 e3^T.
    """
    a1, b1 = torch.stack([2 * E[0], E[1]]), torch.stack([2 * E[:, 0], 2 * E[:, 1]], dim=1)
    a2, b2 = torch.stack([E[0], 3 * E[2]]), torch.stack([-E[:, 0], E[:, 2]], dim=1)
    torch.testing.assert_close(_delta(a1, b1), torch.diag(torch.tensor([4.0, 2, 0, 0], dtype=torch.float64)))
    torch.testing.assert_close(_delta(a2, b2), torch.diag(torch.tensor([-1.0, 0, 3, 0], dtype=torch.float64)))
    a, b = core_tsv_layer([a1, a2], [b1, b2], [1.0, 1.0], rank=2, ties_density=0.25)
    torch.testing.assert_close(_delta(a, b), torch.diag(torch.tensor([3.0, 0, 3, 0], dtype=torch.float64)))


def test_ties_step_trims_elects_and_takes_the_disjoint_mean() -> None:
    one = torch.tensor([[5.0, -1.0], [2.0, 0.5]], dtype=torch.float64)
    two = torch.tensor([[3.0, 4.0], [-6.0, 0.1]], dtype=torch.float64)
    torch.testing.assert_close(trim(one, 0.5), torch.tensor([[5.0, 0.0], [2.0, 0.0]], dtype=torch.float64))
    # trimmed: one -> [[5, 0], [2, 0]], two -> [[0, 4], [-6, 0]]; elected signs: (1,1) +, (1,2) +, (2,1) 2-6 < 0 -,
    # (2,2) 0 -> +. Agreeing: one keeps 5 (alone); two keeps 4 (alone) and -6 (alone); one's 2 disagrees.
    first, second = ties_pieces([one, two], [1.0, 0.5], density=0.5)
    torch.testing.assert_close(first, torch.tensor([[5.0, 0.0], [0.0, 0.0]], dtype=torch.float64))
    torch.testing.assert_close(second, torch.tensor([[0.0, 2.0], [-3.0, 0.0]], dtype=torch.float64))
    # two tasks agreeing on an entry share it: (5 * 1 + 3 * 1) / 2 = 4 in the sum
    same = ties_pieces([one, torch.tensor([[3.0, 0.0], [0.0, 0.0]], dtype=torch.float64)], [1.0, 1.0], density=1.0)
    torch.testing.assert_close(same[0][0, 0] + same[1][0, 0], torch.tensor(4.0, dtype=torch.float64))


def test_ties_pieces_sum_to_peft_ties() -> None:
    """The per-task pieces add up to PEFT's own TIES merge (trim, elect by total, disjoint mean)."""
    pytest.importorskip("peft")
    from peft.utils.merge_utils import ties

    generator = torch.Generator().manual_seed(0)
    cores = [torch.randn(6, 6, generator=generator, dtype=torch.float64) for _ in range(3)]
    weights = [1.0, 0.5, 2.0]
    ours = sum(ties_pieces(cores, weights, density=0.4))
    torch.testing.assert_close(ours, ties(cores, torch.tensor(weights, dtype=torch.float64), density=0.4))


def test_merge_depends_on_the_deltas_only_not_on_how_they_are_factored() -> None:
    """B A = (B R)(R^-1 A) for any invertible R: the same deltas give the same merge (without TIES, whose
    entry-wise step is tied to the core basis)."""
    generator = torch.Generator().manual_seed(1)
    a_list = [torch.randn(r, 8, generator=generator, dtype=torch.float64) for r in (2, 3)]
    b_list = [torch.randn(6, r, generator=generator, dtype=torch.float64) for r in (2, 3)]
    mix = [torch.randn(r, r, generator=generator, dtype=torch.float64) + 3 * torch.eye(r) for r in (2, 3)]
    a, b = core_tsv_layer(a_list, b_list, [1.0, 0.5], rank=3)
    a_mixed, b_mixed = core_tsv_layer(
        [torch.linalg.solve(m, x) for m, x in zip(mix, a_list, strict=True)],
        [x @ m for m, x in zip(mix, b_list, strict=True)],
        [1.0, 0.5],
        rank=3,
    )
    torch.testing.assert_close(_delta(a_mixed, b_mixed), _delta(a, b))


def test_untrained_adapters_merge_to_zero() -> None:
    """PEFT initialises B to zero: adapters that never trained give a zero delta (no NaN, no arbitrary direction)."""
    a, b = core_tsv_layer([torch.ones(2, 4), torch.ones(2, 4)], [torch.zeros(4, 2), torch.zeros(4, 2)], [1, 1], 2)
    assert not a.any() and not b.any()
