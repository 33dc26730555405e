"""One call: a decoded call object in, a :class:`~obelisk.interpreter.plan.model.Call` out.

Every string that starts with ``†`` anywhere inside a call's arguments (nested
objects and arrays too) is parsed as an expression, and so is ``_outputPath``.
Problems go to a :class:`Collector`, the ``fail()`` helper shared by the plan
parser and the checker: each diagnostic gets the call's label (``#3 refund (r-1)``),
its argument path and the span of the bad characters (docs/diagnostics.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from obelisk.diagnostics import Collector, DiagnosticCode
from obelisk.errors import ReferenceSyntaxError
from obelisk.grammar import DAGGER, Escaped, Expression, Wildcard, parse_expression
from obelisk.interpreter.plan.model import (
    META_KEYS,
    OUTPUT_METHODS,
    ROUND_TRIP_KEYS,
    ArgumentExpression,
    Call,
    alternatives_of,
    format_argument_path,
    new_call,
)
from obelisk.interpreter.plan.plain import plain_call
from obelisk.interpreter.plan.scan import (
    SMALL_INT,
    ArgPath,
    ValueProblem,
    huge_digits,
    huge_message,
    json_kind,
    path_depth_problem,
    scan_value,
)
from obelisk.json_values import preview
from obelisk.limits import DEFAULT_LIMITS, Limits, int_digits_limit

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "json_kind",
    "parse_call",
    "parse_reported_call",
    "path_depth_problem",
]


MAX_ARGUMENT_DEPTH = DEFAULT_LIMITS.max_argument_depth
"""The default :attr:`Limits.max_argument_depth <obelisk.Limits>`: arguments nested
deeper than this many levels are a ``limit`` error."""


def _parse_target(
    text: str, index: int, tool: str | None, out: Collector, limits: Limits
) -> Expression | None:
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
    too_deep = path_depth_problem(node, limits)
    if too_deep is not None:
        message, span = too_deep
        out.fail(
            "limit", message, call=index, tool=tool, path="_outputPath", span=span, source=text
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
    if is_int and allow_int and huge_digits(value, int_digits_limit()):
        out.fail("limit", huge_message(value), call=index, tool=tool, path=key)
        return None
    if not (isinstance(value, str) or (allow_int and is_int)):
        wanted = "a string or an integer" if allow_int else "a string"
        out.fail(
            "plan_shape",
            f"'{key}' must be {wanted}, found {json_kind(value)}",
            call=index,
            tool=tool,
            path=key,
        )
        return None
    return value


def _after_field(raw: Mapping[str, Any], index: int, tool: str | None, out: Collector) -> Any:
    """``_after``: a list of call ``_id`` values (strings or integers) or plan indexes."""
    value = raw.get("_after")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(item, str) or (isinstance(item, int) and not isinstance(item, bool))
        for item in value
    ):
        out.fail(
            "plan_shape",
            "'_after' must be a list of call ids or indexes, such as [\"invite\", 0], "
            f"found {json_kind(value)}",
            call=index,
            tool=tool,
            path="_after",
        )
        return ()
    for position, item in enumerate(value):
        if isinstance(item, int) and huge_digits(item, int_digits_limit()):
            out.fail("limit", huge_message(item), call=index, tool=tool, path=f"_after[{position}]")
            return ()
    return tuple(value)


def parse_call(
    raw: Any, index: int, out: Collector, *, partial: bool = False, limits: Limits | None = None
) -> Call | None:
    """Parse one decoded call object (the call at ``index`` of its plan).

    Returns the :class:`Call`, or ``None`` when it has errors; every problem,
    warnings included, goes to ``out``.  With ``partial``, a call with errors is
    still returned when it names a tool, without the parts that did not parse (bad
    expressions, a bad output path, an argument that breaks a limit), so that the
    rest of it can be checked.  ``limits`` (default :class:`~obelisk.Limits`) bounds
    argument nesting and reference length (``limit`` diagnostics,
    docs/limits.md).  Streaming parses calls one by one with it.
    """
    limits = limits if limits is not None else DEFAULT_LIMITS
    if type(raw) is dict:
        call = plain_call(raw, index, limits)  # the common call: nothing to report
        if call is not None:
            return call
    return parse_reported_call(raw, index, out, partial, limits)


def parse_reported_call(
    raw: Any, index: int, out: Collector, partial: bool, limits: Limits
) -> Call | None:
    """:func:`parse_call` without its fast path: the general parser, which reports
    every problem of the call to ``out``; for a call
    :func:`~obelisk.interpreter.plan.plain.plain_call` turned down."""
    if not _is_call_object(raw, index, out):
        return None
    tool_name = _tool_name(raw, index, out)
    errors_before = len(out.diagnostics)
    parser = _ReportedCall(raw, index, out, limits, _shown_name(tool_name, raw.get("_id")))
    arguments, extra = parser.split_keys()
    expressions = parser.expressions(arguments, extra)
    output_path, target = parser.output_path()
    method = parser.output_method()
    instance = _string_field(raw, "_instance", index, parser.shown, out)
    call_id = _string_field(raw, "_id", index, parser.shown, out, allow_int=True)
    reasoning = _string_field(raw, "_reasoningForCall", index, parser.shown, out)
    after = _after_field(raw, index, parser.shown, out)

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
            "after": after,
            "extra": extra,
            "written_meta": {key: raw[key] for key in ROUND_TRIP_KEYS if key in raw},
            "expressions": tuple(expressions),
            "target": target,
            "outputs": alternatives_of(target) if target is not None else (),
        }
    )


def _is_call_object(raw: Any, index: int, out: Collector) -> bool:
    """Whether ``raw`` is a JSON object with string keys (else a ``plan_shape`` error)."""
    if not isinstance(raw, dict):
        out.fail("plan_shape", f"a call must be a JSON object, found {json_kind(raw)}", call=index)
        return False
    for key in raw:
        if type(key) is not str:
            out.fail(
                "plan_shape",
                f"the keys of a call must be strings, found {json_kind(key)} key",
                call=index,
            )
            return False
    return True


def _tool_name(raw: dict[str, Any], index: int, out: Collector) -> str | None:
    """The call's ``_tool``, or None (a ``plan_shape`` error) when it names no tool."""
    tool = raw.get("_tool")
    if isinstance(tool, str) and tool:
        return tool
    if "_tool" not in raw:
        found = "it is missing"
    elif tool == "":
        found = "found an empty string"
    else:
        found = f"found {json_kind(tool)}"
    out.fail("plan_shape", f"'_tool' must name a tool; {found}", call=index, path="_tool")
    return None


