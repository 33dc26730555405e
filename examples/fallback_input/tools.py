"""A ``||`` fallback input: the nickname when there is one, else the name."""

from __future__ import annotations

from obelisk import tool


@tool(pure=True)
def greet(name: str) -> str:
    """A greeting for name."""
    return f"Hello, {name}!"
