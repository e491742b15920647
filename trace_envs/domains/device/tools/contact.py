"""Contact tools: add, modify, remove and search the CONTACT table."""

from __future__ import annotations

from typing import Any

from ..errors import NOT_GIVEN, DuplicateError, NotGiven
from ..registry import device_tool, given
from ..state import ContactRow, DeviceState
from ..validators import validate_phone_number
from . import _tables

_SELF_EXISTS = "Self entry already exists. Cannot add another one."


@device_tool("contact", kind="write")
def add_contact(
    state: DeviceState,
    name: str,
    phone_number: str,
    relationship: str | None = None,
    is_self: bool = False,
) -> str:
    """Add a new contact person to contact database. Entries with identical information are allowed,
    and will be assigned different person_ids.

    Args:
        name:           Name of contact person
        phone_number:   Phone number of contact person
        relationship:   Optional, relationship between user and this contact
        is_self:        Optional. Defaults to False. Should be set to True if the contact corresponds to the
                        current user.

    Returns:
        String format unique identifier for the contact person, this can be passed to other functions
        which require a unique identifier for this contact person

    Raises:
        DuplicateError: When self entry already exists, and we are adding a new one
    """
    validate_phone_number(phone_number)
    if is_self and any(row.is_self for row in state.CONTACT):
        raise DuplicateError(_SELF_EXISTS)
    person_id = state.new_id("contact")
    state.CONTACT.append(
        ContactRow(
            person_id=person_id, name=name, phone_number=phone_number, relationship=relationship, is_self=is_self
        )
    )
    return person_id


@device_tool("contact", kind="write")
def modify_contact(
    state: DeviceState,
    person_id: str,
    name: str | NotGiven = NOT_GIVEN,
    phone_number: str | NotGiven = NOT_GIVEN,
    relationship: str | NotGiven = NOT_GIVEN,
    is_self: bool | NotGiven = NOT_GIVEN,
) -> None:
    """Modify a contact entry with new information provided

    Args:
        person_id:      String unique identifier for the contact person
        name:           New name for the person
        phone_number:   New phone number for the person
        relationship:   New relationship for the person
        is_self:        Optional. Defaults to False. Should be set to True if the contact corresponds to the
                        current user.

    Raises:
        DuplicateError: If more than 1 entry with the person_id is found, or when setting is_self while a
                        self entry already exists
        NoDataError:    If no entry with the person_id is found
        ValueError:     If no update information is given
    """
    updates: dict[str, Any] = {
        key: value
        for key, value in (
            ("name", name),
            ("phone_number", phone_number),
            ("relationship", relationship),
            ("is_self", is_self),
        )
        if given(value)
    }
    if not updates:
        raise ValueError(
            "No update information given. At least one new field should be provided among "
            "[name, phone_number, relationship, is_self] in order to modify contact"
        )
    if given(phone_number):
        validate_phone_number(phone_number)  # type: ignore[arg-type]
    if given(is_self) and is_self and any(r.is_self and r.person_id != person_id for r in state.CONTACT):
        raise DuplicateError(_SELF_EXISTS)
    index = _tables.find_one(state.CONTACT, "person_id", person_id)
    row = state.CONTACT.pop(index)
    state.CONTACT.append(row.model_copy(update=updates))


@device_tool("contact", kind="write")
def remove_contact(state: DeviceState, person_id: str) -> None:
    """Remove an existing contact person to contact database.

    Args:
        person_id:      String format unique identifier of the person to be deleted

    Raises:
        NoDataError:    If the provided person_id was not found
    """
    state.CONTACT = _tables.remove_matching(state.CONTACT, "person_id", person_id)


@device_tool("contact", typechecked=False)
def search_contacts(
    state: DeviceState,
    person_id: str | NotGiven = NOT_GIVEN,
    name: str | NotGiven = NOT_GIVEN,
    phone_number: str | NotGiven = NOT_GIVEN,
    relationship: str | NotGiven = NOT_GIVEN,
    is_self: bool | NotGiven = NOT_GIVEN,
) -> list[dict[str, Any]]:
    """Search for a contact person based on provided arguments

    Each field has a search criteria of either
    1. Exact value matching
    2. Fuzzy string matching with a predefined threshold

    Search results contains all contact entries that matched all criteria

    Args:
        person_id:      String format unique identifier for the contact person, will be exact matched
        name:           Name of contact person, will be fuzzy matched
        phone_number:   Phone number of contact person, will be exact matched
        relationship:   Relationship between user and this contact, will be fuzzy matched
        is_self:        If the requested contact corresponds to the current user. Will be exact matched

    Returns:
        A List of matching contacts. An empty List if no matches are found
    """
    criteria = (person_id, name, phone_number, relationship, is_self)
    if not any(given(value) for value in criteria):
        raise _tables.no_criteria(("person_id", "name", "phone_number", "relationship", "is_self"))
    if isinstance(phone_number, str):
        validate_phone_number(phone_number)
    rows: list[Any] = list(state.CONTACT)
    rows = _tables.exact(rows, "person_id", person_id)
    rows = _tables.fuzzy(rows, "name", name, 90)
    rows = _tables.exact(rows, "phone_number", phone_number)
    rows = _tables.fuzzy(rows, "relationship", relationship, 90)
    rows = _tables.exact(rows, "is_self", is_self)
    return _tables.dump(rows)
