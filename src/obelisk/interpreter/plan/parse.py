"""Parse plans: JSON in, a typed, parsed :class:`~obelisk.interpreter.plan.model.Plan` out.

:func:`parse_plan` accepts JSON text, UTF-8 bytes or an already-decoded value in
any of the three shapes of docs/language.md::

    [call, ...]
    {"mode": "eager" | "lazy", "calls": [call, ...]}
    {"type": "plan", "plan": [call, ...], "mode": ...}

Every string that starts with ``†`` anywhere inside a call's arguments (nested
objects and arrays too) is parsed as an expression, and so is ``_outputPath``.
Problems are collected, never raised one by one: JSON syntax, plan shape and
reference syntax errors all come back together in one
:class:`~obelisk.errors.PlanError`.  Unknown ``_meta`` keys are warnings, kept on
the plan and written back by :meth:`Plan.to_json`.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from obelisk.errors import Diagnostic, PlanError, ReferenceSyntaxError, sort_diagnostics
from obelisk.grammar import (
    DAGGER,
    Escaped,
    Expression,
    Wildcard,
    parse_expression,
)
from obelisk.interpreter.plan.model import (
    META_KEYS,
    OUTPUT_METHODS,
    ROUND_TRIP_KEYS,
    ArgumentExpression,
    Call,
    Plan,
    PlanMode,
    format_argument_path,
    new_call,
)

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "Collector",
    "PartialPlan",
    "gc_paused",
    "parse_call",
    "parse_partial",
    "parse_plan",
]


class Collector:
    """Collects the diagnostics of one plan: the ``fail()`` helper shared by the
    plan parser and the checker.  ``fail`` names the call (a :class:`Call`, or an
    index plus ``tool`` for a call that did not parse), so every diagnostic gets
    its ``#3 issueRefund`` label."""

    def __init__(self, diagnostics: Iterable[Diagnostic] = ()) -> None:
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.unparsed: dict[int, set[str]] = {}
        """Per call index, the top-level arguments holding an expression that did not parse."""

    def fail(
        self,
        code: str,
        message: str,
        call: Call | int | None = None,
        path: str | None = None,
        span: tuple[int, int] | None = None,
        source: str | None = None,
        *,
        tool: str | None = None,
        severity: Literal["error", "warning"] = "error",
    ) -> None:
        """Record one diagnostic: ``code`` and ``message`` (what was found and what
        was expected), the ``call`` it is about (``None`` for the whole plan), the
        argument ``path``, and the ``span`` inside ``source`` to put a caret under."""
        index = call.index if isinstance(call, Call) else call
        label = call.label if isinstance(call, Call) else None
        if label is None and index is not None:
            label = f"#{index} {tool}" if tool else f"#{index}"
        self.diagnostics.append(
            Diagnostic(code, severity, message, index, path, span, source, label)
        )


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a plan is parsed, analysed or set up.

    These stages allocate many small objects and no reference cycles; letting the
    collector walk the growing heap costs about a third of the time on large
    plans (benchmarks/check_throughput.py).  Reference counting still frees
    everything; the collector resumes, in its previous state, on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _decode(source: str | bytes | bytearray, out: Collector) -> Any:
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
        bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
        try:
            source = raw[bom:].decode("utf-8")
        except UnicodeDecodeError as exc:
            where = exc.start + bom
            out.fail("json_syntax", f"plan is not valid UTF-8: {exc.reason} at byte {where}")
            return None
    elif source.startswith("\ufeff"):
        source = source[1:]  # a byte-order mark decoded into the text
    try:
        return json.loads(source)
    except json.JSONDecodeError as exc:
        end = exc.pos + 1 if exc.pos < len(source) else exc.pos
        out.fail(
            "json_syntax",
            f"invalid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            span=(exc.pos, end),
            source=source,
        )
        return None
    except RecursionError:
        out.fail("json_syntax", "invalid JSON: nested too deeply to decode")
        return None


