"""The user simulator's only tool."""

from __future__ import annotations

from ..registry import device_tool
from ..state import DeviceState


@device_tool("user_tools", visible_to="USER")
def end_conversation(state: DeviceState) -> None:
    """Finish the conversation

    Trigger this tool when you think the agent have completed the task for you,
    or the agent is unable to complete the task. Either way this tool will stop the conversation

    Returns:
        None
    """
    return None
