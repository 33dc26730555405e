"""Order-only edges between calls whose world effects conflict (docs/semantics.md,
"World effects").

Two calls conflict when they touch overlapping resources (dotted names, overlapping
by prefix, and paths inside them: ``files:notes/a.txt``, see
:mod:`~obelisk.interpreter.tools.effects`) and one of them writes.  Conflicting
calls run in plan order, unless the dependencies found so far already order them the
other way.

Comparing every call with every earlier one that touched an overlapping resource
gives a quadratic number of edges (8,000 writers of one resource: 32 million), and
each edge is implied by the others.  Instead, each resource keeps its *frontier*,
the accesses no later access has been ordered after yet: the last writers and the
readers since.  A write waits for the frontier of every overlapping resource and
becomes the frontier of its own (and of every resource below it); a read waits for
the writers only and joins the readers.  The order this gives, followed edge after
edge, is the order of every pair of conflicting calls; an access that a dependency
orders the other way stays in the frontier, so nothing after it is left unordered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from obelisk.interpreter.tools.effects import resource_parts, resources_overlap

__all__ = ["WorldOrder"]


@dataclass(slots=True, eq=False)
class _Resource:
    """One dotted name's node: its frontier, and the names below it."""

    name: str = ""  # the dotted name
    children: dict[str, _Resource] = field(default_factory=dict)
    writers: list[int] = field(default_factory=list)  # calls, in plan order
    readers: list[int] = field(default_factory=list)  # reads since the writers
    # readers of an ancestor already ordered before this node's writers:
    # id(ancestor) -> (ancestor's epoch, how many of its readers)
    seen: dict[int, tuple[int, int]] = field(default_factory=dict)
    epoch: int = 0  # counts the times ``readers`` started again


def _overlap(name: str, other: str) -> bool:
    """Resources overlap when one is the other or lies below it (part by part:
    ``files`` and ``files:a/b``, ``slack`` and ``slack.users``)."""
    if ":" not in name and ":" not in other:  # dotted names alone: the common case
        shorter, longer = (name, other) if len(name) <= len(other) else (other, name)
        return longer == shorter or longer.startswith(shorter + ".")
    return resources_overlap(name, other)


def _child_name(parent: str, part: str) -> str:
    """The name of the resource ``part`` below ``parent`` (parts of
    :func:`resource_parts`: a path part starts with ``/``)."""
    if not parent:
        return part
    if not part.startswith("/"):
        return f"{parent}.{part}"
    return f"{parent}{'/' if ':' in parent else ':'}{part[1:]}"


