"""Tools for test_process_isolation.py: they run in worker processes, which find them
by module and name (so they live in a module of their own)."""

from __future__ import annotations

import os

from obelisk import tool


@tool(isolation="process", timeout=0.3)
def spin(n: int) -> int:
    """Never returns: holds the GIL of its own process."""
    while True:
        n += 1


@tool(isolation="process")
def pid(n: int) -> int:
    """The id of the process it runs in."""
    return os.getpid()


@tool(isolation="process")
def crash(n: int) -> int:
    """Ends its own process."""
    os._exit(3)
