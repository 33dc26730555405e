"""The tools the property suite draws plans over (with obelisk.testing.plans).

Every kind a plan can meet: typed outputs (a pydantic model, a typed dict, an
integer, a string, a list), an ``Any`` parameter and output, a tool with declared
outcomes, a latent tool, optional parameters.  The function tools are async, so
:class:`~obelisk.testing.FakeTools` can tell calls with equal arguments apart by
start order (see its docstring); ``hash_seed_script`` imports this module by path.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

import obelisk


class Customer(BaseModel):
    id: str
    email: str
    score: int


@obelisk.tool
async def lookup(customer_id: str) -> Customer:
    """Look a customer up."""
    return Customer(id=customer_id, email="x@example.com", score=1)


@obelisk.tool
async def quote(customer: Customer, amount: float, note: str = "") -> dict[str, float]:
    """Price an order."""
    return {"total": amount}


@obelisk.tool
async def tally(items: list[Any], offset: int = 0) -> int:
    """Count items."""
    return len(items) + offset


@obelisk.tool
async def notify(to: str, body: Any = None) -> str:
    """Send a message."""
    return f"sent to {to}"


@obelisk.tool
async def relay(value: Any) -> Any:
    """Pass a value on."""
    return value


@obelisk.tool(outcomes=["small", "large"])
async def classify(amount: float) -> obelisk.Outcome:
    """Classify an amount."""
    return obelisk.Outcome("small" if amount < 10 else "large", amount)


WRITE = obelisk.Tool.from_schema(
    {
        "name": "write",
        "description": "A latent tool: the model writes a headline.",
        "parameters": {
            "type": "object",
            "properties": {"topic": {"type": "string"}},
            "required": ["topic"],
        },
        "output": {
            "type": "object",
            "properties": {"headline": {"type": "string"}, "words": {"type": "integer"}},
            "required": ["headline", "words"],
        },
    }
)

TOOLS = obelisk.Registry([lookup, quote, tally, notify, relay, classify, WRITE])
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer_id": {"type": "string"},
        "amount": {"type": "number"},
        "items": {"type": "array"},
    },
    "required": ["customer_id", "amount", "items"],
}
