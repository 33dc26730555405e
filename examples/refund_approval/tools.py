"""Tools of the refund_approval example: a dry run first, and a person approves refunds.

``get_order`` and ``check_eligibility`` only read, so they are declared ``pure``: a
dry run (``obelisk simulate``) really runs them.  ``check_eligibility`` picks the
plan's alternative (``†state.eligible || †state.ineligible``).  ``issue_refund``
moves money: refunds above 50 wait for a person (``requires_approval``), and its
failure goes to the error arm ``†state.refund_error``.  ``notify`` sends a message::

    obelisk simulate examples/refund_approval/plan.json \\
        --tools examples/refund_approval/tools.py --input examples/refund_approval/input.json
    obelisk run examples/refund_approval/plan.json --approve \\
        --tools examples/refund_approval/tools.py --input examples/refund_approval/input.json
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from obelisk import Outcome, tool


class Order(TypedDict):
    id: str
    customer: str
    amount: float
    days_since_delivery: int


class Refund(TypedDict):
    refund_id: str
    order_id: str
    amount: float


ORDERS: dict[str, Order] = {
    "o-1001": {"id": "o-1001", "customer": "c-7", "amount": 59.9, "days_since_delivery": 12},
    "o-1002": {"id": "o-1002", "customer": "c-9", "amount": 19.5, "days_since_delivery": 45},
}


@tool(pure=True)
def get_order(order_id: str) -> Order:
    """Look an order up by id."""
    return ORDERS[order_id]


@tool(pure=True, outcomes=["eligible", "ineligible"])
def check_eligibility(order: Order) -> Outcome:
    """An order delivered in the last 30 days may be refunded."""
    if order["days_since_delivery"] <= 30:
        return Outcome("eligible", order)
    return Outcome("ineligible", {"order_id": order["id"], "why": "delivered over 30 days ago"})


def above_50(arguments: dict[str, Any]) -> bool:
    """A refund above 50 needs a person."""
    return bool(arguments["amount"] > 50)


@tool(requires_approval=above_50)
def issue_refund(order_id: str, amount: float) -> Refund:
    """Refund an order (above 50, a person approves first)."""
    return {"refund_id": f"rf-{order_id}", "order_id": order_id, "amount": amount}


@tool
def notify(customer: str, message: str) -> str:
    """Send a customer a message; returns a status line."""
    return f"to {customer}: {message}"
