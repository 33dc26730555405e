""" "Did you mean" for an ``unresolved_reference`` (docs/diagnostics.md).

A path nothing writes and no document holds gets a suggestion: first a close path
that some call writes (``†state.custmer`` -> ``†state.customer``); else a close name
at the first segment that goes astray, the rest of the path kept (``†state.usr.id``
-> ``†state.user.id``, ``†input.userid`` -> ``†input.userId``), from the keys of the
document the reference reads and the fields calls write.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from obelisk.grammar import Field, Reference
from obelisk.interpreter.analysis.graph import Write

__all__ = ["ABSENT", "did_you_mean"]

ABSENT = object()
"""A document that was not given (no ``data`` of that kind), for :func:`did_you_mean`."""


def did_you_mean(
    reference: Reference, writes: Sequence[Sequence[Write]], document: Any = ABSENT
) -> str:
    """``"; did you mean †state.receipt?"`` for ``reference``, or ``""`` when nothing
    is close.  ``writes`` are the plan's writes per call (``PlanGraph.writes``);
    ``document`` is what the reference reads before the plan runs (the input, the
    starting state, a data document; :data:`ABSENT` when none was given)."""
    prefix = "†" + reference.kind
    wanted = str(reference)[len(prefix) :]
    known = sorted(
        {
            str(w.reference)[len(prefix) :]
            for of_call in writes
            for w in of_call
            if w.reference.kind == reference.kind
        }
        - {wanted}
    )
    close = difflib.get_close_matches(wanted, known, n=1, cutoff=0.8)
    if close:
        return f"; did you mean {prefix}{close[0]}?"
    fixed = _corrected(reference, writes, document)
    return f"; did you mean {fixed}?" if fixed is not None else ""


def _corrected(
    reference: Reference, writes: Sequence[Sequence[Write]], document: Any
) -> str | None:
    """``reference`` with its first unknown field name replaced by a close name known
    at that point of the path (a key of ``document``, or a field some call writes),
    the rest kept; None when no segment has a close known name."""
    kind = reference.kind
    written = [
        w.reference.key[1:] for of_call in writes for w in of_call if w.reference.kind == kind
    ]
    for position, wanted in enumerate(reference.key[1:]):
        names = _names_at(position, written, document, wanted)
        if wanted not in names:
            return _replaced(reference, position, names)
        document = _inside(document, wanted)
        written = [key for key in written if len(key) > position and key[position] == wanted]
    return None


def _names_at(
    position: int, written: list[tuple[object, ...]], document: Any, wanted: object
) -> set[object]:
    """The names known at ``position`` of a path: those the ``written`` keys (the rest
    of the path) have there, the keys of ``document`` (what the path reads there), and
    ``wanted`` when it is an index inside a list ``document``."""
    names = {key[position] for key in written if len(key) > position}
    if isinstance(document, dict):
        names.update(document)
    elif isinstance(document, list) and type(wanted) is int and wanted < len(document):
        names.add(wanted)
    return names


def _inside(document: Any, wanted: object) -> Any:
    """What ``document`` holds at key or index ``wanted``; :data:`ABSENT` when it is
    no object or list."""
    if isinstance(document, dict):
        return document.get(wanted, ABSENT)
    if isinstance(document, list) and type(wanted) is int:
        return document[wanted]
    return ABSENT


def _replaced(reference: Reference, position: int, names: set[object]) -> str | None:
    """``reference`` with the field at ``position`` replaced by the closest of
    ``names`` (difflib ratio >= 0.75), as text; None when it is no field or none is close."""
    segments = reference.segments
    segment = segments[position]
    if type(segment) is not Field:
        return None
    known = sorted(name for name in names if type(name) is str)
    close = difflib.get_close_matches(segment.name, known, n=1, cutoff=0.75)
    if not close:
        return None
    before, after = segments[:position], segments[position + 1 :]
    return "".join(("†", reference.kind, *map(str, before), str(Field(close[0])), *map(str, after)))
