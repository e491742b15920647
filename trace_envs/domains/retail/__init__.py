"""tau2-bench's retail domain reproduced exactly: state models, the 16 tools, a domain object, a generator.

``RETAIL`` is the :class:`~trace_envs.domains.tau2_common.Tau2Domain` (name ``"retail"``) with this
project's own policy text (not tau2's ``policy.md``; the target env reads that from the user's data).
"""

from __future__ import annotations

from pathlib import Path

from trace_envs.domains.tau2_common import Tau2Domain

from .data_model import (
    CreditCard,
    GiftCard,
    Order,
    OrderFullfilment,
    OrderItem,
    OrderPayment,
    Paypal,
    Product,
    RetailDB,
    User,
    UserAddress,
    UserName,
    Variant,
)
from .generator import generate_retail_db
from .tools import OWNER, RETAIL_TOOLS

POLICY = (Path(__file__).parent / "policy.md").read_text(encoding="utf-8")
"""This project's retail support policy (written for trace-envs)."""

RETAIL: Tau2Domain[RetailDB] = Tau2Domain("retail", RetailDB, RETAIL_TOOLS, policy=POLICY)

__all__ = [
    "OWNER",
    "POLICY",
    "RETAIL",
    "RETAIL_TOOLS",
    "CreditCard",
    "GiftCard",
    "Order",
    "OrderFullfilment",
    "OrderItem",
    "OrderPayment",
    "Paypal",
    "Product",
    "RetailDB",
    "User",
    "UserAddress",
    "UserName",
    "Variant",
    "generate_retail_db",
]
