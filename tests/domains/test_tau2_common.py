"""tau2 calling conventions, result serialisation, hashes and journaled reset (no benchmark data needed)."""

from __future__ import annotations

import copy
import json
import random

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from trace_envs.core import ToolCall
from trace_envs.domains.retail import RETAIL, generate_retail_db
from trace_envs.domains.tau2_common import (
    Tau2DB,
    Tau2Toolset,
    calculate,
    canonical_db_hash,
    get_dict_hash,
    pin_pydantic_links,
    tau2_serialize,
    transfer_to_human_agents,
    upstream_db_hash,
)
from trace_envs.domains.tools import tool

TOOLS = Tau2Toolset([calculate, transfer_to_human_agents], owner="AirlineTools")


def run(name: str, **arguments: object) -> str:
    return TOOLS.invoke(None, ToolCall(name=name, arguments=arguments)).content


def test_argument_errors_use_cpython_wording_with_the_upstream_class_name() -> None:
    assert run("calculate") == "Error: AirlineTools.calculate() missing 1 required positional argument: 'expression'"
    assert (
        run("calculate", expression="1", foo=2)
        == "Error: AirlineTools.calculate() got an unexpected keyword argument 'foo'"
    )
    assert run("calculate", self=1) == "Error: AirlineTools.calculate() got multiple values for argument 'self'"
    assert run("calculate", db=1) == "Error: AirlineTools.calculate() got an unexpected keyword argument 'db'"
    assert run("nonexistent_tool") == "Error: Tool 'nonexistent_tool' not found."
    # the same function in another toolset keeps its own owner name
    retail = RETAIL.toolset.invoke(None, ToolCall(name="calculate", arguments={}))
    assert retail.content == "Error: RetailTools.calculate() missing 1 required positional argument: 'expression'"


class Seat(BaseModel):
    row: int


@tool(kind="write")
def book_seat(db: object, row: object) -> str:
    """Book a seat (builds a model, so a bad row raises pydantic's ValidationError).

    Args:
        row: The row number.
    """
    return str(Seat(row=row))  # type: ignore[arg-type]


def test_validation_error_links_name_upstreams_pinned_pydantic() -> None:
    """tau2-bench pins pydantic 2.12: a recorded link naming the installed version made its strict replay raise."""
    tools = Tau2Toolset([book_seat], owner="AirlineTools")
    content = tools.invoke(None, ToolCall(name="book_seat", arguments={"row": "x"})).content
    installed = ".".join(pydantic.VERSION.split(".")[:2])
    assert content.startswith("Error: 1 validation error for Seat\nrow\n  Input should be a valid integer")
    assert content.endswith("For further information visit https://errors.pydantic.dev/2.12/v/int_parsing")
    assert installed == "2.12" or f"/{installed}/" not in content
    two = "see https://errors.pydantic.dev/2.14/v/missing and https://errors.pydantic.dev/3.0/u/x"
    assert (
        pin_pydantic_links(two)
        == "see https://errors.pydantic.dev/2.12/v/missing and https://errors.pydantic.dev/2.12/u/x"
    )
    assert pin_pydantic_links("Error: 2.14 bags") == "Error: 2.14 bags"


def test_calculate_matches_upstream() -> None:
    assert run("calculate", expression="2+2") == "4.0"
    assert run("calculate", expression="10/3") == "3.33"
    assert run("calculate", expression="2**3") == "8.0"
    assert run("calculate", expression="1/0") == "Error: division by zero"
    assert run("calculate", expression="(2") == "Error: '(' was never closed (<string>, line 1)"
    assert run("calculate", expression="2+x") == "Error: Invalid characters in expression"
    assert run("transfer_to_human_agents", summary="help") == "Transfer successful"


def test_no_argument_coercion() -> None:
    result = TOOLS.invoke(None, ToolCall(name="calculate", arguments={"expression": 5}))
    assert result.error
    assert result.content == "Error: 'int' object is not iterable"


class _Inner(BaseModel):
    b: int
    a: float | None = None


def test_serialisation_table() -> None:
    assert tau2_serialize("plain") == "plain"
    assert tau2_serialize(_Inner(b=1)) == '{"b": 1, "a": null}'
    assert tau2_serialize([_Inner(b=2, a=1.5)]) == '[{"b": 2, "a": 1.5}]'
    assert tau2_serialize([1, 2.5, True, None]) == '["1", "2.5", "True", null]'
    assert tau2_serialize(5) == '"5"'
    assert tau2_serialize({"k": [_Inner(b=3)]}) == '{"k": [{"b": 3, "a": null}]}'


