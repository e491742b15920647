"""The warnings the training libraries raise on every run that say nothing about the run, filtered where we
call those libraries (and only there, and only these), so a ``train`` run's output shows what matters.

- transformers 5 warns that ``gradient_checkpointing`` and ``is_gradient_checkpointing`` will be renamed in
  v6 (TRL's config and trainer use the old names; nothing for a user to change).
- TRL warns that ``GRPOTrainer(environment_factory=...)`` is experimental on every trainer it builds; the
  version is pinned in pyproject, and the API it relies on is listed in :mod:`.grpo`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

KNOWN_WARNINGS: tuple[tuple[type[Warning], str], ...] = (
    (FutureWarning, r"`(is_)?gradient_checkpointing` is deprecated and will be removed in v6"),
    (UserWarning, r"You are using 'environment_factory', which is an experimental feature"),
)
"""(category, message pattern) of each warning filtered: a pattern matches the start of the message."""


@contextmanager
def known_library_warnings() -> Iterator[None]:
    """Ignore :data:`KNOWN_WARNINGS` while the block calls the training libraries; every other warning, and
    these outside the block, are shown as before (the filters are restored on exit)."""
    with warnings.catch_warnings():
        for category, pattern in KNOWN_WARNINGS:
            warnings.filterwarnings("ignore", message=pattern, category=category)
        yield
