"""Tools of the payment example: a payment whose failure goes to an error arm.

``process_payment`` writes ``†state.receipt`` when it succeeds; when it raises,
the error object goes to the last alternative, ``†state.error`` (docs/language.md),
so exactly one of ``send_receipt`` and ``report_failure`` can run, and both may
write ``†state.notification`` without a conflict.
"""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from obelisk import tool


class Customer(TypedDict):
    id: str
    email: str


class Receipt(TypedDict):
    receipt_id: str
    amount: float
    currency: str


@tool
def get_customer(customer_id: str) -> Customer:
    """Look up a customer by id."""
    return {"id": customer_id, "email": f"{customer_id}@example.com"}


@tool(timeout=5.0)
def process_payment(customer: str, amount: float, currency: str = "EUR") -> Receipt:
    """Charge ``amount`` (in ``currency``) to a customer; raises when declined."""
    if amount <= 0:
        raise ValueError("amount must be positive")
    return {"receipt_id": f"r-{customer}", "amount": amount, "currency": currency}


@tool
def send_receipt(email: str, receipt: Receipt) -> str:
    """E-mail a receipt; returns a status line."""
    return f"sent {receipt['receipt_id']} to {email}"


@tool
def report_failure(error: dict[str, object]) -> str:
    """Record a failed payment; returns a status line."""
    return f"payment failed: {error}"
