"""Fan-out with ``&&``: one result written to two paths, read by two branches."""

from __future__ import annotations

from typing_extensions import TypedDict

from obelisk import tool


class Order(TypedDict):
    id: str
    total: float
    address: str


@tool(pure=True)
def load_order(order_id: str) -> Order:
    """Load an order (total in euros)."""
    return {"id": order_id, "total": 42.5, "address": "1 Rue de la Paix, Paris"}


@tool(pure=True)
def make_invoice(order: Order) -> str:
    """Invoice text for an order."""
    return f"invoice {order['id']}: {order['total']:.2f} EUR"


@tool(pure=True)
def make_label(order: Order) -> str:
    """Shipping label for an order."""
    return f"ship {order['id']} to {order['address']}"
