"""tau2-bench as a target: task files, the LLM user, tau2's evaluator, and tasks as Gymnasium episodes.

Data is never shipped: point ``data_dir`` (or ``$TRACE_ENVS_TAU2_DATA``) at a tau2 domain folder.
Import the env classes lazily through ``gymnasium.make("trace/tau2-retail-v0", ...)``.
"""

from .data import DATA_ENV_VAR, Tau2DataError, Tau2DomainData, load_domain_data
from .evaluator import Tau2Evaluation, Tau2Evaluator, gold_trajectory, is_success
from .tasks import PAPER_REWARD_BASIS, Action, EvaluationCriteria, Tau2Task, UserScenario, parse_reward_basis
from .user import GREETING, tau2_user

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