def _shown_name(tool_name: str | None, raw_id: Any) -> str | None:
    """How diagnostics name the call: ``refund (r-1)`` with a usable ``_id``, else the tool."""
    if tool_name is None:
        return None
    if isinstance(raw_id, str) or (
        isinstance(raw_id, int)
        and not isinstance(raw_id, bool)
        and not huge_digits(raw_id, int_digits_limit())
    ):
        return f"{tool_name} ({raw_id})"
    return tool_name


def _is_plain_scalar(value: Any) -> bool:
    """A number, boolean or null that needs no scan (strings are looked at apart)."""
    kind = type(value)
    return (
        kind is float
        or kind is bool
        or value is None
        or (kind is int and -SMALL_INT < value < SMALL_INT)
    )


@dataclass(frozen=True, slots=True)
class _ReportedCall:
    """The parts of one call object the general parser reads, each reporting its
    problems to ``out`` under the call's label (``#3 refund (r-1)``)."""

    raw: dict[str, Any]
    index: int
    out: Collector
    limits: Limits
    shown: str | None

    def fail(self, code: DiagnosticCode, message: str, path: str, **where: Any) -> None:
        self.out.fail(code, message, call=self.index, tool=self.shown, path=path, **where)

    def mark_unparsed(self, name: str) -> None:
        self.out.unparsed.setdefault(self.index, set()).add(name)

    def split_keys(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(arguments, extra)``: the plain keys, and the unknown meta-properties
        (each an ``unknown_meta`` warning)."""
        arguments: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in self.raw.items():
            if not key.startswith("_"):
                arguments[key] = value
            elif key not in META_KEYS:
                extra[key] = value
                self.fail(
                    "unknown_meta",
                    f"unknown meta-property '{key}' (kept, not interpreted)",
                    key,
                    severity="warning",
                )
        return arguments, extra

    def too_big(
        self, value: Any, path: ArgPath, root: str, found: list[tuple[ArgPath, str]]
    ) -> bool:
        """Scan ``value``; report a value past a limit (or not JSON data) and say so."""
        try:
            scan_value(value, path, self.limits, found)
        except ValueProblem as exc:
            where = format_argument_path(tuple(p for p in exc.path if p != "..."), root)
            self.fail(exc.code, exc.message, where + ("..." if exc.path[-1:] == ("...",) else ""))
            return True
        return False

    def expressions(
        self, arguments: dict[str, Any], extra: dict[str, Any]
    ) -> list[ArgumentExpression]:
        """Every expression of the arguments that parses within the limits; the values
        of ``_output`` and the unknown meta-properties are scanned for limits too."""
        located = self.locate(arguments)
        if "_output" in self.raw and self.too_big(self.raw["_output"], (), "_output", []):
            self.mark_unparsed("_output")
        for key, value in extra.items():
            self.too_big(value, (), key, [])
        if "_tools" in self.raw:
            self.too_big(self.raw["_tools"], (), "_tools", [])
        parsed = (self.parse_argument(path, text) for path, text in located)
        return [expression for expression in parsed if expression is not None]

    def locate(self, arguments: dict[str, Any]) -> list[tuple[ArgPath, str]]:
        """``(path, text)`` of every ``†`` string in the arguments; an argument past a
        limit is reported and left unparsed."""
        located: list[tuple[ArgPath, str]] = []
        for name, value in arguments.items():
            if type(value) is str:  # the common scalars, without a scan
                if value.startswith(DAGGER):
                    located.append(((name,), value))
                continue
            if _is_plain_scalar(value):
                continue
            found_here: list[tuple[ArgPath, str]] = []
            if self.too_big(value, (name,), "args", found_here):
                self.mark_unparsed(name)
            else:
                located.extend(found_here)
        return located

    def parse_argument(self, path: ArgPath, text: str) -> ArgumentExpression | None:
        """The expression ``text`` at ``path``, or None (reported, its argument unparsed)."""
        try:
            node = parse_expression(text)
        except ReferenceSyntaxError as exc:
            self.mark_unparsed(str(path[0]))
            self.fail(
                "reference_syntax",
                exc.reason,
                format_argument_path(path),
                span=exc.span,
                source=text,
            )
            return None
        too_deep = path_depth_problem(node, self.limits)
        if too_deep is not None:
            self.mark_unparsed(str(path[0]))
            message, span = too_deep
            self.fail("limit", message, format_argument_path(path), span=span, source=text)
            return None
        return ArgumentExpression(path, text, node)

    def output_path(self) -> tuple[str | None, Expression | None]:
        """``(text, parsed)`` of ``_outputPath``: ``(None, None)`` when it is absent or
        not a string that starts with ``†``, the parsed target None when it has errors."""
        output_path = self.raw.get("_outputPath")
        if output_path is None:
            return None, None
        if not isinstance(output_path, str):
            self.fail(
                "plan_shape",
                f"'_outputPath' must be a string such as \"†state.result\", "
                f"found {json_kind(output_path)}",
                "_outputPath",
            )
            return None, None
        if not output_path.startswith(DAGGER):
            self.fail(
                "reference_syntax",
                "an output path must be an expression starting with '†', such as '†state.result'",
                "_outputPath",
                span=(0, 1 if output_path else 0),
                source=output_path,
            )
            return None, None
        return output_path, _parse_target(
            output_path, self.index, self.shown, self.out, self.limits
        )

    def output_method(self) -> str:
        """``_outputMethod``, ``set`` when absent or not one of the output methods."""
        method = self.raw.get("_outputMethod")
        if method is None:
            return "set"
        if isinstance(method, str) and method in OUTPUT_METHODS:
            return method
        allowed = ", ".join(OUTPUT_METHODS)
        self.fail(
            "plan_shape",
            f"'_outputMethod' must be one of {allowed}; found {preview(method)}",
            "_outputMethod",
        )
        return "set"
