"""Register a validated module's env under a temporary id, boxed (for calibration).

The module runs only in box processes (:mod:`trace_envs.box`); this process plays it through the proxy,
exactly as training and evaluation do, so calibration imports nothing of it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import gymnasium as gym

from trace_envs.box import BoxedEnvError, BoxFailure, BoxLimits, BoxPool, boxed_env_class

from .execution import candidate_env_id


@contextlib.contextmanager
def registered_candidate(source: str, *, boxes: int = 8, limits: BoxLimits | None = None) -> Iterator[str]:
    """Register ``source``'s env, boxed, under :func:`~trace_envs.synthesis.gates.execution.candidate_env_id`
    and yield that id (up to ``boxes`` idle boxes are kept for reuse); unregister and close the boxes on exit."""
    env_id = candidate_env_id(source)
    with BoxPool(limits, max_idle=boxes) as pool:
        try:
            box = pool.acquire(source, {})
        except (BoxedEnvError, BoxFailure) as exc:
            raise RuntimeError(f"the candidate module failed in its box: {exc}") from exc
        pool.release(box, source, {})
        cls = boxed_env_class(source, box.ready, origin="the candidate module", pool=pool)
        gym.register(id=env_id, entry_point=cls, disable_env_checker=True)
        try:
            yield env_id
        finally:
            gym.registry.pop(env_id, None)
