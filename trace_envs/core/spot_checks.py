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

Scripted episodes answer within milliseconds, a model within seconds, so a module could tell a check from use by
the time since its reset (issue 34's third red team). An env whose code is not trusted (a boxed one,
:func:`untrusted`) therefore also gets a short junk episode and its reference solution played at a model's pace
(:class:`Pace`: a seeded pause before each action, ``$TRACE_ENVS_PACE``), whose rewards must be those of the
fast episodes and whose replies the text scan reads too (:func:`paced_episodes`; validation plays them as well).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import isfinite
from os import environ, urandom
from random import Random
from time import sleep
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

PACE_VARIABLE = "TRACE_ENVS_PACE"
"""``LOW,HIGH``: the seconds a paced episode pauses before each action (drawn uniformly); ``off``: no paced episodes."""
PACED_JUNK_ACTIONS = 3
"""Actions of the paced junk episode before its stop token (short, so that few pauses reach a model's elapsed time)."""


@dataclass(frozen=True)
class Pace:
    """A model's pace: before each action of a paced episode, a pause of ``low`` to ``high`` seconds (uniform,
    drawn by the check's seeded generator), as a model thinks before it answers."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not (isfinite(self.low) and isfinite(self.high) and 0.0 <= self.low <= self.high):
            raise ValueError(f"{PACE_VARIABLE}: need 0 <= LOW <= HIGH seconds, got {self.low!r},{self.high!r}")

    def pause(self, rng: Random) -> float:
        """Sleep a drawn pause; its seconds."""
        seconds = rng.uniform(self.low, self.high)
        sleep(seconds)
        return seconds


DEFAULT_PACE = Pace(0.5, 2.5)
"""A model's pace between an observation and its next action (a chat model's answer takes one to a few seconds);
what a paced check costs at this pace is measured in docs/performance.md (spot checks)."""


def model_pace() -> Pace | None:
    """The pace of paced episodes: ``$TRACE_ENVS_PACE`` (``LOW,HIGH`` seconds, or one number for both; ``off`` or
    ``0``: none are played), else :data:`DEFAULT_PACE`. A test sets a short pace here."""
    text = environ.get(PACE_VARIABLE, "").strip().lower()
    if not text:
        return DEFAULT_PACE
    if text in ("off", "0", "none"):
        return None
    low, _, high = text.partition(",")
    try:
        return Pace(float(low), float(high or low))
    except ValueError as exc:
        raise ValueError(
            f"{PACE_VARIABLE}={text!r}: expected LOW,HIGH seconds such as 0.5,2.5, or off ({exc})"
        ) from None


def untrusted(env: Any) -> bool:
    """Whether ``env``'s code is not trusted, so its spot checks pace and scan it too: it says so
    (``BoxedEnv.untrusted``; an env run here is the caller's own or a shipped one)."""
    return getattr(env, "untrusted", False) is True


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
    """Play the oracle, one junk policy and the flawed solution on ``seed``, then (an :func:`untrusted` env) a
    junk episode and the oracle at a model's pace (:func:`paced_episodes`), and scan a boxed env's text there,
    the paced replies included, for evaluation data; last, a junk episode whole and cut short (:func:`_cut`).
    The failure, or None if it held. Only an env that declares a capability (run here or boxed, or the device
    target) has a reference solution that scores alone: any other env passes unchecked."""
    inner = getattr(env, "unwrapped", env)
    if not declares_capability(inner):
        return None
    pace = model_pace() if untrusted(inner) else None  # a wrong $TRACE_ENVS_PACE is the caller's error, raised
    try:
        checked = cast(VerifiableEnv, inner)
        return (
            _checked(checked, env_id, seed, rng)
            or _paced(checked, env_id, seed, rng, pace)
            or _cut(checked, env_id, seed, rng)
        )
    except Exception as exc:  # an env that raises on its own reference solution is stopped too
        return SpotCheckFailure(env_id, seed, "spot-check", f"raised {type(exc).__name__}: {str(exc)[:200]!r}")


def _paced(env: VerifiableEnv, env_id: str, seed: int, rng: Random, pace: Pace | None) -> SpotCheckFailure | None:
    """The paced episodes' failure (with no ``pace``, none are played), else the text scan's of ``seed``."""
    played = paced_episodes(env, seed, rng, pace) if pace is not None else PacedPlay()
    if played.problem is not None:
        return SpotCheckFailure(env_id, seed, *played.problem)
    return scanned(env, env_id, seed, played.texts)


@dataclass
class PacedPlay:
    """What the paced episodes of a seed showed: the first ``(episode, problem)``, every reply as ``(where,
    text)`` for the text scan, and the seconds paused."""

    problem: tuple[str, str] | None = None
    texts: list[tuple[str, str]] = field(default_factory=list)
    paused: float = 0.0


def paced_episodes(env: VerifiableEnv, seed: int, rng: Random, pace: Pace) -> PacedPlay:
    """Play a short junk episode (:data:`PACED_JUNK_ACTIONS` actions of :func:`junk_episode`) and the reference
    solution on ``seed`` at ``pace``: junk must score 0 and the oracle 1, as at machine speed, so a module that
    pays by the time since its reset is caught; their replies are kept for the text scan. Validation plays these
    too (``trace_envs.synthesis``), so neither it nor a spot check can be told from use by its speed alone."""
    played = PacedPlay()
    name, junk = junk_episode(env, rng)
    env.reset(seed=seed)
    episodes = [
        (f"paced junk ({name})", junk[:PACED_JUNK_ACTIONS], 0.0, 0.0),
        ("paced oracle", env.oracle_actions(), 1.0, 1.0),
    ]

    def pause() -> None:
        played.paused += pace.pause(rng)

    for label, actions, low, high in episodes:
        seen: list[str] = []
        reward, problem = played_reward(env, actions, seed, pause=pause, seen=seen)
        played.texts += [(f"seed {seed}: {label} reply {number}", text) for number, text in enumerate(seen)]
        if problem is None and not low <= reward <= high:
            problem = f"was paid {reward:g} at a model's pace (it must be {low:g})"
        if problem is not None:
            played.problem = played.problem or (label, problem)
            break
    return played


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
    for label, actions, bounds in episodes:
        problem = paid_problem(env, actions, seed, bounds)
        if problem is not None:
            return SpotCheckFailure(env_id, seed, label, problem)
    return None


def paid_problem(
    env: VerifiableEnv, actions: Sequence[str], seed: int, bounds: tuple[float, float], seen: list[str] | None = None
) -> str | None:
    """Play ``actions`` on ``seed`` (:func:`played_reward`): why the episode has no reward, or was paid outside
    ``bounds``; None if it held."""
    low, high = bounds
    reward, problem = played_reward(env, actions, seed, seen=seen)
    if problem is None and not low <= reward <= high:
        wanted = f"{low:g}" if low == high else f"in [{low:g}, {high:g}]"
        problem = f"was paid {reward:g} (it must be {wanted})"
    return problem


def _cut(env: VerifiableEnv, env_id: str, seed: int, rng: Random) -> SpotCheckFailure | None:
    """A junk episode played whole (it must score 0), then cut short at a step drawn before its end
    (:func:`cut_problem`): the failure, or None."""
    name, junk = junk_episode(env, rng)
    steps: list[str] = []
    problem = paid_problem(env, junk, seed, (0.0, 0.0), seen=steps)  # whole, first: how long it runs
    if problem is not None:
        return SpotCheckFailure(env_id, seed, f"junk ({name})", problem)
    if len(steps) < 2:  # it ended on its first action: no rollout cuts it
        return None
    cut_after = rng.randint(1, len(steps) - 1)  # before the step that ended it
    problem = cut_problem(env, [*junk, STOP_TOKEN][:cut_after], seed)
    return None if problem is None else SpotCheckFailure(env_id, seed, f"junk ({name}) cut after {cut_after}", problem)


def cut_problem(env: VerifiableEnv, actions: Sequence[str], seed: int) -> str | None:
    """Reset to ``seed``, play ``actions`` and cut the episode there, as a rollout's own step limit does: its
    verdict must not pay junk (a verifier asked from outside a step is the module's code too), or None if it held
    (also when the episode ended before the cut: the junk episode above scored that)."""
    env.reset(seed=seed)
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return None
    info = env.cut()
    if info.get("box_error"):
        return f"ended in a box error: {str(info['box_error'])[:200]!r}"
    verdict = info.get("verdict") or {}
    reward = verdict.get("reward", 0.0)
    if not isinstance(reward, int | float) or not isfinite(reward) or reward != 0.0 or verdict.get("success"):
        return f"was paid {reward!r} by its verdict at the cut (it must be 0)"
    return None


TextScan = Callable[[VerifiableEnv, int, Sequence[tuple[str, str]]], str | None]
"""Scans what an env generates on a seed, and the ``(where, text)`` replies of its paced episodes there: the
problem, in one line, or None."""
_TEXT_SCAN: list[TextScan] = []


def set_text_scan(scan: TextScan) -> None:
    """Scan every spot-checked env's text on its seed with ``scan``: ``import trace_envs`` sets the validator's
    leakage scan, which core may not import."""
    _TEXT_SCAN[:] = [scan]


def scanned(
    env: VerifiableEnv, env_id: str, seed: int, paced: Sequence[tuple[str, str]] = ()
) -> SpotCheckFailure | None:
    """The registered text scan's failure on ``seed`` (its oracle episode, or a paced one's replies ``paced``,
    showed what it must not), or None."""
    problem = _TEXT_SCAN[0](env, seed, paced) if _TEXT_SCAN else None
    return None if problem is None else SpotCheckFailure(env_id, seed, "oracle", problem)


def junk_episode(env: VerifiableEnv, rng: Random) -> tuple[str, list[str]]:
    """One junk policy's actions, drawn by ``rng``: empty messages, or random text."""
    turns = max(1, env.max_turns - 1)
    if rng.random() < 0.5:
        return "empty messages", ["" for _ in range(turns)]
    words = ["".join(rng.choice(JUNK_ALPHABET) for _ in range(rng.randint(1, 60))) for _ in range(turns)]
    return "random text", words


def played_reward(
    env: VerifiableEnv,
    actions: Sequence[str],
    seed: int,
    pause: Callable[[], object] | None = None,
    seen: list[str] | None = None,
) -> tuple[float, str | None]:
    """Reset to ``seed`` and play ``actions`` then the stop token (calling ``pause`` before each action, and
    keeping each observation in ``seen``): the episode's reward, or why it has none."""
    env.reset(seed=seed)
    queue, total = list(actions), 0.0
    for _ in range(env.max_turns + len(queue) + 1):
        action = queue.pop(0) if queue else STOP_TOKEN
        if pause is not None:
            pause()
        observation, reward, terminated, truncated, info = env.step(action)
        if seen is not None:
            seen.append(str(observation))
        problem = reward_problem(reward, env)
        if problem is not None:
            return 0.0, problem
        total += float(reward)
        if terminated or truncated:
            if info.get("box_error"):
                return total, f"ended in a box error: {str(info['box_error'])[:200]!r}"
            return total, None if isfinite(total) else "was paid a reward that is not finite"
    return total, "never ended"
