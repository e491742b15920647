"""The Gymnasium contract of trace-envs: envs, tools, actions, state hashing, users, env ids.

Imports only gymnasium, pydantic and jinja2, so ``import trace_envs`` stays fast.
"""

from .actions import STOP_TOKEN, ParsedAction, format_tool_call, parse_action
from .canonical import canonical_hash, canonical_json
from .capability import Capability, Probe, ProbeLabel
from .conversation import ConversationEnv, render_transcript
from .domain import Domain, get_domain, register_domain, registered_domains
from .env import (
    AGENT_INSTRUCTION,
    CapabilityEnv,
    NoKnobs,
    fact_pattern,
    format_steps,
    normalize_fact_text,
    render_system_prompt,
)
from .episode import Episode, read_messages
from .llm_user import AGENT_GREETING, LLMUser, UserModel, scenario_from_task
from .messages import Message, Role, ToolCallEntry
from .plan import Plan
from .problems import validation_problems
from .registry import list_envs, register_env
from .spaces import MAX_TEXT_LENGTH, UnicodeText
from .task import Reply, Task, UserFact, UserScript, Verdict
from .tools import Tool, ToolCall, ToolError, ToolResult, Toolset, parse_docstring, tool
from .user import CONFIRM_CUES, REQUEST_CUES, ScriptedUser, User, check_replies, read_message

__all__ = [
    "AGENT_GREETING",
    "AGENT_INSTRUCTION",
    "CONFIRM_CUES",
    "MAX_TEXT_LENGTH",
    "REQUEST_CUES",
    "STOP_TOKEN",
    "Capability",
    "CapabilityEnv",
    "ConversationEnv",
    "Domain",
    "Episode",
    "LLMUser",
    "Message",
    "NoKnobs",
    "ParsedAction",
    "Plan",
    "Probe",
    "ProbeLabel",
    "Reply",
    "Role",
    "ScriptedUser",
    "Task",
    "Tool",
    "ToolCall",
    "ToolCallEntry",
    "ToolError",
    "ToolResult",
    "Toolset",
    "UnicodeText",
    "User",
    "UserFact",
    "UserModel",
    "UserScript",
    "Verdict",
    "canonical_hash",
    "canonical_json",
    "check_replies",
    "fact_pattern",
    "format_steps",
    "format_tool_call",
    "get_domain",
    "list_envs",
    "normalize_fact_text",
    "parse_action",
    "parse_docstring",
    "read_message",
    "read_messages",
    "register_domain",
    "register_env",
    "registered_domains",
    "render_system_prompt",
    "render_transcript",
    "scenario_from_task",
    "tool",
    "validation_problems",
]