def _unwrap(data: Any, out: Collector) -> tuple[Any, PlanMode | None, str]:
    """Find the list of calls in one of the three plan shapes."""
    if isinstance(data, list):
        return data, None, "list"
    if not isinstance(data, dict):
        out.fail(
            "plan_shape",
            f"a plan must be an array of calls or an object with 'calls', found {_json_kind(data)}",
        )
        return None, None, "list"
    if data.get("type") == "plan" or "plan" in data:
        form, key, allowed = "message", "plan", {"type", "plan", "mode"}
        if data.get("type") != "plan":
            out.fail("plan_shape", 'a plan message must have "type": "plan"')
    else:
        form, key, allowed = "object", "calls", {"calls", "mode"}
    for name in data:
        if name not in allowed:
            expected = ", ".join(f"'{k}'" for k in sorted(allowed))
            out.fail("plan_shape", f"unexpected key '{name}' in the plan; expected {expected}")
    mode = data.get("mode")
    if mode is not None and mode not in ("eager", "lazy"):
        out.fail("plan_shape", f'\'mode\' must be "eager" or "lazy", found {json.dumps(mode)}')
        mode = None
    if key not in data:
        out.fail("plan_shape", f"the plan object has no '{key}' array")
        return None, mode, form
    calls = data[key]
    if not isinstance(calls, list):
        out.fail("plan_shape", f"'{key}' must be an array of calls, found {_json_kind(calls)}")
        return None, mode, form
    return calls, mode, form


ArgPath = tuple[str | int, ...]


MAX_ARGUMENT_DEPTH = 256
"""Arguments nested deeper than this many levels are a ``plan_shape`` error."""


class _TooDeep(Exception):
    def __init__(self, path: ArgPath) -> None:
        self.path = path


