"""Messaging tools: send a message (needs cellular service) and search the MESSAGING table."""

from __future__ import annotations

from typing import Any

from ..errors import NOT_GIVEN, DuplicateError, NotGiven
from ..registry import device_tool, given
from ..state import DeviceState, MessageRow
from ..validators import check_timestamp, validate_phone_number
from . import _tables


@device_tool("messaging", kind="write")
def send_message_with_phone_number(state: DeviceState, phone_number: str, content: str) -> str:
    """Send a message to a recipient using phone_number

    Args:
        phone_number:   String format phone number to send the message to
        content:        Message payload text

    Returns:
        String format unique identifier for the message

    Raises:
        ConnectionError:    If cellular service is not enabled
        DuplicateError:     If more than 1 or no self entry exists in contacts
    """
    validate_phone_number(phone_number)
    if not state.settings.cellular:
        raise ConnectionError("Cellular service is not enabled")
    selves = [row for row in state.CONTACT if row.is_self]
    if len(selves) != 1:
        raise DuplicateError(f"1 and only 1 self entry should exist in contacts database, instead found {len(selves)}")
    recipient = next((row.person_id for row in state.CONTACT if row.phone_number == phone_number), None)
    message_id = state.new_id("message")
    state.MESSAGING.append(
        MessageRow(
            message_id=message_id,
            sender_person_id=selves[0].person_id,
            sender_phone_number=selves[0].phone_number,
            recipient_person_id=recipient,
            recipient_phone_number=phone_number,
            content=content,
            creation_timestamp=state.now,
        )
    )
    return message_id


@device_tool("messaging")
def search_messages(
    state: DeviceState,
    message_id: str | NotGiven = NOT_GIVEN,
    sender_person_id: str | NotGiven = NOT_GIVEN,
    sender_phone_number: str | NotGiven = NOT_GIVEN,
    recipient_person_id: str | NotGiven = NOT_GIVEN,
    recipient_phone_number: str | NotGiven = NOT_GIVEN,
    content: str | NotGiven = NOT_GIVEN,
    creation_timestamp_lowerbound: float | NotGiven = NOT_GIVEN,
    creation_timestamp_upperbound: float | NotGiven = NOT_GIVEN,
) -> list[dict[str, Any]]:
    """Search for a message based on provided arguments

    Each field has a search criteria of one of the below
    1. Exact value matching
    2. Fuzzy string matching with a predefined threshold
    3. Range matching timestamp with upperbound or lowerbound

    Search results contains all contact entries that matched all criteria

    Args:
        message_id:                     String format unique identifier for message, will be exact matched
        sender_person_id:               String format unique identifier for the sender, will be exact matched
        sender_phone_number:            Phone number for the sender, will be exact matched
        recipient_person_id:            String format unique identifier for the recipient, will be exact matched
        recipient_phone_number:         Phone number for the recipient, will be exact matched
        content:                        Message content, will be fuzzy matched
        creation_timestamp_lowerbound:  Lowerbound of the POSIX timestamp of the time the message is created.
        creation_timestamp_upperbound:  Upperbound of the POSIX timestamp of the time the message is created.

    Returns:
        A List of matching messages. An empty List if no matches are found
    """
    check_timestamp("creation_timestamp_lowerbound", creation_timestamp_lowerbound)
    check_timestamp("creation_timestamp_upperbound", creation_timestamp_upperbound)
    for phone in (sender_phone_number, recipient_phone_number):
        if given(phone):
            validate_phone_number(phone)  # type: ignore[arg-type]
    criteria = (
        message_id,
        sender_person_id,
        sender_phone_number,
        recipient_person_id,
        recipient_phone_number,
        content,
        creation_timestamp_lowerbound,
        creation_timestamp_upperbound,
    )
    if not any(given(value) for value in criteria):
        raise _tables.no_criteria(
            (
                "message_id",
                "sender_person_id",
                "sender_phone_number",
                "recipient_person_id",
                "recipient_phone_number",
                "content",
                "creation_timestamp",
                "creation_timestamp",
            )
        )
    rows: list[Any] = list(state.MESSAGING)
    for column, value in (
        ("message_id", message_id),
        ("sender_person_id", sender_person_id),
        ("sender_phone_number", sender_phone_number),
        ("recipient_person_id", recipient_person_id),
        ("recipient_phone_number", recipient_phone_number),
    ):
        rows = _tables.exact(rows, column, value)
    rows = _tables.fuzzy(rows, "content", content, 50)
    rows = _tables.bounded(rows, "creation_timestamp", creation_timestamp_lowerbound, creation_timestamp_upperbound)
    return _tables.dump(rows)
