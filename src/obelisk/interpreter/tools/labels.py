"""Labels on data: integrity and confidentiality, joined along the data flow
(docs/security.md, "The label model").

The pure algebra, shared by the run (which labels each value it writes) and by static
analysis (which joins labels over the plan's graph with the same functions):

- :class:`Source`: where untrusted (or restricted) data came from, a call
  (``#1 read_file``) or an input path (``†input.email_body``), and why;
- :class:`Label`: ``trust`` (``"trusted"`` or ``"untrusted"``), the ``sources`` that
  made it so, and ``readers`` (``None``: public, or a frozenset of names); the bottom
  of the lattice is :data:`TRUSTED` (trusted, public, no sources), and
  :meth:`Label.join` is the least upper bound (untrusted wins, sources unite, readers
  intersect);
- :class:`LabelMap`: labels per state path, a trie; a read joins the labels of the
  path's prefixes and of everything below it, so a label put on ``†state.mail.body``
  taints a read of ``†state.mail`` but not one of ``†state.mail.sender``;
- :class:`Labeled`: what a tool may return to label its result, or parts of it.

Paths are tuples ``(kind, *segments)``: ``("state", "mail", "body")``, an index an
``int``, ``[*]`` is ``...`` (it matches every key).  This module imports only the
grammar (to read a field path such as ``"items[0].text"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any, Literal

from obelisk.errors import UsageError
from obelisk.grammar import parse_reference

__all__ = [
    "TRUSTED",
    "UNTRUSTED",
    "Label",
    "LabelMap",
    "Labeled",
    "Path",
    "Source",
    "Trust",
    "join",
    "label_of",
    "relative_path",
    "sources_in_order",
]

Trust = Literal["trusted", "untrusted"]
"""Integrity: ``trusted`` (the user's request, trusted tools) or ``untrusted``."""
Path = tuple[str | int | EllipsisType, ...]
"""A state path: ``(kind, *segments)``; ``...`` stands for ``[*]``."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where labelled data came from: ``name`` is a call's label (``#1 read_file``)
    or an input path (``†input.email_body``); ``why`` says what it is (``"file
    content"``, the tool's description's first words, or ``"caller's label"``);
    ``call`` is the call's index (``None`` for an input)."""

    name: str
    why: str = ""
    call: int | None = None

    def __str__(self) -> str:
        return self.name

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "why", "call"}``."""
        return {"name": self.name, "why": self.why, "call": self.call}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Source:
        return cls(str(data["name"]), str(data.get("why", "")), data.get("call"))


@dataclass(frozen=True, slots=True)
class Label:
    """A value's label: ``trust``, its ``sources`` and its ``readers`` (``None``:
    public; a frozenset: only those names may see it).  Immutable; :meth:`join` is
    the lattice's join.  ``to_dict()`` gives ``{"trust", "sources": [...],
    "readers": "public" | [names]}`` (docs/security.md)."""

    trust: Trust = "trusted"
    sources: frozenset[Source] = field(default_factory=frozenset)
    readers: frozenset[str] | None = None
    bottom: bool = field(init=False, repr=False, compare=False)
    """Trusted, public and without sources: what an unlabelled value carries."""

    def __post_init__(self) -> None:
        bottom = self.trust == "trusted" and self.readers is None and not self.sources
        object.__setattr__(self, "bottom", bottom)

    @property
    def untrusted(self) -> bool:
        return self.trust == "untrusted"

    @property
    def public(self) -> bool:
        return self.readers is None

    def join(self, other: Label) -> Label:
        """The least upper bound: untrusted if either is, the sources of both, the
        readers both allow (intersection; public is everyone)."""
        if other.bottom or other is self:
            return self
        if self.bottom:
            return other
        trust: Trust = "untrusted" if self.untrusted or other.untrusted else "trusted"
        if self.readers is None:
            readers = other.readers
        elif other.readers is None:
            readers = self.readers
        else:
            readers = self.readers & other.readers
        return Label(trust, self.sources | other.sources, readers)

    def can_read(self, reader: str) -> bool:
        """Whether ``reader`` may see a value with this label."""
        return self.readers is None or reader in self.readers

    def endorsed(self) -> Label:
        """This label after a person vouched for the value: trusted, its readers kept."""
        return Label("trusted", frozenset(), self.readers)

    def describe(self) -> str:
        """``"untrusted: file content"``, ``"trusted"``, plus the readers when not
        public (``"trusted; readers: alice, bob"``)."""
        whys = sorted({s.why for s in self.sources if s.why})
        text = self.trust + (f": {', '.join(whys)}" if whys and self.untrusted else "")
        if self.readers is not None:
            text += f"; readers: {', '.join(sorted(self.readers)) or 'nobody'}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """``{"trust", "sources": [Source.to_dict()...], "readers": "public" | [...]}``."""
        if self.bottom:  # the common case, made without sorting anything
            return {"trust": "trusted", "sources": [], "readers": "public"}
        return {
            "trust": self.trust,
            "sources": [s.to_dict() for s in sorted(self.sources, key=_order)],
            "readers": "public" if self.readers is None else sorted(self.readers),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Label:
        """The label :meth:`to_dict` gave."""
        readers = data.get("readers", "public")
        return cls(
            "untrusted" if data.get("trust") == "untrusted" else "trusted",
            frozenset(Source.from_dict(s) for s in data.get("sources", ())),
            None if readers == "public" else frozenset(readers),
        )


def _order(source: Source) -> tuple[str, str]:
    return (source.name, source.why)


def sources_in_order(label: Label) -> list[Source]:
    """``label``'s sources sorted by name, then reason."""
    return sorted(label.sources, key=_order)


