"""Fuzzy string matching as ToolSandbox's search tools use it (rapidfuzz's WRatio and friends).

A pure-Python re-implementation of rapidfuzz's documented scorers (Indel ratio, partial_ratio,
token_sort/token_set ratios, WRatio) and of ``process.extract``, so the device domain needs no
compiled dependency. Scores are 0-100 floats like rapidfuzz's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+|_")


def default_process(text: str) -> str:
    """Lower-case, replace every non-alphanumeric character by a space, trim."""
    return re.sub(r"[\W_]", " ", text).lower().strip()


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyrö 2004)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def ratio(a: str, b: str) -> float:
    """Normalised Indel similarity: ``200 * LCS / (len(a) + len(b))``."""
    total = len(a) + len(b)
    if total == 0:
        return 100.0
    return 200.0 * lcs_length(a, b) / total


def _partial_one_way(short: str, long: str) -> float:
    n, m = len(short), len(long)
    masks: dict[str, int] = {}
    for i, ch in enumerate(short):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << n) - 1
    best = 0.0
    windows = [long[:i] for i in range(1, n)]
    windows += [long[i : i + n] for i in range(0, m - n + 1)]
    windows += [long[i:] for i in range(m - n + 1, m)]
    for window in windows:
        if window and (window[-1] in masks or window[0] in masks):
            v = full
            for ch in window:
                u = v & masks.get(ch, 0)
                v = ((v + u) | (v - u)) & full
            lcs = n - v.bit_count()
            best = max(best, 200.0 * lcs / (n + len(window)))
            if best == 100.0:
                break
    return best


@lru_cache(maxsize=65536)
def partial_ratio(a: str, b: str) -> float:
    """Best ratio of the shorter string against any alignment window of the longer one."""
    if not a and not b:
        return 100.0
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    score = _partial_one_way(a, b)
    if len(a) == len(b) and score < 100.0:
        score = max(score, _partial_one_way(b, a))
    return score


def token_sort_ratio(a: str, b: str) -> float:
    return ratio(" ".join(sorted(a.split())), " ".join(sorted(b.split())))


def token_set_ratio(a: str, b: str) -> float:
    tokens_a, tokens_b = set(a.split()), set(b.split())
    if not tokens_a or not tokens_b:
        return 0.0
    intersect = sorted(tokens_a & tokens_b)
    diff_ab = sorted(tokens_a - tokens_b)
    diff_ba = sorted(tokens_b - tokens_a)
    if intersect and (not diff_ab or not diff_ba):
        return 100.0
    ab, ba = " ".join(diff_ab), " ".join(diff_ba)
    sect_len = len(" ".join(intersect))
    joiner = 1 if sect_len else 0
    sect_ab_len = sect_len + joiner + len(ab)
    sect_ba_len = sect_len + joiner + len(ba)
    distance = len(ab) + len(ba) - 2 * lcs_length(ab, ba)
    result = 100.0 * (1 - distance / (sect_ab_len + sect_ba_len))
    if sect_len == 0:
        return result
    ab_ratio = 100.0 * (1 - (joiner + len(ab)) / (sect_len + sect_ab_len))
    ba_ratio = 100.0 * (1 - (joiner + len(ba)) / (sect_len + sect_ba_len))
    return max(result, ab_ratio, ba_ratio)


def partial_token_ratio(a: str, b: str) -> float:
    split_a, split_b = a.split(), b.split()
    tokens_a, tokens_b = set(split_a), set(split_b)
    if not tokens_a or not tokens_b:
        return 0.0
    if tokens_a & tokens_b:
        return 100.0
    result = partial_ratio(" ".join(sorted(split_a)), " ".join(sorted(split_b)))
    diff_ab, diff_ba = sorted(tokens_a - tokens_b), sorted(tokens_b - tokens_a)
    if len(split_a) == len(diff_ab) and len(split_b) == len(diff_ba):
        return result
    return max(result, partial_ratio(" ".join(diff_ab), " ".join(diff_ba)))


@lru_cache(maxsize=65536)
def wratio(a: str, b: str) -> float:
    """rapidfuzz's ``fuzz.WRatio``: a weighted best of the ratios above, depending on length ratio."""
    if not a or not b:
        return 0.0
    unbase_scale = 0.95
    len_ratio = max(len(a), len(b)) / min(len(a), len(b))
    end_ratio = ratio(a, b)
    if len_ratio < 1.5:
        return max(end_ratio, max(token_sort_ratio(a, b), token_set_ratio(a, b)) * unbase_scale)
    partial_scale = 0.9 if len_ratio < 8.0 else 0.6
    end_ratio = max(end_ratio, partial_ratio(a, b) * partial_scale)
    return max(end_ratio, partial_token_ratio(a, b) * unbase_scale * partial_scale)


def extract(
    query: str,
    choices: Sequence[str | None],
    scorer: Callable[[str, str], float] = wratio,
    score_cutoff: float = 0.0,
    limit: int | None = 5,
) -> list[tuple[str, float, int]]:
    """``process.extract`` with ``default_process``: (choice, score, index), best first, ties by index."""
    processed_query = default_process(query)
    scored: list[tuple[str, float, int]] = []
    for index, choice in enumerate(choices):
        if choice is None:
            continue
        score = scorer(processed_query, default_process(choice)) if processed_query else 0.0
        if score >= score_cutoff:
            scored.append((choice, score, index))
    scored.sort(key=lambda item: (-item[1], item[2]))
    return scored if limit is None else scored[:limit]
