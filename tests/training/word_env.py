"""A minimal capability env for GRPO tests: the user asks for a code letter; saying it succeeds.

A randomly initialised tiny model says each of k, v, x in about half of its 32-token replies, so the
K rollouts of a group get different verifier rewards and GRPO has a non-zero gradient without any
supervised warm-up. The env uses the order-cancel env's domain with no tools offered.
"""

from __future__ import annotations

import random

import gymnasium as gym

from trace_envs.core import Capability, CapabilityEnv, Task, UserScript
from trace_envs.domains.toy_shop import TOY_SHOP

WORD_ENV_ID = "trace/test-code-letter-v0"


class CodeLetterEnv(CapabilityEnv):
    """Tell the user the code letter they ask for."""

    capability = Capability(
        name="code_letter",
        description="Repeat the code letter the user asks for.",
        hint="Repeat exactly the single letter the user asked for, and nothing else.",
    )
    domain = TOY_SHOP
    tool_names = ()
    policy = "Tell the user the code letter they ask for."
    max_turns = 4

    def generate(self, rng: random.Random) -> Task:
        letter = rng.choice(["k", "v", "x"])
        return Task(
            task_id="",
            initial_state={"orders": {}},
            goal=f"Say the letter {letter}.",
            user=UserScript(opening=f"Please tell me the code letter {letter}."),
            solution=[f"The code letter is {letter}."],
            required_facts=[letter],
        )


def register() -> str:
    if WORD_ENV_ID not in gym.registry:
        gym.register(id=WORD_ENV_ID, entry_point=CodeLetterEnv)
    return WORD_ENV_ID
