"""State: an append-only write log with a materialized view for reads (docs/semantics.md).

Documents are addressed by kind: ``state`` and data kinds are writable, ``input``
is read-only.  Every write appends a :class:`WriteEntry` ``(seq, call, instance,
path, method, value, time)`` to the log, which is the audit trail; the view is
what reads see.  Instances: a write made under ``_instance: "a"`` goes to the
layer of ``a`` and is seen by calls of ``a`` only; a write with no instance goes
to the shared base, seen by all; a read prefers the most specific layer.

Reads through ``[*]`` use the jsonpath-ng expression compiled from the parsed
reference (:func:`obelisk.grammar.to_jsonpath`).  Plain paths are read and
written by walking the parsed segments directly: jsonpath-ng's
``update_or_create`` re-walks the whole document on every write, which made a
10,000-call run quadratic (3 ms per call, most of it in jsonpath-ng).  No text is
parsed twice either way.  Values are copied on the way in and out, so a tool
that mutates what it was given or returned cannot change the state behind the
log's back.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from pydantic_core import to_json

from obelisk.errors import StateWriteError
from obelisk.grammar import Field, Index, Reference, Segment, find
from obelisk.interpreter.plan.model import OutputMethod
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.json_values import copy_json, deep_merge, merge_into

__all__ = ["MISSING", "State", "log_text"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
"""Returned by :meth:`State.read` for a path that does not exist."""
_IMMUTABLE = (str, int, float, bool, type(None))


def _lookup(document: Any, reference: Reference) -> Any:
    """Value at the reference's path in ``document``, or MISSING; ``[*]`` yields a list."""
    found, value = find(document, reference)
    return value if found else MISSING


def _place(
    document: dict[str, Any] | list[Any], reference: Reference, value: Any, dry_run: bool = False
) -> None:
    """Put ``value`` at the reference's path, creating missing containers on the way.

    An index may name an existing item or the position just past the end (append).
    With ``dry_run`` nothing changes: the walk only raises :class:`StateWriteError`
    where the write would fail.
    """
    segments = reference.segments
    current: Any = document
    for position, segment in enumerate(segments):
        if not isinstance(segment, Field):
            current = _index_step(current, reference, position, value, dry_run)
            if current is _STOP:
                return
            continue
        if not isinstance(current, dict):
            raise StateWriteError(
                f"cannot write {reference}: {_where(reference, position)} "
                f"holds {type(current).__name__}, not an object"
            )
        if position == len(segments) - 1:
            if not dry_run:
                current[segment.name] = value
            return
        child = current.get(segment.name)
        if child is None:  # missing or null: create what the next segment needs
            if dry_run:
                return
            child = current[segment.name] = _container_for(segments[position + 1])
        current = child


_STOP: Any = object()  # _index_step's "the walk ends here"


def _index_step(
    current: Any, reference: Reference, position: int, value: Any, dry_run: bool
) -> Any:
    """One step of :func:`_place` through the index at ``position``: the item to go
    on into, or ``_STOP`` when the walk ends (``value`` written, or a dry run that
    would create the rest)."""
    segments = reference.segments
    segment = segments[position]
    assert isinstance(segment, Index)
    if not isinstance(current, list):
        raise StateWriteError(
            f"cannot write {reference}: {_where(reference, position)} "
            f"holds {type(current).__name__}, not a list"
        )
    last = position == len(segments) - 1
    index = segment.index
    if index == len(current):
        if dry_run:
            return _STOP
        current.append(value if last else _container_for(segments[position + 1]))
        return _STOP if last else current[index]
    if not -len(current) <= index < len(current):
        raise StateWriteError(
            f"cannot write {reference}: index {index} is out of range for a list of {len(current)}"
        )
    if last:
        if not dry_run:
            current[index] = value
        return _STOP
    if current[index] is None:
        if dry_run:
            return _STOP
        current[index] = _container_for(segments[position + 1])
    return current[index]


