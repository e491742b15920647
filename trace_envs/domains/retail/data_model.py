"""Retail state models: the JSON form is tau2-bench retail's db.json (field order = upstream declaration order).

Pydantic models here do not validate on assignment (as upstream), so values a tool assigns are stored
exactly as passed; only constructors coerce (``OrderPayment(amount=0)`` stores ``0.0``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from trace_envs.domains.tau2_common import Tau2DB

OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]
CancelReason = Literal["no longer needed", "ordered by mistake"]


class Variant(BaseModel):
    """One purchasable item (a product with fixed options)."""

    item_id: str = Field(description="Unique identifier for the item")
    options: dict[str, str] = Field(description="Options of the item")
    available: bool = Field(description="Whether the item is available")
    price: float = Field(description="Price of the item")


class Product(BaseModel):
    """A product type and its variants keyed by item id."""

    name: str = Field(description="Name of the product")
    product_id: str = Field(description="Unique identifier for the product")
    variants: dict[str, Variant] = Field(description="Dictionary of variants indexed by variant ID")


class UserName(BaseModel):
    first_name: str = Field(description="The user's first name")
    last_name: str = Field(description="The user's last name")


class UserAddress(BaseModel):
    """A postal address (``address2`` is required in retail, possibly empty)."""

    address1: str = Field(description="The first line of the address")
    address2: str = Field(description="The second line of the address")
    city: str = Field(description="The city")
    country: str = Field(description="The country")
    state: str = Field(description="The state")
    zip: str = Field(description="The zip code")


class CreditCard(BaseModel):
    source: Literal["credit_card"] = Field(description="Indicates this is a credit card payment method")
    id: str = Field(description="Unique identifier for the payment method")
    brand: str = Field(description="The brand of the credit card")
    last_four: str = Field(description="The last four digits of the credit card")


class GiftCard(BaseModel):
    source: Literal["gift_card"] = Field(description="Indicates this is a gift card payment method")
    id: str = Field(description="Unique identifier for the payment method")
    balance: float = Field(description="The balance of the gift card")


class Paypal(BaseModel):
    source: Literal["paypal"] = Field(description="Indicates this is a paypal payment method")
    id: str = Field(description="Unique identifier for the payment method")


PaymentMethod = Annotated[CreditCard | GiftCard | Paypal, Field(discriminator="source")]


class User(BaseModel):
    user_id: str = Field(description="Unique identifier for the user")
    name: UserName = Field(description="User's full name")
    address: UserAddress = Field(description="User's primary address")
    email: str = Field(description="User's email address")
    payment_methods: dict[str, PaymentMethod] = Field(description="Dictionary of payment methods indexed by ID")
    orders: list[str] = Field(description="List of order IDs associated with this user")


class OrderFullfilment(BaseModel):
    """A shipment (upstream's spelling kept)."""

    tracking_id: list[str] = Field(description="List of tracking IDs for shipments")
    item_ids: list[str] = Field(description="List of item IDs included in this fulfillment")


class OrderItem(BaseModel):
    name: str = Field(description="Name of the product")
    product_id: str = Field(description="ID of the product")
    item_id: str = Field(description="ID of the item")
    price: float = Field(description="Price of the item")
    options: dict[str, str] = Field(description="Options selected for this item")


class OrderPayment(BaseModel):
    transaction_type: Literal["payment", "refund"] = Field(description="Type of transaction")
    amount: float = Field(description="Amount of the transaction")
    payment_method_id: str = Field(description="ID of the payment method used")


class Order(BaseModel):
    order_id: str = Field(description="Unique identifier for the order")
    user_id: str = Field(description="Unique identifier for the user")
    address: UserAddress = Field(description="Address of the user")
    items: list[OrderItem] = Field(description="Items in the order")
    status: OrderStatus = Field(description="Status of the order")
    fulfillments: list[OrderFullfilment] = Field(description="Fulfillments of the order")
    payment_history: list[OrderPayment] = Field(description="Payments of the order")
    cancel_reason: CancelReason | None = Field(default=None, description="Reason for cancelling the order")
    exchange_items: list[str] | None = Field(default=None, description="Items to be exchanged")
    exchange_new_items: list[str] | None = Field(default=None, description="Items exchanged for")
    exchange_payment_method_id: str | None = Field(default=None, description="Payment method ID for the exchange")
    exchange_price_difference: float | None = Field(default=None, description="Price difference for the exchange")
    return_items: list[str] | None = Field(default=None, description="Items to be returned")
    return_payment_method_id: str | None = Field(default=None, description="Payment method ID for the return")


class RetailDB(Tau2DB):
    """The retail database: products, users and orders, each keyed by id (extra top-level keys forbidden)."""

    products: dict[str, Product] = Field(description="Dictionary of all products indexed by product ID")
    users: dict[str, User] = Field(description="Dictionary of all users indexed by user ID")
    orders: dict[str, Order] = Field(description="Dictionary of all orders indexed by order ID")
