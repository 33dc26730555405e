"""Tools of the loop_payment example: a payment fails and the model replans.

Turn 1 of ``transcript.jsonl`` charges the card with
``"_outputPath": "†state.receipt || †state.paymentError"``: ``chargeCard`` raises,
so the error object goes to the error arm, ``†state.paymentError`` (docs/language.md),
and the error record goes back to the model.  Turn 2 sees it in the state and
replans: ``reportFailure`` with ``†state.paymentError``, then the answer::

    obelisk loop --model scripted:examples/loop_payment/transcript.jsonl \\
        --tools examples/loop_payment/tools.py --input examples/loop_payment/input.json
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from obelisk import tool


class PaymentDeclined(Exception):
    """The card issuer refused the charge."""


class Receipt(TypedDict):
    receipt_id: str
    customer: str
    amount: float
    currency: str


class FailureReport(TypedDict):
    ticket: str
    customer: str
    summary: str


DECLINED_CARDS = {"4000-0000-0000-0002": "insufficient funds"}


@tool(timeout=5.0)
def chargeCard(customer: str, card: str, amount: float, currency: str = "EUR") -> Receipt:
    """Charge ``amount`` to a card; raises PaymentDeclined when the issuer refuses."""
    if card in DECLINED_CARDS:
        raise PaymentDeclined(f"card ending {card[-4:]} was declined: {DECLINED_CARDS[card]}")
    return {
        "receipt_id": f"r-{customer}-{card[-4:]}",
        "customer": customer,
        "amount": amount,
        "currency": currency,
    }


@tool
def reportFailure(customer: str, error: dict[str, Any]) -> FailureReport:
    """Open a support ticket for a failed payment; ``error`` is an error-arm object."""
    detail = error.get("error", error)
    return {
        "ticket": f"t-{customer}-{detail.get('call', 0)}",
        "customer": customer,
        "summary": f"{detail.get('type', 'Error')}: {detail.get('message', '')}",
    }
