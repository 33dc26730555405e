"""An index of written paths, for overlap queries in about linear time (docs/semantics.md).

Two paths overlap when one is a prefix of the other; ``[*]`` (and a negative
index, whose position is unknown until run time) overlaps every index, and
``[*]`` also every key, since it walks an object's values too; a negative index
never overlaps a key.  Instead
of comparing every read with every write, writes are stored in a trie keyed by
``(kind, segment, ...)`` and each query walks only the branch it names, plus the
subtree below its end.  The conflict finder (obelisk/interpreter/analysis/conflicts.py)
walks the same trie node by node (:meth:`PathIndex.matching`, :meth:`PathIndex.bottom_up`).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from obelisk.grammar import ANY_INDEX, WILDCARD

__all__ = ["Key", "PathIndex", "TrieNode"]


Key = tuple[object, ...]
T = TypeVar("T")
_POSITIONS = frozenset((ANY_INDEX, WILDCARD))  # key parts that stand for unknown positions


def _unique(found: list[T]) -> list[T]:
    """``found`` without repeats (the same item object), in order."""
    seen: set[int] = set()
    unique: list[T] = []
    for item in found:
        marker = id(item)
        if marker not in seen:
            seen.add(marker)
            unique.append(item)
    return unique


class TrieNode(Generic[T]):
    """One node of a :class:`PathIndex`: its children by key part, the items stored at
    its key, and (cached) the items below it.  Hashed by identity.  A plain slotted
    class, not a slotted dataclass: mypyc cannot build a generic one at import
    (benchmarks/compiled.py)."""

    __slots__ = ("below", "children", "items")

    def __init__(self) -> None:
        self.children: dict[object, TrieNode[T]] = {}
        self.items: list[T] = []
        self.below: tuple[T, ...] | None = None  # cached items of the subtree, self excluded

    def subtree(self) -> tuple[T, ...]:
        if self.below is None:
            collected: list[T] = []
            for child in self.children.values():
                collected.extend(child.items)
                collected.extend(child.subtree())
            self.below = tuple(collected)  # a leaf's is (), shared: no object per leaf
        return self.below


class PathIndex(Generic[T]):
    """A trie from path keys to items (for example the writes of a plan).

    ``add(key, item)`` stores an item; ``overlapping(key)`` yields every item
    whose key overlaps ``key``, each once, in insertion order of the nodes
    visited.  Adding after a query is allowed (caches are reset).  A query that
    walks more than one branch (``[*]``, a negative index) is answered once per
    key: N readers of ``†state.items[*]`` walk the N items once, not N times, and
    share one list, which callers must not change.
    """

    __slots__ = ("_answers", "_nested", "_root", "_some_position")

    def __init__(self) -> None:
        self._root: TrieNode[T] = TrieNode()
        self._answers: dict[Key, list[T]] = {}  # the many-branch queries answered so far
        self._some_position = False  # some stored key has ANY_INDEX or WILDCARD
        self._nested = False  # two items at one key, or one at a prefix of another's

    def add(self, key: Key, item: T) -> TrieNode[T]:
        """Store ``item`` at ``key``; returns the node of ``key``."""
        if self._answers:
            self._answers = {}
        node = self._root
        node.below = None
        for part in key:
            if node.items:  # an item at a prefix of key
                self._nested = True
            child = node.children.get(part)
            if child is None:
                child = node.children[part] = TrieNode()
                if part is ANY_INDEX or part is WILDCARD:
                    self._some_position = True
            node = child
            node.below = None
        if node.items or node.children:  # an item at key, or below it
            self._nested = True
        node.items.append(item)
        return node

    def overlapping(self, key: Key) -> list[T]:
        """Items whose key is a prefix of ``key``, or has ``key`` as a prefix.

        Each item comes once; items of shallower nodes come first.
        """
        if not self._some_position and _POSITIONS.isdisjoint(key):
            # the common case: one branch to follow, and each node is met once
            found: list[T] = []
            node = self._root
            for part in key:
                if node.items:  # most nodes on the way hold none
                    found.extend(node.items)
                child = node.children.get(part)
                if child is None:
                    return found
                node = child
            found.extend(node.items)
            if node.children:  # a leaf has nothing below
                found.extend(node.subtree())
            return found if len(found) < 2 else _unique(found)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self._overlapping(key)
        return answer

    def _overlapping(self, key: Key) -> list[T]:
        found: list[T] = []
        frontier = [self._root]
        for part in key:
            for node in frontier:
                found.extend(node.items)
            frontier = _step(frontier, part)
            if not frontier:
                break
        else:
            for node in frontier:
                found.extend(node.items)
            for node in frontier:
                found.extend(node.subtree())
        return found if len(found) < 2 else _unique(found)

    def matching(self, key: Key) -> tuple[list[TrieNode[T]], list[TrieNode[T]]]:
        """The nodes whose keys overlap ``key`` by prefix (every node on the way, the
        root left out), and those among them at its end (whose subtrees overlap it too)."""
        along: list[TrieNode[T]] = []
        if not self._some_position and _POSITIONS.isdisjoint(key):
            node = self._root  # the common case: one branch to follow
            for part in key:
                child = node.children.get(part)
                if child is None:
                    return along, []
                along.append(child)
                node = child
            return along, [node]
        frontier = [self._root]
        for part in key:
            frontier = _step(frontier, part)
            along.extend(frontier)
        return along, frontier

    def bottom_up(self) -> list[TrieNode[T]]:
        """Every node of the trie, children before their parents."""
        order: list[TrieNode[T]] = []
        stack = [self._root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children.values())
        order.reverse()
        return order

    def has_overlaps(self) -> bool:
        """True when some two items may overlap: two at one key, one at a prefix of
        another's key, or a key with a negative index or ``[*]``.  Noted by ``add``
        as items come: no walk, no query per item."""
        return self._nested or self._some_position

    def overlapping_writes(self, write: Any) -> list[T]:
        """Items overlapping the path of ``write`` (anything with a path ``key``)."""
        return self.overlapping(write.key)


def _step(frontier: list[TrieNode[T]], part: object) -> list[TrieNode[T]]:
    """The children of ``frontier`` whose key part overlaps ``part``: every child for
    ``[*]`` (it may also walk an object's values); every index for a negative index
    (any list position, never a key); for an index, the child of that index and the
    child of a negative index; else the child of that very part."""
    following: list[TrieNode[T]] = []
    for node in frontier:
        children = node.children
        if not children:
            continue
        if part is WILDCARD:
            following.extend(children.values())
            continue
        if part is ANY_INDEX:
            following.extend(c for k, c in children.items() if not isinstance(k, str))
            continue
        child = children.get(part)
        if child is not None:
            following.append(child)
        if isinstance(part, int):
            unknown = children.get(ANY_INDEX)
            if unknown is not None:
                following.append(unknown)
    return following
