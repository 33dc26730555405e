"""Tools of the specification's "planning one step ahead" refund (issue 27).

``checkBillingHistory`` reads the billing world resource and ``issueRefund``
writes it, so in step mode the refund waits for a turn in which the model has
seen the history (docs/tools.md, "effects").  ``REFUNDS`` counts the refunds
issued, which must be one however the plan is carried.
"""

from __future__ import annotations

from typing import Any

from obelisk import tool

REFUNDS: list[dict[str, Any]] = []


@tool(effects={"billing": "read"})
def checkBillingHistory(customerId: str) -> dict[str, Any]:
    """The customer's billing history: payments and chargebacks."""
    return {"customerId": customerId, "chargeback": True, "payments": 3}


@tool(effects={"billing": "write"})
def issueRefund(customerId: str, amount: float) -> dict[str, Any]:
    """Refund ``amount`` to the customer (a side effect)."""
    refund = {"refundId": f"rf-{len(REFUNDS) + 1}", "customerId": customerId, "amount": amount}
    REFUNDS.append(refund)
    return refund
