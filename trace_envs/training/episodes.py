"""Dataset rows (one seed each) and oracle conversations in the message format TRL's tool loop produces."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trace_envs.core import declares_capability, parse_action

from .bridge import SEND_MESSAGE_TOOL, TRLEnvironment, tool_schemas, trl_environment

Message = dict[str, Any]


def prompt_for_seed(cls: type[TRLEnvironment], seed: int) -> list[Message]:
    """The conversation a rollout starts from: the env's opening messages (its system prompt, any greeting
    the env sends for the agent, as tau2 does) ending with the user's opening as the env returned it."""
    env = cls()
    opening, info = env._env.reset(seed=seed)
    *before, _ = info["messages"]  # the env's transcript opens with its system prompt, the user speaks last
    return [*({"role": m["role"], "content": m["content"]} for m in before), {"role": "user", "content": opening}]


def build_rows(
    env_ids: Sequence[str], seeds: Sequence[int], knobs: dict[str, dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Dataset rows ``{"prompt", "seed", "environment"}``: a uniform round-robin over ``env_ids``.

    Row ``i`` uses ``env_ids[i % len(env_ids)]`` and ``seeds[i]``; every generation of a GRPO group
    gets the same row, so the same seed and the same initial state.
    """
    knobs = knobs or {}
    classes = {env_id: trl_environment(env_id, **knobs.get(env_id, {})) for env_id in env_ids}
    rows = []
    for index, seed in enumerate(seeds):
        env_id = env_ids[index % len(env_ids)]
        rows.append({"prompt": prompt_for_seed(classes[env_id], int(seed)), "seed": int(seed), "environment": env_id})
    return rows


def oracle_conversation(cls: type[TRLEnvironment], seed: int) -> dict[str, Any]:
    """The env's reference solution played through the bridge, as TRL-style messages (see
    :func:`actions_conversation`); only an env that declares a capability has a reference solution that plays
    alone (a tau2 target's needs its model-played user)."""
    probe = cls()._env
    if not declares_capability(probe):
        raise TypeError(f"{cls.env_id} is a target env: it has no reference solution to play")
    probe.reset(seed=seed)
    return actions_conversation(cls, seed, probe.oracle_actions())


def actions_conversation(cls: type[TRLEnvironment], seed: int, actions: Sequence[str]) -> dict[str, Any]:
    """Action strings (a reference solution, or a stored episode's ``actions``) replayed through the bridge
    on the episode of ``seed``, as the TRL-style messages a GRPO rollout of them would produce.

    Tool-call actions become assistant ``tool_calls`` followed by the tool's result; messages to the
    user become ``send_message_to_user`` calls, except the last, which is the final plain assistant
    message that ends a TRL rollout. Returns ``{"messages", "tools", "reward", "seed", "transcript"}``.
    """
    env = cls()
    prompt = prompt_for_seed(cls, seed)
    env.reset(seed=seed, prompt=prompt)
    last_message = max((i for i, a in enumerate(actions) if parse_action(a).is_message), default=-1)
    messages: list[Message] = list(prompt)
    for index, action in enumerate(actions):
        parsed = parse_action(action)
        if index == last_message:
            messages.append({"role": "assistant", "content": parsed.text})
            env._finish(parsed.text)
            break
        if parsed.is_message:
            calls = [(SEND_MESSAGE_TOOL, {"message": parsed.text})]
        else:
            calls = [(call.name, dict(call.arguments)) for call in parsed.tool_calls]
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
            }
        )
        for name, arguments in calls:
            messages.append({"role": "tool", "name": name, "content": str(getattr(env, name)(**arguments))})
    reward = env.get_reward()
    return {
        "messages": messages,
        "tools": tool_schemas(cls),
        "reward": reward,
        "seed": seed,
        "transcript": env._transcript,
    }
