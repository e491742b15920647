"""Import a validated module into this process under a temporary env id (for calibration).

Only ever called once every other gate has passed: until then nothing of a module runs here.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym

from trace_envs.plugins import defined_envs

from .execution import candidate_env_id


@contextlib.contextmanager
def registered_candidate(source: str) -> Iterator[str]:
    """Write ``source`` to a temporary file, import it, register its one ``CapabilityEnv`` subclass under
    :func:`~trace_envs.synthesis.gates.execution.candidate_env_id` and yield that id; unregister on exit."""
    env_id = candidate_env_id(source)
    name = "trace_candidate_" + env_id.split("-")[1]
    folder = Path(tempfile.mkdtemp(prefix="trace-candidate-"))
    try:
        path = folder / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        classes = defined_envs(module)
        if len(classes) != 1:
            raise TypeError(f"the module defines {len(classes)} concrete CapabilityEnv subclasses, not one")
        gym.register(id=env_id, entry_point=classes[0], disable_env_checker=True)
        yield env_id
    finally:
        gym.registry.pop(env_id, None)
        sys.modules.pop(name, None)
        shutil.rmtree(folder, ignore_errors=True)
