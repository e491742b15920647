"""A user model that plays each task's scripted user, for validation to play boxed episodes as use plays them.

In use, a target whose users a chat model plays (tau2's) resets a boxed env with ``model_user``: the box asks the
parent for each of the user's lines (:class:`~trace_envs.box.protocol.UserTurn`). Validation has no chat model, yet
must not differ from use in what the box sees, so it plays some episodes with :class:`ScriptedUserModel`: the same
reset fields and the same turns reach the box, and the lines are the task's scripted user's (deterministic, so a
verdict means the same as in a scripted episode). The box learns only the lines, as it would from a model.
"""

from __future__ import annotations

from typing import Any

from trace_envs.core import Task
from trace_envs.core.user import ScriptedUser, User


class ScriptedUserModel:
    """The ``user_model`` of a boxed env whose model-played user is the task's scripted user (played here)."""

    spec = "scripted-user"

    def user(self, task: Task) -> User:
        """The user of ``task``: its scripted user."""
        return ScriptedUser(task.user)

    def chat(self, messages: Any, *args: Any, **sampling: Any) -> Any:
        raise TypeError("ScriptedUserModel plays a task's scripted user; it is no chat model")
