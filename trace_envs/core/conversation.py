"""``ConversationEnv``: the text-in, text-out conversation loop every env of ours shares.

An action is parsed into tool calls (run on ``self.state`` with ``self.toolset``) or a message (sent
to ``self.user``); malformed actions become error observations. Subclasses decide how an episode
starts (``reset``) and how it is scored when it ends (:meth:`finish`): capability envs with the
hash verifier, target envs with their benchmark's evaluator.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, SupportsFloat

from gymnasium import Env

from .actions import STOP_TOKEN, format_tool_call, parse_action
from .messages import Message
from .spaces import UnicodeText, clip_text
from .tools import ToolCall, ToolResult, Toolset
from .user import User


def tool_calls_message(calls: list[ToolCall], content: str | None) -> Message:
    """The transcript entry of an agent turn that calls tools (ids already assigned)."""
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
    }


def tool_result_message(result: ToolResult) -> Message:
    """The transcript entry of one tool call's result."""
    return {"role": "tool", "id": result.call_id, "name": result.name, "content": result.content, "error": result.error}


class ConversationEnv(Env[str, str]):
    """Turns, messages, tool calls, the user, endings and rendering; scoring is the subclass's."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 4}  # noqa: RUF012  (Gymnasium API)
    max_turns: int = 30
    truncation_reason: str = "max_turns"
    """``info["ended"]`` when ``max_turns`` agent actions have been taken."""

    def __init__(self, render_mode: str | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.observation_space = UnicodeText()
        self.action_space = UnicodeText()
        self.toolset: Toolset
        self.state: Any = None
        self.user: User | None = None
        self.messages: list[Message] = []
        self.turn = 0
        self.ended: str | None = None

    def start_conversation(self, messages: list[Message]) -> None:
        """Begin an episode with these first messages (call from ``reset``)."""
        self.messages = messages
        self.turn, self.ended = 0, None

    @abstractmethod
    def finish(self, terminated: bool) -> tuple[float, dict[str, Any]]:
        """Score the ended episode: its reward and what to add to the last step's ``info``."""

    def cut(self, reason: str = "max_steps") -> dict[str, Any]:
        """End the episode from outside (a rollout's own step limit) and score it as at the env's turn limit:
        the ``info`` entries a truncating step would add (``verdict``, ``ended``). Without this a cut episode
        had no verdict at all, so e.g. a ToolSandbox-style similarity, which the benchmark takes at the cut,
        was missing. An episode that already ended is not scored again (an empty dict)."""
        if self.user is None or self.ended is not None:
            return {}
        self.ended = reason
        _, extra = self.finish(False)
        return {**extra, "ended": reason}

    def after_step(self, new_messages: list[Message]) -> None:
        """Called after each action with the messages it added (e.g. to end on too many errors)."""

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.user is None:
            raise RuntimeError("call reset() before step()")
        if self.ended is not None:
            text = "Error: the episode has ended; call reset()."
            return (
                text,
                0.0,
                True,
                False,
                {"messages": [{"role": "user", "content": text, "error": True}], "ended": self.ended},
            )
        self.turn += 1
        start = len(self.messages)
        parsed = parse_action(action)
        if parsed.errors:
            observation = "Error: invalid tool call: " + "; ".join(parsed.errors)
            self.messages.append({"role": "assistant", "content": parsed.text, "invalid": True})
            self.messages.append({"role": "user", "content": observation, "error": True})
        elif parsed.tool_calls:
            observation = self.run_tool_calls(parsed.tool_calls, parsed.content)
        else:
            observation = self.talk(parsed.text)
        new_messages = self.messages[start:]
        self.after_step(new_messages)
        terminated = self.ended is not None
        truncated = not terminated and self.turn >= self.max_turns
        info: dict[str, Any] = {"messages": new_messages, "turn": self.turn}
        reward = 0.0
        if terminated or truncated:
            self.ended = self.ended or self.truncation_reason
            reward, extra = self.finish(terminated)
            info.update(extra)
            info["ended"] = self.ended
        if self.render_mode == "human":
            self.render()
        return clip_text(observation), reward, terminated, truncated, info

    def run_tool_calls(self, calls: list[ToolCall], content: str | None) -> str:
        """Run an agent turn's tool calls (ids assigned), record them and their results; the observation text."""
        calls = [
            c if c.id else ToolCall.model_construct(name=c.name, arguments=c.arguments, id=f"call_{self.turn}_{i}")
            for i, c in enumerate(calls)
        ]
        self.messages.append(tool_calls_message(calls, content))
        results = [self.toolset.invoke(self.state, call) for call in calls]
        self.messages.extend(tool_result_message(result) for result in results)
        if len(results) == 1:
            return results[0].content
        return "\n\n".join(f"[{r.name}] {r.content}" for r in results)

    def talk(self, text: str) -> str:
        """Send the agent's message to the user (or end on the stop token); the user's reply."""
        assert self.user is not None
        self.messages.append({"role": "assistant", "content": text})
        if STOP_TOKEN in text:
            self.ended = "agent_stop"
            return ""
        reply = self.user.reply(text)
        self.messages.append({"role": "user", "content": reply})
        if self.user.done or STOP_TOKEN in reply:
            self.ended = "user_stop"
        return reply

    def render(self) -> str | None:
        text = render_transcript(self.messages)
        if self.render_mode == "human":
            print(text)
            return None
        return text


def render_transcript(messages: list[Message]) -> str:
    """A plain-text transcript: one block per message, tool calls in JSON form."""
    lines = []
    for message in messages:
        role = message["role"]
        if role == "system":
            continue
        if message.get("tool_calls"):
            for call in message["tool_calls"]:
                lines.append(
                    f"assistant → {format_tool_call(ToolCall(name=call['name'], arguments=call['arguments']))}"
                )
        elif role == "tool":
            tag = "tool error" if message.get("error") else "tool"
            lines.append(f"{tag} ({message.get('name', '')}): {message['content']}")
        else:
            tag = "error" if message.get("error") else role
            lines.append(f"{tag}: {message.get('content') or ''}")
    return "\n".join(lines)
