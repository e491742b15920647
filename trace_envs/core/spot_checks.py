"""Spot checks in use: a few oracle, junk and flawed episodes played on the seeds a run uses.

Validation plays a sample of seeds; an env whose code is not trusted could behave there and pay junk on the
seeds a training or rollout run uses. So rollouts, evaluation and training interleave a small, configurable
share of spot-check episodes with their real ones, on their own seeds (:func:`spot_check`): the reference
solution must score 1.0, a junk policy (empty messages or random text) must score 0, and the flawed solution
must get a finite reward in ``[0, 1]``; and a boxed env's generated text on that seed (its opening, prompts and
replies along the reference solution) must hold no evaluation data, by the leakage index the validator uses
(the scan :func:`set_text_scan` holds: ``import trace_envs`` sets the leakage gate's). An env that fails is
stopped with one line naming it and the seed (:class:`SpotCheckFailure`); which seeds are checked is drawn by a
seeded ``random.Random`` per run (:func:`chosen_seeds`), so a module cannot know them in advance, and a run can
be replayed from its seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import isfinite
from os import urandom
from random import Random
from typing import Any, cast

from .actions import STOP_TOKEN
from .contract import VerifiableEnv, declares_capability
from .rewards import reward_problem

DEFAULT_SPOT_CHECK_SHARE = 0.02
"""The share of a run's episodes spot-checked by default (plus the first seed of each env); each check plays
two or three short scripted episodes (see docs/performance.md for what this costs)."""
SPOT_CHECK_SHARE_HELP = (
    "Share of each env's seeds (and always its first) spot-checked: the oracle must score 1, junk 0, and a boxed "
    "env's generated text must hold no evaluation data; an env that fails is stopped (0: no spot checks)."
)
"""What the share means, for the settings and command-line options that set it."""


def fresh_spot_check_seed() -> int:
    """A spot-check seed no module can know in advance (a run records it, so it can be replayed)."""
    return int.from_bytes(urandom(4), "big")


JUNK_ALPHABET = "abcdefghijklmnopqrstuvwxyz ,.?!0123456789"


class SpotCheckStop(ValueError):
    """No env of a training run is left: every one was stopped by a spot check (the message names each and its
    seed)."""


@dataclass(frozen=True)
class SpotCheckFailure:
    """Why an env was stopped: the seed and the episode (``oracle``, ``junk (...)``, ``flawed``) that failed; the
    env's own text (an exception's message, a box error) appears in ``problem`` only as a quoted ``repr``, one
    line with its control characters escaped."""

    env_id: str
    seed: int
    episode: str
    problem: str

    @property
    def message(self) -> str:
        return (
            f"{self.env_id} stopped by a spot check on seed {self.seed}: the {self.episode} episode {self.problem}; "
            "its remaining episodes are not played (validate the module again, or remove it)"
        )


def chosen_seeds(seeds: Sequence[int], share: float, rng: Random) -> list[int]:
    """The seeds of one env to spot-check: its first seed, and each other with probability ``share``."""
    if share <= 0 or not seeds:
        return []
    return [seeds[0], *(seed for seed in seeds[1:] if rng.random() < share)]


def spot_check(env: Any, env_id: str, seed: int, rng: Random) -> SpotCheckFailure | None:
    """Play the oracle, one junk policy and the flawed solution on ``seed``, and scan a boxed env's text there for
    evaluation data; the failure, or None if it held. Only an env that declares a capability (run here or boxed,
    or the device target) has a reference solution that scores alone: any other env passes unchecked."""
    inner = getattr(env, "unwrapped", env)
    if not declares_capability(inner):
        return None
    try:
        checked = cast(VerifiableEnv, inner)
        return _checked(checked, env_id, seed, rng) or scanned(checked, env_id, seed)
    except Exception as exc:  # an env that raises on its own reference solution is stopped too
        return SpotCheckFailure(env_id, seed, "spot-check", f"raised {type(exc).__name__}: {str(exc)[:200]!r}")


def _checked(env: VerifiableEnv, env_id: str, seed: int, rng: Random) -> SpotCheckFailure | None:
    env.reset(seed=seed)
    oracle, flawed = env.oracle_actions(), env.flawed_actions()
    name, junk = junk_episode(env, rng)
    episodes: list[tuple[str, list[str], tuple[float, float]]] = [
        ("oracle", list(oracle), (1.0, 1.0)),
        (f"junk ({name})", junk, (0.0, 0.0)),
    ]
    if flawed is not None:
        episodes.append(("flawed", list(flawed), (0.0, 1.0)))
    for label, actions, (low, high) in episodes:
        reward, problem = played_reward(env, actions, seed)
        if problem is None and not low <= reward <= high:
            wanted = f"{low:g}" if low == high else f"in [{low:g}, {high:g}]"
            problem = f"was paid {reward:g} (it must be {wanted})"
        if problem is not None:
            return SpotCheckFailure(env_id, seed, label, problem)
    return None


TextScan = Callable[[VerifiableEnv, int], str | None]
"""Scans what an env generates on a seed: the problem, in one line, or None."""
_TEXT_SCAN: list[TextScan] = []


def set_text_scan(scan: TextScan) -> None:
    """Scan every spot-checked env's text on its seed with ``scan``: ``import trace_envs`` sets the validator's
    leakage scan, which core may not import."""
    _TEXT_SCAN[:] = [scan]


def scanned(env: VerifiableEnv, env_id: str, seed: int) -> SpotCheckFailure | None:
    """The registered text scan's failure on ``seed`` (its oracle episode showed what it must not), or None."""
    problem = _TEXT_SCAN[0](env, seed) if _TEXT_SCAN else None
    return None if problem is None else SpotCheckFailure(env_id, seed, "oracle", problem)


def junk_episode(env: VerifiableEnv, rng: Random) -> tuple[str, list[str]]:
    """One junk policy's actions, drawn by ``rng``: empty messages, or random text."""
    turns = max(1, env.max_turns - 1)
    if rng.random() < 0.5:
        return "empty messages", ["" for _ in range(turns)]
    words = ["".join(rng.choice(JUNK_ALPHABET) for _ in range(rng.randint(1, 60))) for _ in range(turns)]
    return "random text", words


def played_reward(env: VerifiableEnv, actions: Sequence[str], seed: int) -> tuple[float, str | None]:
    """Reset to ``seed`` and play ``actions`` then the stop token: the episode's reward, or why it has none."""
    env.reset(seed=seed)
    queue, total = list(actions), 0.0
    for _ in range(env.max_turns + len(queue) + 1):
        action = queue.pop(0) if queue else STOP_TOKEN
        _, reward, terminated, truncated, info = env.step(action)
        problem = reward_problem(reward, env)
        if problem is not None:
            return 0.0, problem
        total += float(reward)
        if terminated or truncated:
            if info.get("box_error"):
                return total, f"ended in a box error: {str(info['box_error'])[:200]!r}"
            return total, None if isfinite(total) else "was paid a reward that is not finite"
    return total, "never ended"
