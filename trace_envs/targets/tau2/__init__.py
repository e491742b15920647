"""tau2-bench as a target: task files, the LLM user, tau2's evaluator, and tasks as Gymnasium episodes.

Data is never shipped: point ``data_dir`` (or ``$TRACE_ENVS_TAU2_DATA``) at a tau2 domain folder.
Import the env classes lazily through ``gymnasium.make("trace/tau2-retail-v0", ...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trace_envs.targets import lazy_exports

if TYPE_CHECKING:
    from .data import DATA_ENV_VAR, Tau2DataError, Tau2DomainData, load_domain_data
    from .evaluator import Tau2Evaluation, Tau2Evaluator, gold_trajectory, is_success
    from .tasks import PAPER_REWARD_BASIS, Action, EvaluationCriteria, Tau2Task, UserScenario, parse_reward_basis
    from .user import GREETING, tau2_user

__getattr__ = lazy_exports(
    __name__,
    {
        "DATA_ENV_VAR": "data",
        "Tau2DataError": "data",
        "Tau2DomainData": "data",
        "load_domain_data": "data",
        "Tau2Evaluation": "evaluator",
        "Tau2Evaluator": "evaluator",
        "gold_trajectory": "evaluator",
        "is_success": "evaluator",
        "PAPER_REWARD_BASIS": "tasks",
        "Action": "tasks",
        "EvaluationCriteria": "tasks",
        "Tau2Task": "tasks",
        "UserScenario": "tasks",
        "parse_reward_basis": "tasks",
        "GREETING": "user",
        "tau2_user": "user",
    },
)
"""Each name is imported from its submodule on first use (importing this package stays cheap)."""

__all__ = [
    "DATA_ENV_VAR",
    "GREETING",
    "PAPER_REWARD_BASIS",
    "Action",
    "EvaluationCriteria",
    "Tau2DataError",
    "Tau2DomainData",
    "Tau2Evaluation",
    "Tau2Evaluator",
    "Tau2Task",
    "UserScenario",
    "gold_trajectory",
    "is_success",
    "load_domain_data",
    "parse_reward_basis",
    "tau2_user",
]