class WorldOrder:
    """The order-only edges of the world effects of a plan, call by call.

    ``add(call, resource, access, reaches)`` takes the calls in plan order (one
    call's effects one after the other) and returns the edges ``(earlier, label)``
    that order ``call`` after the earlier calls it conflicts with; ``label`` names
    the resource (``"slack.users"``, or ``"slack / slack.users"`` when they differ).
    ``reaches(call, earlier)`` tells whether the dependencies found so far already
    order ``call`` before ``earlier``: no edge then, and ``earlier`` stays in the
    frontier.  The number of edges and the work grow about linearly with the calls
    when they touch a bounded number of distinct resources.
    """

    __slots__ = ("_covered", "_root")

    def __init__(self) -> None:
        self._root = _Resource()
        # a write -> the accesses it was ordered after (call, name touched, a write):
        # what it took the place of in the frontier, for a later call it cannot precede
        self._covered: dict[int, list[tuple[int, str, bool]]] = {}

    def add(
        self, call: int, resource: str, access: str, reaches: Callable[[int, int], bool]
    ) -> list[tuple[int, str]]:
        path = self._path(resource)
        node = path[-1]
        writing = access == "write"
        edges: list[tuple[int, str]] = []
        waited: list[tuple[int, str, bool]] = []
        done: set[tuple[int, str, bool]] = set()  # (earlier, name touched, it writes)
        ordered: set[int] = set()  # the calls of ``edges``
        skipped: set[int] = set()  # earlier calls a dependency orders after this one
        kept: list[int] = []  # readers of an ancestor among them
        covered = self._covered

        def wait_for(earlier: int, theirs: str, writes: bool = True) -> bool:
            """Order ``call`` after ``earlier`` (which touched ``theirs``); False when a
            dependency orders them the other way (no edge: ``earlier`` stays in the
            frontier, and what it took the place of there is waited for instead)."""
            stack = [(earlier, theirs, writes)]
            while stack:  # more than one only where a dependency runs against plan order
                access = before, name, wrote = stack.pop()
                if (
                    before == call
                    or access in done
                    or not (wrote or writing)  # two reads never conflict
                    or not _overlap(name, resource)
                ):
                    continue
                done.add(access)
                if before not in ordered and (before in skipped or reaches(call, before)):
                    if before not in skipped:
                        skipped.add(before)
                        stack.extend(covered.get(before, ()))
                    continue
                if before not in ordered:
                    ordered.add(before)
                    edges.append((before, resource if name == resource else f"{name} / {resource}"))
                waited.append(access)
            return earlier not in skipped

        for ancestor in path[:-1]:  # resources this one lies below
            for earlier in ancestor.writers:
                wait_for(earlier, ancestor.name)
            if writing and ancestor.readers:
                epoch, count = node.seen.get(id(ancestor), (-1, 0))
                start = count if epoch == ancestor.epoch else 0
                kept.extend(
                    e for e in ancestor.readers[start:] if not wait_for(e, ancestor.name, False)
                )
        for below in self._subtree(node):  # this resource and those below it
            for earlier in below.writers:
                wait_for(earlier, below.name)
            if writing:
                for earlier in below.readers:
                    wait_for(earlier, below.name, False)
        if writing:
            covered.setdefault(call, []).extend(waited)
            self._written(call, path, skipped, kept)
        else:
            node.readers.append(call)
        return edges

    def _path(self, resource: str) -> list[_Resource]:
        """The nodes from the top name down to ``resource`` (made when missing)."""
        node, path = self._root, []
        parts = resource.split(".") if ":" not in resource else resource_parts(resource)
        for part in parts:
            child = node.children.get(part)
            if child is None:
                child = node.children[part] = _Resource(_child_name(node.name, part))
            path.append(child)
            node = child
        return path

    def _subtree(self, node: _Resource) -> Iterator[_Resource]:
        stack = [node]
        while stack:
            item = stack.pop()
            yield item
            stack.extend(item.children.values())

    def _written(
        self, call: int, path: list[_Resource], skipped: set[int], kept: list[int]
    ) -> None:
        """``call`` wrote the last node of ``path``: it is that node's frontier now.
        Everything that touched this resource or one below it is ordered before
        ``call``, except the calls in ``skipped`` (a dependency orders them after
        it), which stay where they were; ``kept`` are such readers of an ancestor,
        which this node's frontier takes over (the ancestor's readers already
        ordered before ``call`` are not visited again by the next write here)."""
        node = path[-1]
        node.writers = [call, *(e for e in node.writers if e in skipped)]
        node.readers = [*(e for e in node.readers if e in skipped), *kept]
        node.epoch += 1
        node.seen = {id(a): (a.epoch, len(a.readers)) for a in path[:-1] if a.readers}
        if skipped:
            self._keep_only(node, skipped)
        else:  # the common case: the names below are forgotten
            node.children.clear()

    def _keep_only(self, node: _Resource, skipped: set[int]) -> bool:
        """Below ``node``, keep only the accesses in ``skipped``; True when ``node``
        holds nothing then (so its parent drops it)."""
        for name, child in list(node.children.items()):
            child.writers = [e for e in child.writers if e in skipped]
            child.readers = [e for e in child.readers if e in skipped]
            child.epoch += 1
            if self._keep_only(child, skipped):
                del node.children[name]
        return not (node.writers or node.readers or node.children)