def _walk(value: Any, path: ArgPath, found: list[tuple[ArgPath, str]]) -> None:
    """Append ``(path, text)`` for every string starting with ``†`` inside ``value``.

    Raises ``_TooDeep`` past :data:`MAX_ARGUMENT_DEPTH` levels.
    """
    if len(path) > MAX_ARGUMENT_DEPTH:
        raise _TooDeep(path[:3])
    if isinstance(value, str):
        if value.startswith(DAGGER):
            found.append((path, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) or (isinstance(item, str) and item[:1] == DAGGER):
                _walk(item, (*path, key), found)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            if isinstance(item, (dict, list)) or (isinstance(item, str) and item[:1] == DAGGER):
                _walk(item, (*path, position), found)


def _parse_target(text: str, index: int, tool: str | None, out: Collector) -> Expression | None:
    try:
        node = parse_expression(text)
    except ReferenceSyntaxError as exc:
        out.fail(
            "reference_syntax",
            exc.reason,
            call=index,
            tool=tool,
            path="_outputPath",
            span=exc.span,
            source=text,
        )
        return None
    if isinstance(node, Escaped):
        out.fail(
            "reference_syntax",
            "an output path cannot be an escaped literal ('††')",
            call=index,
            tool=tool,
            path="_outputPath",
            span=(0, 2),
            source=text,
        )
        return None
    for ref in node.references:
        for segment in ref.segments:
            if isinstance(segment, Wildcard):
                out.fail(
                    "reference_syntax",
                    "cannot write through a wildcard '[*]'",
                    call=index,
                    tool=tool,
                    path="_outputPath",
                    span=segment.span,
                    source=text,
                )
                return None
    return node


def _string_field(
    raw: Mapping[str, Any],
    key: str,
    index: int,
    tool: str | None,
    out: Collector,
    allow_int: bool = False,
) -> Any:
    value = raw.get(key)
    if value is None:
        return None
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if not (isinstance(value, str) or (allow_int and is_int)):
        wanted = "a string or an integer" if allow_int else "a string"
        out.fail(
            "plan_shape",
            f"'{key}' must be {wanted}, found {_json_kind(value)}",
            call=index,
            tool=tool,
            path=key,
        )
        return None
    return value


def parse_call(raw: Any, index: int, out: Collector, *, partial: bool = False) -> Call | None:
    """Parse one decoded call object (the call at ``index`` of its plan).

    Returns the :class:`Call`, or ``None`` when it has errors; every problem,
    warnings included, goes to ``out``.  With ``partial``, a call with errors is
    still returned when it names a tool, without the parts that did not parse (bad
    expressions, a bad output path), so that the rest of it can be checked.
    Streaming parses calls one by one with it.
    """
    if not isinstance(raw, dict):
        out.fail("plan_shape", f"a call must be a JSON object, found {_json_kind(raw)}", call=index)
        return None
    tool = raw.get("_tool")
    tool_name: str | None = tool if isinstance(tool, str) and tool else None
    if tool_name is None:
        if "_tool" not in raw:
            found = "it is missing"
        elif tool == "":
            found = "found an empty string"
        else:
            found = f"found {_json_kind(tool)}"
        out.fail("plan_shape", f"'_tool' must name a tool; {found}", call=index, path="_tool")
    errors_before = len(out.diagnostics)
    raw_id = raw.get("_id")
    shown = tool_name  # how diagnostics name the call: "#3 refund (r-1)"
    if tool_name is not None and (
        isinstance(raw_id, str) or (isinstance(raw_id, int) and not isinstance(raw_id, bool))
    ):
        shown = f"{tool_name} ({raw_id})"

    arguments: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in raw.items():
        if not key.startswith("_"):
            arguments[key] = value
        elif key not in META_KEYS:
            extra[key] = value
            out.fail(
                "unknown_meta",
                f"unknown meta-property '{key}' (kept, not interpreted)",
                call=index,
                tool=shown,
                path=key,
                severity="warning",
            )

    expressions: list[ArgumentExpression] = []
    located: list[tuple[ArgPath, str]] = []
    try:
        _walk(arguments, (), located)
    except _TooDeep as exc:
        out.fail(
            "plan_shape",
            f"argument nested deeper than {MAX_ARGUMENT_DEPTH} levels",
            call=index,
            tool=shown,
            path=format_argument_path(exc.path) + "...",
        )
    for path, text in located:
        try:
            expressions.append(ArgumentExpression(path, text, parse_expression(text)))
        except ReferenceSyntaxError as exc:
            out.unparsed.setdefault(index, set()).add(str(path[0]))
            out.fail(
                "reference_syntax",
                exc.reason,
                call=index,
                tool=shown,
                path=format_argument_path(path),
                span=exc.span,
                source=text,
            )

    output_path = raw.get("_outputPath")
    target: Expression | None = None
    if output_path is not None:
        if not isinstance(output_path, str):
            out.fail(
                "plan_shape",
                f"'_outputPath' must be a string such as \"†state.result\", "
                f"found {_json_kind(output_path)}",
                call=index,
                tool=shown,
                path="_outputPath",
            )
            output_path = None
        elif not output_path.startswith(DAGGER):
            out.fail(
                "reference_syntax",
                "an output path must be an expression starting with '†', such as '†state.result'",
                call=index,
                tool=shown,
                path="_outputPath",
                span=(0, 1 if output_path else 0),
                source=output_path,
            )
            output_path = None
        else:
            target = _parse_target(output_path, index, shown, out)

    method = raw.get("_outputMethod")
    if method is None:
        method = "set"
    elif method not in OUTPUT_METHODS:
        allowed = ", ".join(OUTPUT_METHODS)
        out.fail(
            "plan_shape",
            f"'_outputMethod' must be one of {allowed}; found {json.dumps(method)}",
            call=index,
            tool=shown,
            path="_outputMethod",
        )
        method = "set"
    instance = _string_field(raw, "_instance", index, shown, out)
    call_id = _string_field(raw, "_id", index, shown, out, allow_int=True)
    reasoning = _string_field(raw, "_reasoningForCall", index, shown, out)

    if tool_name is None:
        return None
    if not partial and any(d.severity == "error" for d in out.diagnostics[errors_before:]):
        return None
    return new_call(
        {
            "index": index,
            "tool": tool_name,
            "arguments": arguments,
            "output_path": output_path,
            "output_method": method,
            "has_output": "_output" in raw,
            "output": raw.get("_output"),
            "instance": instance,
            "id": call_id,
            "reasoning": reasoning,
            "extra": extra,
            "written_meta": {key: raw[key] for key in ROUND_TRIP_KEYS if key in raw},
            "expressions": tuple(expressions),
            "target": target,
        }
    )


@dataclass(frozen=True, slots=True)
class PartialPlan:
    """What could be read of a plan that has errors, so that the rest can be checked.

    ``plan`` holds one call per position (``None`` when no list of calls was found);
    a call that could not be read at all is a stand-in listed in ``stand_ins``, to be
    left out of every check.  ``unchecked`` maps a call's index to the arguments whose
    expressions did not parse (present, but not validated).  ``unknown_writes`` is
    true when some call's output path could not be read, so a read of a path nothing
    writes may still be meant for it.  ``diagnostics`` holds every problem found.
    """

    plan: Plan | None
    diagnostics: tuple[Diagnostic, ...]
    stand_ins: frozenset[int] = frozenset()
    unchecked: Mapping[int, frozenset[str]] = field(default_factory=dict)
    unknown_writes: bool = False

    @property
    def ok(self) -> bool:
        """True when nothing is an error: ``plan`` is the whole plan."""
        return all(d.severity != "error" for d in self.diagnostics)


def parse_partial(source: str | bytes | bytearray | list[Any] | dict[str, Any]) -> PartialPlan:
    """Parse a plan, keeping what can be read when parts of it have errors.

    Never raises for a bad plan: every ``json_syntax``, ``plan_shape`` and
    ``reference_syntax`` problem is in the result's ``diagnostics``.  The checker
    uses it to report every problem of a plan at once (docs/diagnostics.md).
    """
    out = Collector()
    data = _decode(source, out) if isinstance(source, (str, bytes, bytearray)) else source
    calls_data, mode, form = (None, None, "list") if out.diagnostics else _unwrap(data, out)
    if calls_data is None:
        return PartialPlan(None, sort_diagnostics(out.diagnostics))
    calls: list[Call] = []
    stand_ins: set[int] = set()
    unchecked: dict[int, frozenset[str]] = {}
    unknown_writes = False
    seen_ids: dict[str | int, Call] = {}
    for index, raw in enumerate(calls_data):
        before = len(out.diagnostics)
        call = parse_call(raw, index, out, partial=True)
        problems = [d for d in out.diagnostics[before:] if d.severity == "error"]
        if call is None:
            stand_ins.add(index)
            call = new_call({**_STAND_IN, "index": index, "tool": _tool_text(raw)})
            unknown_writes = unknown_writes or (isinstance(raw, dict) and "_outputPath" in raw)
        elif problems:
            unknown_writes = unknown_writes or any(d.path == "_outputPath" for d in problems)
            if index in out.unparsed:
                unchecked[index] = frozenset(out.unparsed[index])
        if call.id is not None and index not in stand_ins:
            first = seen_ids.setdefault(call.id, call)
            if first is not call:
                out.fail(
                    "plan_shape",
                    f"duplicate _id {json.dumps(call.id)}: {first.label} has it too",
                    call=call,
                    path="_id",
                )
        calls.append(call)
    diagnostics = sort_diagnostics(out.diagnostics)
    plan = Plan.model_construct(
        calls=tuple(calls),
        mode=mode,
        form=form,
        mode_written=isinstance(data, dict) and "mode" in data,
        diagnostics=diagnostics,
    )
    return PartialPlan(plan, diagnostics, frozenset(stand_ins), unchecked, unknown_writes)


_STAND_IN: dict[str, Any] = {
    "arguments": {},
    "output_path": None,
    "output_method": "set",
    "has_output": False,
    "output": None,
    "instance": None,
    "id": None,
    "reasoning": None,
    "extra": {},
    "written_meta": {},
    "expressions": (),
    "target": None,
}


def _tool_text(raw: Any) -> str:
    tool = raw.get("_tool") if isinstance(raw, dict) else None
    return tool if isinstance(tool, str) and tool else "?"


def parse_plan(source: str | bytes | bytearray | list[Any] | dict[str, Any] | Plan) -> Plan:
    """Parse a plan from JSON text, UTF-8 bytes or a decoded JSON value (docs/language.md).

    Returns a :class:`Plan` whose ``diagnostics`` hold the warnings found
    (``unknown_meta``).  Raises :class:`~obelisk.errors.PlanError` carrying every
    ``json_syntax``, ``plan_shape`` and ``reference_syntax`` error at once; no
    other exception escapes.  A :class:`Plan` passed in is returned unchanged.

    >>> plan = parse_plan('[{"_tool": "fetch", "id": "†input.user", "_outputPath": "†state.u"}]')
    >>> plan.calls[0].label, str(plan.calls[0].expressions[0].expression)
    ('#0 fetch', '†input.user')
    """
    if isinstance(source, Plan):
        return source
    with gc_paused():
        parsed = parse_partial(source)
    if not parsed.ok or parsed.plan is None:
        raise PlanError(parsed.diagnostics)
    return parsed.plan
