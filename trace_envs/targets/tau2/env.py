"""tau2-bench tasks as Gymnasium episodes: ``trace/tau2-retail-v0`` and ``trace/tau2-airline-v0``.

One episode = one task (by ``task_id``, or drawn from a split with ``random.Random(seed)``). The agent
sees tau2's system prompt (instructions + the policy.md of the user's data), the greeting is sent
for it, and the LLM user's first message is the first observation. Actions are text: tool calls
(JSON / ``<tool_call>`` blocks) run on the env's database; anything else goes to the user. The episode
ends when the user emits a stop token (``user_stop``), the agent says ``###STOP###`` (``agent_stop``),
``max_errors`` tool errors accumulate (``too_many_errors``, reward 0) or after ``max_turns`` agent
actions (truncated, reward 0). The reward is tau2's evaluation (see ``evaluator.py``) under
``reward_basis`` (default the paper's ``DB,COMMUNICATE``; ``"task"`` uses each task's own basis); the
last step's ``info["verdict"]`` is core's ``Verdict`` with the evaluation as its details.

The database is loaded once per env and reset by journal restore (no deep copy per episode).
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, cast

from trace_envs.core import Capability, ConversationEnv, Message, Verdict, render_system_prompt
from trace_envs.core.spaces import clip_text
from trace_envs.domains.tau2_common import Tau2DB, Tau2Toolset
from trace_envs.llm.base import ChatModel

from .data import Tau2DomainData, load_domain_data, tau2_domain
from .evaluator import Tau2Evaluation, Tau2Evaluator
from .flaws import tau2_actions
from .tasks import PAPER_REWARD_BASIS, RewardType, Tau2Task, parse_reward_basis
from .user import GREETING, tau2_user


def agent_system_prompt(policy: str) -> str:
    """tau2's agent system prompt: ``<instructions>…</instructions>\\n<policy>\\n{policy}\\n</policy>``."""
    return render_system_prompt(None, policy)


def resolve_model(model: ChatModel | str | None, role: str) -> ChatModel | None:
    """A ChatModel from an instance or a model spec string (``anthropic:…``, ``openai:…``, ``hf:…``)."""
    if model is None or not isinstance(model, str):
        return model
    from trace_envs.llm.factory import make_chat_model

    try:
        return make_chat_model(model)
    except Exception as exc:
        raise ValueError(f"invalid {role} model spec {model!r}: {exc}") from exc


def tau2_verdict(evaluation: Tau2Evaluation) -> Verdict[Tau2Evaluation]:
    """The common verdict of a tau2 evaluation: the database check as the hash match (``None`` when the
    task checks no database), the communicate checks as the facts told, the whole evaluation as details."""
    return Verdict[Tau2Evaluation](
        reward=evaluation.reward,
        success=evaluation.success,
        hash_match=evaluation.db_match,
        state_hash=evaluation.final_canonical_hash,
        gold_hash=evaluation.gold_canonical_hash,
        facts_told={check.info: check.met for check in evaluation.communicate_checks},
        components=evaluation.components,
        details=evaluation,
    )