def _container_for(segment: Segment) -> dict[str, Any] | list[Any]:
    """A new, empty container that ``segment`` can step into."""
    return [] if isinstance(segment, Index) else {}


def _erase(document: Any, reference: Reference) -> None:
    parent = _lookup(document, Reference(reference.kind, reference.segments[:-1]))
    segment = reference.segments[-1]
    if isinstance(segment, Field) and isinstance(parent, dict):
        parent.pop(segment.name, None)
    elif (
        isinstance(segment, Index)
        and isinstance(parent, list)
        and -len(parent) <= segment.index < len(parent)
    ):
        del parent[segment.index]


def _apply(documents: dict[str, Any], reference: Reference, value: Any) -> None:
    """Put ``value`` (or erase, for ``_ERASED``) at ``reference`` in ``documents[kind]``."""
    kind = reference.kind
    if not reference.segments:
        if value is _ERASED:
            documents.pop(kind, None)
        else:
            documents[kind] = value
        return
    document = documents.get(kind, MISSING)
    if value is _ERASED:
        if document is not MISSING:
            _erase(document, reference)
        return
    if not isinstance(document, (dict, list)):
        document = documents[kind] = {}
    _place(document, reference, value)


def _where(reference: Reference, position: int) -> str:
    return str(Reference(reference.kind, reference.segments[:position]))


_ERASED: Any = object()


class _InPlace:
    """A ``push``, ``concat``, ``merge`` or ``assign`` onto a container the shared state
    holds, checked, to be applied in place (:meth:`apply`): a list grows by ``value``'s
    items, an object takes ``value``'s keys.  The accumulated value is never copied,
    so n such writes to one path take time and memory in proportion to what they
    write, not n times the value they build (docs/semantics.md)."""

    __slots__ = ("method", "target", "value")

    def __init__(self, method: OutputMethod, target: Any, value: Any) -> None:
        self.method, self.target, self.value = method, target, value

    def apply(self) -> None:
        if self.method == "merge":
            merge_into(self.target, self.value)
        elif self.method == "assign":
            self.target.update(self.value)
        else:
            self.target.extend(self.value)

    def result(self) -> Any:
        """The value the target would hold after the write, as a new object."""
        if self.method == "merge":
            return deep_merge(self.target, self.value)
        if self.method == "assign":
            return {**self.target, **self.value}
        return [*self.target, *self.value]


def _in_place(method: OutputMethod, current: Any, value: Any) -> _InPlace | None:
    """The write to apply in place onto ``current`` (what the shared state holds at
    the path, not a copy), or ``None`` when ``method`` has to build a new value."""
    if type(current) is list:
        if method == "push":
            return _InPlace(method, current, [value])
        if method == "concat" and isinstance(value, list):
            return _InPlace(method, current, value)
    elif type(current) is dict and isinstance(value, dict) and method in ("merge", "assign"):
        return _InPlace(method, current, value)
    return None