def test_hashes_are_the_two_documented_digests() -> None:
    db = generate_retail_db(random.Random(0), users=3, products=3)
    raw = db.model_dump()
    assert upstream_db_hash(db) == get_dict_hash(raw)
    assert (
        get_dict_hash(raw)
        == __import__("hashlib").sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()
    )
    assert canonical_db_hash(db) != upstream_db_hash(db)


def test_tool_kinds() -> None:
    kinds = {name: RETAIL.toolset[name].kind for name in RETAIL.toolset}
    assert sorted(n for n, k in kinds.items() if k == "write") == [
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    ]
    assert {kinds["calculate"], kinds["transfer_to_human_agents"]} == {"generic"}
    assert sum(k == "read" for k in kinds.values()) == 7


WRITE_CALLS = st.sampled_from(
    [
        "cancel_pending_order",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
    ]
)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), names=st.lists(WRITE_CALLS, min_size=1, max_size=8))
def test_journal_restore_equals_a_fresh_copy(seed: int, names: list[str]) -> None:
    """Any sequence of write calls, then restore(): the state equals the untouched one (as a deep copy would)."""
    rng = random.Random(seed)
    db = generate_retail_db(random.Random(seed % 7), users=4, products=4)
    pristine = copy.deepcopy(db)
    before = RETAIL.state_hash(db)
    for name in names:
        order = db.orders[rng.choice(sorted(db.orders))]
        user = db.users[order.user_id]
        methods = sorted(user.payment_methods)
        items = [item.item_id for item in order.items][:1]
        product = db.products[order.items[0].product_id]
        arguments = {
            "order_id": order.order_id,
            "user_id": user.user_id,
            "reason": "no longer needed",
            "item_ids": items,
            "new_item_ids": [rng.choice(sorted(product.variants))],
            "payment_method_id": rng.choice(methods),
            "address1": "1 New St",
            "address2": "",
            "city": "Austin",
            "state": "TX",
            "country": "USA",
            "zip": "78701",
        }
        wanted = list(RETAIL.toolset[name].arg_names)
        RETAIL.toolset.invoke(db, ToolCall(name=name, arguments={k: arguments[k] for k in wanted}))
        assert db.canonical_hash() == canonical_db_hash(db)  # incremental hash == full computation
    db.restore()
    assert RETAIL.state_hash(db) == before == canonical_db_hash(db)
    assert db.model_dump() == pristine.model_dump()
    assert not db.dirty


def test_states_built_by_load_state_do_not_journal() -> None:
    import random

    from trace_envs.domains.retail import RETAIL, generate_retail_db
    from trace_envs.domains.tau2_common import canonical_db_hash

    db = RETAIL.load_state(generate_retail_db(random.Random(0)).model_dump(mode="json"))
    user_id = next(iter(db.users))
    db.touch(db.users, user_id)
    db.users[user_id].email = "changed@example.com"
    assert not db.dirty
    assert RETAIL.state_hash(db) == canonical_db_hash(db)
    with pytest.raises(RuntimeError, match="does not journal"):
        db.restore()


def test_every_database_has_its_own_journal_and_hash_cache() -> None:
    """The private containers start empty in every instance (pydantic copies an empty default): a touch or a
    cached hash fragment of one database is never seen by another."""
    data = generate_retail_db(random.Random(1), users=3, products=3).model_dump(mode="json")
    first, second = RETAIL.state_model.model_validate(data), RETAIL.state_model.model_validate(data)
    user_id = next(iter(first.users))
    first.touch(first.users, user_id)
    first.canonical_hash()
    assert first.dirty and not second.dirty and second.touched_count == 0
    assert first._journal is not second._journal and first._touched is not second._touched
    assert first._fragments and not second._fragments
    second.restore()  # nothing touched: restoring the second database changes nothing in the first
    assert first.dirty


def test_no_private_attribute_of_a_database_has_a_default_factory() -> None:
    """A default factory makes pydantic inspect its signature for every new instance (``inspect.signature`` was
    most of the cost of ``load_state`` on a small database, run on every capability-env reset); empty
    defaults are copied per instance instead (see the test above)."""
    factories = [name for name, attr in Tau2DB.__private_attributes__.items() if attr.default_factory is not None]
    assert factories == []
