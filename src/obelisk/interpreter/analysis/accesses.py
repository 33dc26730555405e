"""What each call of a plan reads and may write, and which writes can feed each read
(docs/semantics.md): the accesses a :class:`~obelisk.interpreter.analysis.graph.PlanGraph`
draws its dependency edges from.

A read sees a write when their paths overlap (a :class:`PathIndex` query) and the
write is visible to the reader's instance (a write under ``_instance: "a"`` is seen
by instance ``a`` only; a write with no instance by every call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from obelisk.grammar import Alternatives, Escaped, Reference
from obelisk.interpreter.analysis.path_index import PathIndex
from obelisk.interpreter.plan.model import ArgumentExpression, Call

__all__ = ["Read", "Sources", "Write", "reads_of", "writes_of"]


class Read(NamedTuple):
    """One reference a call reads.

    ``required`` is False for the options of a ``||`` fallback (a missing option
    does not skip the call); a read through ``[*]`` is required (its list or object
    must exist; it may be empty); ``option`` is the position of the fallback
    option it belongs to (0 when there is no ``||``); ``key`` is the path as a
    plain tuple (:attr:`~obelisk.grammar.Reference.key`).
    """

    call: int
    reference: Reference
    argument: ArgumentExpression
    required: bool
    option: int

    @property
    def key(self) -> tuple[object, ...]:
        """The reference's :attr:`~obelisk.grammar.Reference.key` (not a field: a
        graph holds a read per reference of a plan, 16 bytes less each)."""
        return self.reference.key


class Write(NamedTuple):
    """One path a call may write: alternative ``alternative`` of ``alternatives``."""

    call: int
    reference: Reference
    alternative: int
    alternatives: int
    instance: str | None

    @property
    def key(self) -> tuple[object, ...]:
        """The reference's :attr:`~obelisk.grammar.Reference.key`, as for :class:`Read`."""
        return self.reference.key


_new_tuple = tuple.__new__  # a NamedTuple without its Python-level __new__: graphs make many


def reads_of(call: Call) -> tuple[Read, ...]:
    """Every reference ``call`` reads, in the order of its argument expressions (a
    tuple: a graph keeps one per call, a list would cost a second block)."""
    reads: list[Read] = []
    index = call.index
    for argument in call.expressions:
        node = argument.expression
        if type(node) is Reference:  # the common case: one plain reference
            reads.append(_new_tuple(Read, (index, node, argument, True, 0)))
            continue
        if isinstance(node, Escaped):
            continue
        options = node.options if isinstance(node, Alternatives) else (node,)
        required = len(options) == 1  # the options of a fallback are not required
        for position, option in enumerate(options):
            for ref in option.references:
                reads.append(_new_tuple(Read, (index, ref, argument, required, position)))
    return tuple(reads)


def writes_of(call: Call) -> tuple[Write, ...]:
    """Every path ``call`` may write: each target of each alternative of its output."""
    # call.outputs are the alternatives (worked out when parsing) unless left empty
    alternatives = call.outputs if call.target is not None and call.outputs else call.alternatives
    count = len(alternatives)
    index, instance = call.index, call.instance
    if count == 1 and len(alternatives[0]) == 1:  # the common case: one output path
        ref = alternatives[0][0]
        return (_new_tuple(Write, (index, ref, 0, 1, instance)),)
    return tuple(
        _new_tuple(Write, (index, ref, position, count, instance))
        for position, targets in enumerate(alternatives)
        for ref in targets
    )


class Sources:
    """The writes that can feed each read of a call, and the call's predecessors by data.

    Reads of one path in one instance share one tuple of sources and one set of
    the calls behind them (N readers of ``†state.items[*]`` after N writers hold
    one tuple of N writes, not N of them); a call's predecessors are that shared
    set when it is all it reads, and are only copied when something is added."""

    __slots__ = ("_alone", "_overlapping", "_seen", "_writes")

    def __init__(
        self, index: PathIndex[Write], writes: Sequence[tuple[Write, ...]] | None = None
    ) -> None:
        self._overlapping = index.overlapping
        # (write,) per write, by id: shared by every read it alone feeds, fewer objects
        # for the garbage collector to walk (every write stays alive in PlanGraph.writes);
        # the writes of its call (``writes``, each call's) when that is the only one
        self._alone: dict[int, tuple[Write, ...]] = {}
        self._writes = writes
        # (key, instance) -> the writes a read of key sees there, and their calls
        self._seen: dict[
            tuple[tuple[object, ...], str | None], tuple[tuple[Write, ...], frozenset[int]]
        ] = {}

    def of_call(
        self, call: Call, reads: tuple[Read, ...]
    ) -> tuple[tuple[tuple[Write, ...], ...], set[int] | frozenset[int]]:
        """The sources of each of ``reads`` (``call``'s), and the calls behind them."""
        overlapping, alone = self._overlapping, self._alone
        sources_of_call: list[tuple[Write, ...]] = []
        me, instance = call.index, call.instance
        mine: set[int] = set()
        shared: list[frozenset[int]] = []
        for read in reads:
            hits = overlapping(read.reference.key)
            if len(hits) == 1:  # the common case: one writer, without a generator
                write = hits[0]
                if write.call != me and (write.instance is None or write.instance == instance):
                    only = alone.get(id(write)) or self._alone_of(write)
                    sources_of_call.append(only)
                    mine.add(write.call)
                else:
                    sources_of_call.append(())
                continue
            found, writers = self._visible(read.reference.key, instance, me, hits)
            sources_of_call.append(found)
            shared.append(writers)
        if not mine and len(shared) == 1:  # shared with every call reading the same
            return tuple(sources_of_call), shared[0]
        return tuple(sources_of_call), mine.union(*shared)

    def _alone_of(self, write: Write) -> tuple[Write, ...]:
        """``(write,)``, shared: its call's writes when it is the only one."""
        writes = self._writes
        own = writes[write.call] if writes is not None else ()
        only = self._alone[id(write)] = own if len(own) == 1 else (write,)
        return only

    def _visible(
        self, key: tuple[object, ...], instance: str | None, me: int, hits: list[Write]
    ) -> tuple[tuple[Write, ...], frozenset[int]]:
        """The writes of ``hits`` that a read of ``key`` in ``instance`` sees (shared by
        every such read), without call ``me``'s own, and the calls behind them."""
        known = self._seen.get((key, instance))
        if known is None:
            visible = tuple(w for w in hits if w.instance is None or w.instance == instance)
            known = self._seen[(key, instance)] = (visible, frozenset(w.call for w in visible))
        found, writers = known
        if me in writers:  # rare: a call reading what it writes
            return tuple(w for w in found if w.call != me), writers - {me}
        return found, writers