TRUSTED = Label()
"""The bottom label: trusted, public, no sources."""
UNTRUSTED = Label("untrusted")
"""Untrusted, public, no sources (a source is added where it is used)."""


def join(labels: Iterable[Label]) -> Label:
    """The join of ``labels`` (:data:`TRUSTED` for none)."""
    result = TRUSTED
    for label in labels:
        result = result.join(label)
    return result


def label_of(spec: Any, source: Source | None = None, what: str = "a label") -> Label:
    """``spec`` as a :class:`Label`: a Label, ``"trusted"``, ``"untrusted"``, or a
    mapping ``{"trust", "readers"}`` (readers a list of names or ``"public"``).
    ``source`` is added to an untrusted or restricted label that has none.  Raises
    :class:`~obelisk.errors.UsageError` naming ``what`` for anything else."""
    if isinstance(spec, Label):
        label = spec
    elif spec in ("trusted", "untrusted"):
        label = Label(spec)
    elif isinstance(spec, Mapping) and spec.get("trust", "trusted") in ("trusted", "untrusted"):
        readers = spec.get("readers", "public")
        if readers != "public" and (
            isinstance(readers, str) or not all(isinstance(r, str) for r in readers)
        ):
            raise UsageError(
                f"{what}: readers must be 'public' or a list of names, got {readers!r}"
            )
        label = Label(
            spec.get("trust", "trusted"),
            frozenset(),
            None if readers == "public" else frozenset(readers),
        )
    else:
        raise UsageError(
            f"{what} must be 'trusted', 'untrusted', an obelisk label or "
            f'{{"trust": ..., "readers": [...]}}, got {spec!r}'
        )
    if source is not None and not label.sources and not label.bottom:
        label = Label(label.trust, frozenset((source,)), label.readers)
    return label


def relative_path(text: Any, what: str = "a field path") -> Path:
    """A path inside a value: a tuple of keys and indexes as is, or text such as
    ``"body"``, ``"items[0].text"`` or ``""`` (the whole value).  Raises
    :class:`~obelisk.errors.UsageError` for text that is no path."""
    if isinstance(text, tuple):
        return text
    if not isinstance(text, str):
        raise UsageError(f"{what} must be text such as 'items[0].text', got {text!r}")
    if not text:
        return ()
    joined = f"†x{text}" if text.startswith("[") else f"†x.{text}"
    try:
        return parse_reference(joined).path
    except Exception:
        raise UsageError(f"{what} {text!r} is not a path such as 'items[0].text'") from None