class State:
    """The documents a plan reads and writes, their instance layers and the write log.

    ``State(state=None, input=None, data=None)``: ``state`` is the state the run
    starts from (default ``{}``), ``input`` the read-only input, ``data`` maps other
    data kinds to their starting documents, ``inputs`` an instance's own input
    (read by that instance's calls instead of ``input``).  All are copied.

    An instance layer is the ordered list of what that instance wrote (the value
    each path was given, or its erasure).  The instance's view of a document is
    the shared base with those writes applied on top, so the most specific layer
    wins, a base write made later is still seen where the instance did not write,
    and an instance's erase hides the base value from that instance only.
    """

    def __init__(
        self,
        state: Mapping[str, Any] | None = None,
        input: Any = None,
        data: Mapping[str, Any] | None = None,
        *,
        inputs: Mapping[str, Any] | None = None,
    ) -> None:
        self._base: dict[str, Any] = {"state": copy_json(dict(state or {}))}
        self._inputs = {name: copy_json(value) for name, value in (inputs or {}).items()}
        for kind, document in (data or {}).items():
            self._base[kind] = copy_json(document)
        self._input = copy_json(input)
        self._layers: dict[str, list[tuple[Reference, Any]]] = {}
        self._views: dict[tuple[str, str], Any] = {}
        self.log: list[WriteEntry] = []

    def fork(self) -> State:
        """An independent copy: documents, instance layers, inputs and the write log
        so far (entries are immutable and shared).  Writes to either leave the other
        alone; the loop runs a turn on a fork so that a paused turn can start over."""
        twin = State.__new__(State)
        twin._base = {kind: copy_json(document) for kind, document in self._base.items()}
        twin._inputs = self._inputs  # read-only
        twin._input = self._input
        twin._layers = {name: list(ops) for name, ops in self._layers.items()}
        twin._views = {}
        twin.log = list(self.log)
        return twin

    # -- reads -----------------------------------------------------------------
    def _view(self, kind: str, instance: str | None) -> Any:
        """The document ``kind`` as ``instance`` sees it (not a copy: do not mutate)."""
        base = self._base.get(kind, MISSING)
        ops = self._layers.get(instance) if instance is not None else None
        if not ops or not any(reference.kind == kind for reference, _ in ops):
            return base
        assert instance is not None
        key = (instance, kind)
        if key not in self._views:
            documents = {kind: copy_json(base)}
            for reference, value in ops:
                if reference.kind == kind:
                    _apply(documents, reference, value)
            self._views[key] = documents.get(kind, MISSING)
        return self._views[key]

    def read(self, reference: Reference, instance: str | None = None) -> Any:
        """A copy of the value at ``reference`` as ``instance`` sees it, or :data:`MISSING`."""
        kind = reference.kind
        if kind == "input":
            own = self._inputs.get(instance) if instance is not None else None
            document = self._input if own is None else own
        elif instance is None:  # the shared layer: the base itself (see _view)
            document = self._base.get(kind, MISSING)
            if document is MISSING:
                return MISSING
        else:
            document = self._view(kind, instance)
            if document is MISSING:
                return MISSING
        found, value = find(document, reference)
        if not found:
            return MISSING
        return value if type(value) in _IMMUTABLE else copy_json(value)

    def deepest(self, reference: Reference, instance: str | None = None) -> tuple[int, Any]:
        """``(n, value)``: the first ``n`` segments of ``reference`` exist as ``instance``
        sees them, and ``value`` is there (*not* copied); ``(-1, MISSING)`` when the
        document itself is absent.  Explains why a read found nothing."""
        if reference.kind == "input":
            own = self._inputs.get(instance) if instance is not None else None
            document = self._input if own is None else own
        else:
            document = self._view(reference.kind, instance)
        if document is MISSING:
            return -1, MISSING
        current = document
        for depth, segment in enumerate(reference.segments):
            if isinstance(segment, Field) and isinstance(current, dict):
                if segment.name not in current:
                    return depth, current
                current = current[segment.name]
            elif isinstance(segment, Index) and isinstance(current, list):
                if not -len(current) <= segment.index < len(current):
                    return depth, current
                current = current[segment.index]
            else:
                return depth, current
        return len(reference.segments), current

    def peek(self, kind: str = "state", instance: str | None = None) -> Any:
        """The document ``kind`` as ``instance`` sees it, *not* copied: read it, never
        keep or mutate it (later writes change it).  ``None`` when absent."""
        value = self._view(kind, instance)
        return None if value is MISSING else value

    def document(self, kind: str = "state", instance: str | None = None) -> Any:
        """A copy of a whole document (``†state`` by default) as ``instance`` sees it."""
        value = self.read(Reference(kind), instance)
        return None if value is MISSING else value

    def hand_over(self) -> dict[str, Any]:
        """Every document as the shared layer sees it (``{"state": {...}, ...}``), *not*
        copied: for the caller that made this state and is done with it (a finished
        run), which saves copying a large state once more.  The state is empty after."""
        documents, self._base = self._base, {}
        self._views.clear()
        return documents

    @property
    def kinds(self) -> list[str]:
        """Writable document kinds present, ``"state"`` first."""
        return list(self._base)

    @property
    def instances(self) -> list[str]:
        """Instances that have a layer of their own, in order of first write."""
        return list(self._layers)

    # -- writes ----------------------------------------------------------------
    def check(
        self, reference: Reference, value: Any, method: OutputMethod, instance: str | None
    ) -> Any:
        """The value ``reference`` would hold after the write, without writing.

        Raises :class:`StateWriteError` when the write cannot be applied; used to
        make a call's writes all-or-nothing.
        """
        new = self._prepare(reference, value, method, instance)
        return new.result() if isinstance(new, _InPlace) else new

    def _prepare(
        self,
        reference: Reference,
        value: Any,
        method: OutputMethod,
        instance: str | None,
        walk: bool = True,
    ) -> Any:
        """:meth:`check`, except that a ``push`` or ``concat`` onto a list of the shared
        state, and a ``merge`` or ``assign`` of an object onto an object of the shared
        state, give an :class:`_InPlace`: applied in place, so n such writes to one path
        take linear time.
        ``walk=False`` skips the dry walk of the path: for a call's only write to the
        shared state, whose real walk fails before it changes anything, as the dry
        one would."""
        if reference.kind == "input":
            raise StateWriteError(f"cannot write {reference}: the input is read-only")
        if reference.has_wildcard:
            raise StateWriteError(f"cannot write through a wildcard: {reference}")
        document = self._view(reference.kind, instance)
        if method == "set":  # the only method that does not combine with what is there
            new = value
        else:
            current = _lookup(document, reference) if document is not MISSING else MISSING
            if instance is None:
                in_place = _in_place(method, current, value)
                if in_place is not None:
                    return in_place
            new = self._combine(reference, method, current, value)
        if walk and reference.segments and method != "erase" and isinstance(document, (dict, list)):
            _place(document, reference, new, dry_run=True)
        return new

    def write(
        self,
        reference: Reference,
        value: Any,
        method: OutputMethod = "set",
        *,
        call: int | None = None,
        instance: str | None = None,
    ) -> WriteEntry:
        """Apply one write and append it to the log; returns the entry.

        Methods (docs/language.md): ``set`` replaces; ``merge`` merges objects deeply;
        ``assign`` merges one level; ``push`` appends ``value`` to a list;
        ``concat`` appends the items of a list; ``erase`` removes the path.  Each
        combines with the value as ``instance`` sees it.  Raises
        :class:`StateWriteError` for ``†input``, for a wildcard, for ``push`` or
        ``concat`` onto something that is not a list, and for a path through a
        value that is not a container.  A failed write changes nothing.
        """
        return self.write_many([(reference, value)], method, call=call, instance=instance)[0]

    def write_many(
        self,
        targets: list[tuple[Reference, Any]],
        method: OutputMethod = "set",
        *,
        call: int | None = None,
        instance: str | None = None,
        owned: bool = False,
        json: bytes | None = None,
    ) -> list[WriteEntry]:
        """Apply the writes of one call, all or nothing (docs/semantics.md: a failed call
        writes nothing): every target is checked before any is applied.  Raises
        :class:`StateWriteError` as :meth:`write` does.

        Each value is copied into the state, and once more into the log, which never
        shares objects with the state.  ``owned=True`` says the values are fresh, plain
        JSON data nothing else holds (the engine's converted tool results): the state
        keeps each as it is, without the first copy (a value given for several targets
        is copied for each target after the first).  With ``owned=True``, ``json`` may
        give the compact JSON text (``pydantic_core.to_json``) of the one value every
        target is given, made already (the engine measured the result's size on it):
        the log keeps that text instead of making it again."""
        # an instance's writes are only stored here and applied when read: walk them now
        walk = len(targets) > 1 or instance is not None
        if len(targets) == 1:  # the common case: nothing to keep track of between targets
            reference, value = targets[0]
            if not owned:
                value = copy_json(value)
            new = self._prepare(reference, value, method, instance, walk)
            return [self._store(reference, value, new, method, call, instance, owned, json)]
        checked = []
        kept: set[int] = set()
        for reference, value in targets:
            # the text is the first value's, and so a copy's of it
            text = json if json is not None and value is targets[0][1] else None
            if not owned or id(value) in kept:
                value = copy_json(value)
            else:
                kept.add(id(value))
            prepared = self._prepare(reference, value, method, instance, walk)
            checked.append((reference, value, prepared, text))
        return [
            self._store(reference, value, new, method, call, instance, owned, text)
            for reference, value, new, text in checked
        ]

    def _store(
        self,
        reference: Reference,
        value: Any,
        new: Any,
        method: OutputMethod,
        call: int | None,
        instance: str | None,
        owned: bool,
        json: bytes | None = None,
    ) -> WriteEntry:
        """Apply one checked write (``new``, from :meth:`_prepare`) and log ``value``
        (``json``: its text, if made already); returns the log entry."""
        stored = _ERASED if method == "erase" else new
        if isinstance(stored, _InPlace):
            stored.apply()
        elif instance is None:
            _apply(self._base, reference, stored)
        else:
            # a set's value is the state's own already; a combined one may share the base
            layered = stored if method == "set" else copy_json(stored)
            self._layers.setdefault(instance, []).append((reference, layered))
        if self._views:
            self._views.clear()
        entry = self._entry(call, instance, str(reference), method, value, owned, json)
        self.log.append(entry)
        return entry

    def _entry(
        self,
        call: int | None,
        instance: str | None,
        path: str,
        method: OutputMethod,
        value: Any,
        owned: bool,
        json: bytes | None = None,
    ) -> WriteEntry:
        """The log entry of one write: it never shares objects with the state.  A
        scalar is shared as it is; an owned value (plain JSON data) is kept as compact
        JSON text (``json`` when given), decoded when first read; anything else is
        copied."""
        seq, at = len(self.log), time.time()
        if type(value) in _IMMUTABLE:
            return WriteEntry(seq, call, instance, path, method, value, at)
        if owned:
            if json is not None:
                return WriteEntry(seq, call, instance, path, method, time=at, json=json)
            try:
                json = log_text(value)
                return WriteEntry(seq, call, instance, path, method, time=at, json=json)
            except ValueError:  # not UTF-8 text (a lone surrogate): a copy instead
                pass
        return WriteEntry(seq, call, instance, path, method, copy_json(value), at)

    @staticmethod
    def _combine(reference: Reference, method: OutputMethod, current: Any, value: Any) -> Any:
        if method == "set" or method == "erase":
            return value
        if method == "merge":
            return deep_merge(current, value) if current is not MISSING else value
        if method == "assign":
            if isinstance(current, dict) and isinstance(value, dict):
                return {**current, **value}
            return value
        if current is MISSING:
            current = []
        if not isinstance(current, list):
            raise StateWriteError(
                f"cannot {method} onto {reference}: it holds {type(current).__name__}, not a list"
            )
        if method == "push":
            return [*current, value]
        if not isinstance(value, list):
            raise StateWriteError(f"cannot concat onto {reference}: the value is not a list")
        return [*current, *value]


def log_text(value: Any) -> bytes:
    """The compact JSON text (UTF-8 bytes) the write log keeps of ``value`` (JSON data;
    NaN and infinities become the constants ``NaN`` and ``Infinity``).  Raises
    ``ValueError`` when it has no UTF-8 text (a lone surrogate).  The engine makes it
    once, measuring a result's size, and hands it to :meth:`State.write_many`."""
    return to_json(value, inf_nan_mode="constants")
