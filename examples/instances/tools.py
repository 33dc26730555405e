"""Two ``_instance``s sharing one plan.

The price list has no instance, so both instances see it; each basket total and
receipt is written under its instance, so alice and bob never see each other's
``†state.total`` (docs/semantics.md).
"""

from __future__ import annotations

from obelisk import tool


@tool(pure=True)
def price_list() -> dict[str, float]:
    """Prices in euros by item."""
    return {"apple": 0.5, "bread": 2.25, "milk": 1.1}


@tool(pure=True)
def basket_total(items: list[str], prices: dict[str, float]) -> float:
    """Sum of the prices of items, in euros, rounded to cents."""
    return round(sum(prices[item] for item in items), 2)


@tool(pure=True)
def receipt(total: float) -> str:
    """Receipt line for a total in euros."""
    return f"total {total:.2f} EUR"
