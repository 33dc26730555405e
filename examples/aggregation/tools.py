"""Aggregation: parallel calls ``push`` to one list, in plan order.

The three quotes finish in the order south, east, north (their delays), yet the
list holds them in plan order, north, south, east: writes to one path commit in
plan order whatever order the calls finish in (docs/semantics.md).
"""

from __future__ import annotations

import asyncio

from typing_extensions import TypedDict

from obelisk import tool

PRICES = {"north": 120.0, "south": 95.5, "east": 101.25}


class Quote(TypedDict):
    supplier: str
    price: float


@tool(pure=True)
async def quote(supplier: str, delay_ms: int = 0) -> Quote:
    """A supplier's price in euros, after a simulated network delay (milliseconds)."""
    await asyncio.sleep(delay_ms / 1000)
    return {"supplier": supplier, "price": PRICES[supplier]}


@tool(pure=True)
def cheapest(quotes: list[Quote]) -> Quote:
    """The lowest quote; raises ValueError for an empty list."""
    if not quotes:
        raise ValueError("no quotes")
    return min(quotes, key=lambda q: q["price"])