@dataclass(frozen=True, slots=True)
class Labeled:
    """What a tool may return to label its result (docs/security.md): ``value`` is
    the result; ``trust`` the label of the whole (``None``: the tool's own
    ``output_trust``); ``readers`` the names who may see it (``None``: public);
    ``fields`` labels parts of it, ``{"body": "untrusted"}`` (paths relative to the
    value, see :func:`relative_path`; a label as :func:`label_of` takes it).

    >>> Labeled({"sender": "a@b.c", "body": "hi"}, fields={"body": "untrusted"}).value
    {'sender': 'a@b.c', 'body': 'hi'}
    """

    value: Any
    trust: Trust | None = None
    readers: Iterable[str] | None = None
    fields: Mapping[Any, Any] = field(default_factory=dict)

    def labels(self, own: Label, source: Source) -> list[tuple[Path, Label]]:
        """``[(relative path, label)]``: the whole value's first (``own`` unless
        ``trust`` or ``readers`` say otherwise), then each field's, each with
        ``source`` when it is not the bottom."""
        trust = own.trust if self.trust is None else self.trust
        readers = own.readers if self.readers is None else frozenset(self.readers)
        whole = label_of(Label(trust, frozenset(), readers), source, "Labeled.trust")
        found: list[tuple[Path, Label]] = [((), whole)]
        for path, spec in self.fields.items():
            where = f"the label of field {path!r}"
            found.append((relative_path(path, where), label_of(spec, source, where)))
        return found


class _Node:
    """One node of a :class:`LabelMap`'s trie: the label put exactly here, its
    children by segment, and the join of its subtree (``None``: to work out)."""

    __slots__ = ("children", "label", "subtree")

    def __init__(self) -> None:
        self.label: Label = TRUSTED
        self.children: dict[Any, _Node] = {}
        self.subtree: Label | None = TRUSTED

    def below(self) -> Label:
        """The join of every label in this subtree, cached until a write below."""
        if self.subtree is None:
            self.subtree = self.label.join(join(c.below() for c in self.children.values()))
        return self.subtree


class LabelMap:
    """Labels per path (docs/security.md, "Labels per path").

    :meth:`put` labels a path (``replace``: the write replaced what was there, so the
    labels below it go; otherwise the label joins what was there, as a merge or an
    append does); :meth:`read` is the label of what a read of a path sees: the join
    of the labels on its prefixes and below it (``...`` matches every key).
    Unlabelled paths are :data:`TRUSTED`.  Instances (``_instance``) are not told
    apart: a read joins every instance's labels, an over-approximation.
    """

    __slots__ = ("_root", "size")

    def __init__(self) -> None:
        self._root = _Node()
        self.size = 0

    def put(self, path: Path, label: Label, replace: bool = True) -> None:
        """Label ``path`` (see the class docstring)."""
        node, trail = self._root, [self._root]
        for segment in path:
            child = node.children.get(segment)
            if child is None:
                if label.bottom and replace:
                    return  # nothing labelled here yet (a prefix's label still holds)
                child = node.children[segment] = _Node()
            node = child
            trail.append(node)
        if replace:
            node.label, node.children = label, {}
        else:
            node.label = node.label.join(label)
        self.size += 1
        for visited in trail:
            visited.subtree = None

    def read(self, path: Path) -> Label:
        """The label a read of ``path`` sees."""
        if not self.size:
            return TRUSTED
        return self._read(self._root, path, 0, TRUSTED)

    def _read(self, node: _Node, path: Path, position: int, seen: Label) -> Label:
        seen = seen.join(node.label)
        if position == len(path):
            return seen.join(node.below())
        segment = path[position]
        if segment is ...:
            return join(self._read(c, path, position + 1, seen) for c in node.children.values())
        child = node.children.get(segment)
        return seen if child is None else self._read(child, path, position + 1, seen)

    def everything(self) -> Label:
        """The join of every label in the map (what a delegate reading the whole
        state sees)."""
        return self._root.below()

    def items(self) -> Iterator[tuple[Path, Label]]:
        """Every labelled path (not bottom) and its own label, depth first."""
        stack: list[tuple[Path, _Node]] = [((), self._root)]
        while stack:
            path, node = stack.pop()
            if not node.label.bottom:
                yield path, node.label
            stack.extend(((*path, k), c) for k, c in reversed(list(node.children.items())))
