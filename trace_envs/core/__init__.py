"""The Gymnasium contract of trace-envs: envs, tools, actions, state hashing, users, verdicts.

What an env module imports: ``__all__`` lists exactly the contract (the synthesis static gate allows these
names), and nothing here imports by string or hands out a module. Imports only gymnasium, pydantic and
jinja2, so ``import trace_envs`` stays fast. Registering env ids and domains by name lives in
:mod:`trace_envs.registry`, the probes' episode view in :mod:`trace_envs.domains.probing`.
"""

from .actions import STOP_TOKEN, ParsedAction, format_tool_call, parse_action
from .canonical import canonical_hash, canonical_json
from .capability import Capability
from .contract import CONTRACT_MEMBERS, EnvProtocol, VerifiableEnv, contract_gaps, declares_capability
from .conversation import ConversationEnv, render_transcript
from .domain import Domain
from .env import (
    CapabilityEnv,
    NoKnobs,
    fact_pattern,
    format_steps,
    normalize_fact_text,
    render_system_prompt,
)
from .messages import Message, Role, ToolCallEntry
from .plan import Plan
from .spaces import MAX_TEXT_LENGTH, UnicodeText
from .task import Reply, Task, UserFact, UserScript, Verdict
from .tools import Tool, ToolCall, ToolError, ToolResult, Toolset
from .user import CONFIRM_CUES, REQUEST_CUES, ScriptedUser, User, check_replies, read_message

__all__ = [
    "CONFIRM_CUES",
    "CONTRACT_MEMBERS",
    "MAX_TEXT_LENGTH",
    "REQUEST_CUES",
    "STOP_TOKEN",
    "Capability",
    "CapabilityEnv",
    "ConversationEnv",
    "Domain",
    "EnvProtocol",
    "Message",
    "NoKnobs",
    "ParsedAction",
    "Plan",
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
    "UserScript",
    "Verdict",
    "VerifiableEnv",
    "canonical_hash",
    "canonical_json",
    "check_replies",
    "contract_gaps",
    "declares_capability",
    "fact_pattern",
    "format_steps",
    "format_tool_call",
    "normalize_fact_text",
    "parse_action",
    "read_message",
    "render_system_prompt",
    "render_transcript",
]
