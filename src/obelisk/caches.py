"""Caches with a bound in entries and in bytes (docs/limits.md, "Caches").

Every cache obelisk keeps for the life of the process (parsed expressions, paths,
compiled patterns, checked schemas) is a :class:`BoundedCache`, so that no stream of
distinct inputs can make it grow without bound.  This module imports nothing of
obelisk.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["BoundedCache"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A mapping that forgets: at most ``max_entries`` entries whose costs (bytes, as
    estimated by the caller of :meth:`put`) add up to at most ``max_bytes``.  An entry
    costing more than ``max_item_bytes`` (default ``max_bytes // 16``) is not kept at
    all; otherwise the oldest entries go first (first in, first out).

    ``get(key)`` is the ``dict.get`` of the entries (``None`` when absent), so a hit
    costs what a dict lookup costs.  Safe to share between threads: :meth:`put`
    holds a lock, ``get`` needs none.
    """

    __slots__ = (
        "_costs", "_data", "_lock", "bytes", "get", "max_bytes", "max_entries", "max_item_bytes"
    )  # fmt: skip

    def __init__(
        self, *, max_entries: int, max_bytes: int, max_item_bytes: int | None = None
    ) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.max_item_bytes = max_bytes // 16 if max_item_bytes is None else max_item_bytes
        self._data: OrderedDict[K, V] = OrderedDict()
        self._costs: dict[K, int] = {}
        self._lock = threading.Lock()
        self.bytes = 0  # the costs of the entries kept
        self.get: Callable[[K], V | None] = self._data.get

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def put(self, key: K, value: V, cost: int) -> None:
        """Keep ``value`` for ``key`` (``cost``: its bytes), dropping the oldest entries
        to stay within the bounds; an entry over ``max_item_bytes`` is not kept."""
        if cost > self.max_item_bytes:
            return
        with self._lock:
            old = self._costs.pop(key, None)
            if old is not None:
                self.bytes -= old
                del self._data[key]
            while self._data and (
                len(self._data) >= self.max_entries or self.bytes + cost > self.max_bytes
            ):
                oldest, _ = self._data.popitem(last=False)
                self.bytes -= self._costs.pop(oldest)
            self._data[key] = value
            self._costs[key] = cost
            self.bytes += cost

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._costs.clear()
            self.bytes = 0