class Tau2TargetEnv(ConversationEnv):
    """One tau2-bench domain's tasks as episodes with an LLM user and tau2's evaluator."""

    domain_name: ClassVar[str]
    truncation_reason = "max_steps"
    capability: ClassVar[Capability | None] = None
    """A tau2 task declares no capability of its own (its target's flaw rules apply named deficits)."""

    def __init__(
        self,
        data_dir: str | None = None,
        task_id: str | None = None,
        split: str = "base",
        reward_basis: str | list[str] | None = "DB,COMMUNICATE",
        user_model: ChatModel | str | None = None,
        judge_model: ChatModel | str | None = None,
        user_guidelines: str | None = None,
        max_turns: int = 50,
        max_errors: int = 10,
        render_mode: str | None = None,
    ):
        super().__init__(render_mode=render_mode)
        self.data: Tau2DomainData = load_domain_data(data_dir, self.domain_name)
        self.domain = tau2_domain(self.domain_name)
        self.toolset = self.domain.toolset
        self.task_ids = self.data.task_ids(split)
        if task_id is not None:
            self.data.task(str(task_id))  # fail early on an unknown id
        self.fixed_task_id = None if task_id is None else str(task_id)
        self.reward_basis: tuple[RewardType, ...] | None = (
            None if reward_basis == "task" else parse_reward_basis(reward_basis) or PAPER_REWARD_BASIS
        )
        self.user_model = resolve_model(user_model, "user")
        self.judge_model = resolve_model(judge_model, "judge")
        if self.judge_model is None and self._needs_judge():
            raise ValueError(
                "the reward basis includes NL_ASSERTION for tasks with NL assertions, which needs judge_model=... "
                "(or use reward_basis='DB,COMMUNICATE', the paper's)"
            )
        self.guidelines = self.data.guidelines(user_guidelines)
        self.max_turns, self.max_errors = max_turns, max_errors
        self.policy = self.data.policy
        self.system_prompt = agent_system_prompt(self.policy)
        self.tool_schemas = self.toolset.schemas()
        self.db: Tau2DB = self.data.load_db(self.domain)
        self.state = self.db
        self.evaluator = Tau2Evaluator(self.domain, self.db, judge=self.judge_model)
        self.task: Tau2Task | None = None
        self.num_errors = 0
        self.evaluation: Tau2Evaluation | None = None

    # ----- Gymnasium API --------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        task_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        task_id = options.get("task_id", self.fixed_task_id)
        if task_id is None:
            task_id = random.Random(task_seed).choice(self.task_ids)
        self.task = self.data.task(str(task_id))
        if self.user_model is None:
            raise ValueError(
                f"{type(self).__name__} needs a user model: pass user_model=<ChatModel or spec such as 'anthropic:…'>"
            )
        self.db.restore()
        self.evaluator.db.restore()
        self.user = tau2_user(self.user_model, str(self.task.user_scenario), self.guidelines)
        self.num_errors, self.evaluation = 0, None
        opening = self.user.start()
        self.start_conversation(
            [
                {"role": "system", "content": self.system_prompt},
                {"role": "assistant", "content": GREETING},
                {"role": "user", "content": opening},
            ]
        )
        if self.user.done:
            self.ended = "user_stop"
        info = {
            "task_id": self.task.id,
            "seed": task_seed,
            "domain": self.domain_name,
            "tools": self.tool_schemas,
            "policy": self.policy,
            "messages": list(self.messages),
            "reward_basis": list(self._basis()),
        }
        return clip_text(opening), info

    def after_step(self, new_messages: list[Message]) -> None:
        """tau2 counts every error (tool errors and unparseable actions) and stops at ``max_errors``."""
        self.num_errors += sum(1 for m in new_messages if m.get("error"))
        if self.ended is None and self.num_errors >= self.max_errors:
            self.ended = "too_many_errors"

    def finish(self, terminated: bool) -> tuple[float, dict[str, Any]]:
        """tau2's evaluation (0 for any ending but a user or agent stop), as ``info["verdict"]``."""
        self.evaluation = self.evaluate()
        return self.evaluation.reward, {"verdict": tau2_verdict(self.evaluation).model_dump()}

    def _needs_judge(self) -> bool:
        for task_id in self.task_ids if self.fixed_task_id is None else [self.fixed_task_id]:
            criteria = self.data.task(task_id).evaluation_criteria
            if criteria is None or not criteria.nl_assertions:
                continue
            basis = self.reward_basis if self.reward_basis is not None else tuple(criteria.reward_basis)
            if "NL_ASSERTION" in basis:
                return True
        return False

    def _basis(self) -> tuple[str, ...]:
        if self.reward_basis is not None:
            return self.reward_basis
        criteria = self.task.evaluation_criteria if self.task else None
        return tuple(criteria.reward_basis) if criteria else ()

    # ----- the env contract (trace_envs.core.EnvProtocol) ------------------------------------------------
    @property
    def current_task(self) -> Tau2Task:
        """The tau2 task of the current episode (a ``RuntimeError`` before the first ``reset()``)."""
        if self.task is None:
            raise RuntimeError("call reset() first: there is no current task")
        return self.task

    def verify(self) -> Verdict[Tau2Evaluation]:
        """The verdict of the ended episode: tau2 evaluates a whole conversation, so not one under way."""
        if self.evaluation is None:
            raise RuntimeError("a tau2 episode is evaluated when it ends: step until it does, or cut() it")
        return tau2_verdict(self.evaluation)

    def oracle_actions(self) -> list[str]:
        """The current task's gold actions, a message telling the facts to communicate, then the stop token."""
        return tau2_actions(self.current_task, cast(Tau2Toolset, self.toolset).mutates, None)

    def flawed_actions(self) -> None:
        """``None``: a tau2 task has no capability of its own to skip (``flawed:<capability>`` names one)."""
        return None

    def evaluate(self) -> Tau2Evaluation:
        """tau2's evaluation of the conversation so far (replays on fresh databases; the live one is reset)."""
        assert self.task is not None and self.ended is not None
        trajectory = [m for m in self.messages if m["role"] != "system"]
        basis = self.reward_basis
        return self.evaluator.evaluate(self.task, trajectory, reward_basis=basis, termination=self.ended)


class Tau2RetailEnv(Tau2TargetEnv):
    """tau2-bench retail tasks (114) as episodes."""

    domain_name = "retail"


class Tau2AirlineEnv(Tau2TargetEnv):
    """tau2-bench airline tasks (50) as episodes (see docs: the shared airline db.json is a rebuild)."""

    domain_name = "airline"
