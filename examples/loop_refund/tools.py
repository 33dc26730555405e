"""Tools of the loop_refund example: a refund kept on the happy path.

The scripted model (``transcript.jsonl``) plans the whole refund in one lazy
turn: look the order up, check that it may be refunded, issue the refund, and
answer with a confirmation read from the state.  ``check_eligibility`` picks its
output alternative (``†state.eligible || †state.ineligible``, docs/language.md), and
``issue_refund`` reads ``†state.eligible``, so an order that may not be refunded
skips the refund instead of issuing it::

    obelisk loop --model scripted:examples/loop_refund/transcript.jsonl --mode lazy \\
        --tools examples/loop_refund/tools.py --input examples/loop_refund/input.json
"""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from obelisk import Outcome, tool

REFUND_WINDOW_DAYS = 30


class Order(TypedDict):
    id: str
    customer: str
    amount: float
    currency: str
    status: str
    days_since_delivery: int


class Refund(TypedDict):
    refund_id: str
    order_id: str
    amount: float
    currency: str
    reason: str


ORDERS: dict[str, Order] = {
    "o-1001": {
        "id": "o-1001",
        "customer": "c-7",
        "amount": 59.9,
        "currency": "EUR",
        "status": "delivered",
        "days_since_delivery": 12,
    },
    "o-1002": {
        "id": "o-1002",
        "customer": "c-7",
        "amount": 120.0,
        "currency": "EUR",
        "status": "delivered",
        "days_since_delivery": 45,
    },
}


@tool(pure=True)
def get_order(order_id: str) -> Order:
    """Look an order up by id; raises KeyError for an unknown order."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id!r}")
    return ORDERS[order_id]


@tool(pure=True, outcomes=("eligible", "ineligible"))
def check_eligibility(order: Order) -> Outcome:
    """Whether a delivered order is within the refund window.

    Eligible: writes the order to the first alternative; otherwise writes the
    reason to the second (``ineligible``)."""
    if order["status"] != "delivered":
        return Outcome("ineligible", f"order {order['id']} is {order['status']}")
    if order["days_since_delivery"] > REFUND_WINDOW_DAYS:
        return Outcome(
            "ineligible",
            f"order {order['id']} was delivered {order['days_since_delivery']} days ago "
            f"(the window is {REFUND_WINDOW_DAYS} days)",
        )
    return Outcome("eligible", order)


@tool
def issue_refund(order_id: str, amount: float, currency: str, reason: str) -> Refund:
    """Refund an order in full; returns the refund record."""
    return {
        "refund_id": f"rf-{order_id}",
        "order_id": order_id,
        "amount": amount,
        "currency": currency,
        "reason": reason,
    }
