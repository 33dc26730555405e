"""Evaluating a call's expressions against the state, and why a call is skipped.

docs/language.md in input position: ``a || b`` is a fallback (the first that
exists), ``a && b`` a gate (all must exist; the value is the last), ``[*]``
yields a list; existence, not truthiness, decides.  docs/semantics.md: a call whose
required read does not exist is skipped, and the reason names the path and the
call that did not write it.
"""

from __future__ import annotations

from typing import Any

from obelisk.grammar import Conjunction, Escaped, Expression, Field, Index, Reference
from obelisk.interpreter.analysis.graph import PlanGraph, Write
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.state import MISSING, State
from obelisk.json_values import copy_json

__all__ = ["evaluate", "explain_skip", "resolve_arguments"]

Path = tuple[str | int, ...]


def resolve_arguments(
    call: Call, state: State
) -> tuple[dict[str, Any] | None, list[Reference] | None]:
    """``(arguments with every expression evaluated, None)``, or ``(None, missing)``
    where ``missing`` lists the references that did not exist."""
    values: dict[Path, Any] = {}
    instance = call.instance
    for argument in call.expressions:
        node = argument.expression
        if type(node) is Reference:  # the common case: what evaluate does, without a tuple
            value = state.read(node, instance)
            if value is MISSING:
                return None, [node]
        elif isinstance(node, Escaped):
            value = str(node)
        else:
            value, missing = evaluate(node, state, instance)
            if missing is not None:
                return None, missing
        values[argument.path] = value
    nested: set[str | int] | None = None  # arguments with expressions inside: found when needed
    arguments: dict[str, Any] = {}
    for name, value in call.arguments.items():
        whole = (name,)
        if whole in values:  # the common case: the argument is one expression
            arguments[name] = values[whole]
            continue
        if nested is None:
            nested = {path[0] for path in values if len(path) > 1}
        if name in nested:
            arguments[name] = _substitute(value, values, whole)
        else:  # a literal: the call's own copy
            arguments[name] = copy_json(value) if isinstance(value, (dict, list)) else value
    return arguments, None


def evaluate(
    node: Expression, state: State, instance: str | None
) -> tuple[Any, list[Reference] | None]:
    """``(value, None)``, or ``(None, missing references)`` when the expression has no value."""
    if isinstance(node, Reference):
        value = state.read(node, instance)
        return (None, [node]) if value is MISSING else (value, None)
    if isinstance(node, Conjunction):
        value = None
        for part in node.parts:
            value = state.read(part, instance)
            if value is MISSING:
                return None, [part]
        return value, None
    missing: list[Reference] = []
    for option in node.options:
        value, absent = evaluate(option, state, instance)
        if absent is None:
            return value, None
        missing.extend(absent)
    return None, missing


_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}


def _shape(value: Any) -> str:
    return _KINDS.get(type(value), "a number" if isinstance(value, (int, float)) else "a value")


def _where_it_stops(reference: Reference, state: State, instance: str | None) -> str | None:
    """Why a path that partly exists stops short: an index past the end of a list,
    or a step into something that is not a container; ``None`` otherwise."""
    depth, value = state.deepest(reference, instance)
    if depth < 1 or depth >= len(reference.segments):
        return None  # the document itself is missing or not a container: no path to show
    segment = reference.segments[depth]
    prefix = Reference(reference.kind, reference.segments[:depth])
    if isinstance(segment, Index) and isinstance(value, list):
        if not value:
            return f"{reference}: {prefix} is an empty list"
        count = len(value)
        return f"{reference}: {prefix} has {count} item{'s' if count != 1 else ''}"
    if isinstance(segment, Field) and not isinstance(value, dict):
        return f"{reference}: {prefix} is {_shape(value)}, which has no field '{segment.name}'"
    if isinstance(segment, Index) and not isinstance(value, list):
        return f"{reference}: {prefix} is {_shape(value)}, not a list"
    return None


