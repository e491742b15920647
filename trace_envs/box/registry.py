"""A module's env as a boxed class: its text is read once, checked, and only ever run in boxes. Registering the
class under an id is the registry's (:func:`trace_envs.registry.load_envs`,
:func:`trace_envs.registry.box_installed_env`), which sits above the box."""

from __future__ import annotations

import hashlib

from .client import BoxedEnvError, BoxFailure
from .pool import default_pool
from .proxy import BoxedEnv, boxed_env_class

_CLASSES: dict[str, type[BoxedEnv]] = {}


def boxed_class(source: str, origin: str) -> type[BoxedEnv]:
    """The :class:`BoxedEnv` class of the module ``source`` (one box is started to read what it declares, and
    kept in the pool for the first episode); the same class for the same text, wherever it was read (so a
    folder copied elsewhere and loaded again registers nothing new)."""
    key = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if key not in _CLASSES:
        boxes = default_pool()
        try:
            box = boxes.acquire(source, {})
        except (BoxedEnvError, BoxFailure) as exc:
            raise ImportError(f"{origin or 'the module'} failed in its box: {exc}") from exc
        boxes.release(box, source, {})
        _CLASSES[key] = boxed_env_class(source, box.ready, origin=origin)
    return _CLASSES[key]
