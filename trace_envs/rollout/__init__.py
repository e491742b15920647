"""Policies (scripted and model-backed) and the loop that plays them in envs."""

from .policy import Policy, make_policy
from .scripted import NoopPolicy, OraclePolicy, RandomPolicy, play_actions

__all__ = ["NoopPolicy", "OraclePolicy", "Policy", "RandomPolicy", "make_policy", "play_actions"]