def explain_skip(
    call: Call,
    missing: list[Reference],
    graph: PlanGraph,
    records: list[CallRecord],
    written: dict[int, list[str]],
    state: State | None = None,
) -> tuple[str, bool]:
    """Why ``call`` is skipped, one reason per missing reference, e.g.
    ``†state.receipt was not written: #0 processPayment wrote †state.error`` or
    ``†state.flights[0]: †state.flights is an empty list`` (docs/semantics.md).

    Returns ``(reason, untaken)``: ``untaken`` is true when the missing reads are
    alternatives their writers did not take (directly, or through calls skipped for
    that reason), the normal way a plan branches; a fallback's path that no call
    writes does not change that.  Otherwise a read the call needs did not exist,
    and the run is ``partial``.
    """
    reasons = []
    taken_elsewhere, needed = False, False
    for reference in missing:
        found = _Writers(call, reference, graph, records, written)
        stops = None
        if found.settled_well and state is not None:
            stops = _where_it_stops(reference, state, call.instance)
        # a path no call writes is neutral: only a fallback can read one (the check
        # refuses it elsewhere), and the fallback's first choice decides
        taken_elsewhere = taken_elsewhere or found.branch
        needed = needed or found.other_reason or stops is not None
        if stops is not None:
            reasons.append(stops)
        elif found.texts:
            reasons.append(f"{reference} was not written: {'; '.join(found.texts)}")
        elif reference.kind == "input":
            reasons.append(f"{reference} is not in the input")
        else:
            reasons.append(f"{reference} does not exist and no call writes it")
    return "; ".join(reasons), taken_elsewhere and not needed


class _Writers:
    """What the calls that may write a missing ``reference`` of ``call`` did:
    ``texts``, one line per writer (no repeats); ``settled_well``, every writer
    succeeded (the shape of what is there explains the gap); ``branch``, some writer
    took another alternative; ``other_reason``, some writer failed or wrote its
    value elsewhere."""

    __slots__ = ("branch", "other_reason", "settled_well", "texts")

    def __init__(
        self,
        call: Call,
        reference: Reference,
        graph: PlanGraph,
        records: list[CallRecord],
        written: dict[int, list[str]],
    ) -> None:
        self.texts: list[str] = []
        self.settled_well = True
        self.branch = False
        self.other_reason = False
        for read, sources in zip(graph.reads[call.index], graph.sources[call.index], strict=True):
            if read.reference is not reference:
                continue
            for source in sources:
                writer = records[source.call]
                text = self._about(writer, source, written)
                self.settled_well = self.settled_well and writer.status == "succeeded"
                if text not in self.texts:
                    self.texts.append(text)

    def _about(self, writer: CallRecord, source: Write, written: dict[int, list[str]]) -> str:
        """One writer's line, noting whether it branched or has another reason."""
        status = writer.status
        if status == "succeeded":
            wrote = written.get(source.call) or []
            what = " and ".join(wrote) if wrote else "nothing"
            if source.alternatives > 1 and wrote and str(source.reference) not in wrote:
                self.branch = True
            else:
                self.other_reason = True
            return f"{writer.label} wrote {what}"
        if status == "skipped" and writer.untaken:
            self.branch = True
            return f"{writer.label} was skipped"
        if status == "pending_latent":
            return f"{writer.label} is a latent call still pending"
        self.other_reason = True
        if status == "invalid_output":  # its tool ran; its value was not written
            return f"{writer.label} invalid_output (it ran; its output did not fit)"
        return f"{writer.label} {status.replace('skipped', 'was skipped')}"


def _substitute(
    value: Any, values: dict[tuple[str | int, ...], Any], path: tuple[str | int, ...]
) -> Any:
    """A copy of ``value`` with the evaluated expressions put in at their paths."""
    if path in values:
        return values[path]
    if isinstance(value, dict):
        return {key: _substitute(item, values, (*path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, values, (*path, i)) for i, item in enumerate(value)]
    return value
