"""What the checker reports about a plan: :class:`Diagnostic` records, their
locations and rendering, the :class:`Collector` that gathers them, and
:data:`DiagnosticCode`, the one list of every code (docs/diagnostics.md).

A diagnostic is data in the style of pydantic-core's errors: a stable ``code``
(one of :data:`DIAGNOSTIC_CODES`), a ``severity``, a location (the call, the
argument path, the span of the bad characters) and a ``message``.  ``str()``
renders it for people, with a caret under the bad characters; ``to_dict()`` gives
the JSON shape ``obelisk check --json`` prints.  The plan parser, the checker and
the simulator all report through a :class:`Collector`.

This module is the bottom layer: it imports nothing from the rest of obelisk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

__all__ = [
    "DIAGNOSTIC_CODES",
    "Collector",
    "Diagnostic",
    "DiagnosticCode",
    "Location",
    "Severity",
    "caret_lines",
    "limit_per_code",
    "printable",
    "sort_diagnostics",
]

Severity = Literal["error", "warning"]
"""``"error"``: the plan cannot run.  ``"warning"``: it can, but probably not as meant."""

DiagnosticCode = Literal[
    "json_syntax",
    "plan_shape",
    "reference_syntax",
    "unknown_meta",
    "limit",
    "unknown_tool",
    "invalid_argument",
    "missing_argument",
    "invalid_output",
    "outcome_mismatch",
    "ambiguous_output",
    "lazy_output",
    "unresolved_reference",
    "unknown_call",
    "invalid_tools",
    "readonly_target",
    "dependency_cycle",
    "type_mismatch",
    "write_conflict",
    "unreachable_call",
    "untrusted_flow",
    "stream_order",
    "invalid_stub",
    "unsatisfiable_output",
]
"""Every code a :class:`Diagnostic` can carry, in the order docs/diagnostics.md
describes them (one section per code)."""

DIAGNOSTIC_CODES: tuple[DiagnosticCode, ...] = get_args(DiagnosticCode)
"""The codes of :data:`DiagnosticCode`, as a tuple of strings."""

Location = tuple[str | int, ...]
"""A pydantic-core style location: ``(call index, argument path)``, e.g.
``(3, "args.customer.id")``; ``()`` for the whole plan."""


_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\\ud800-\\udfff\u2028\u2029"
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # bidi controls reorder the text
)
_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def printable(text: str) -> str:
    """``text`` safe to print on any terminal and to encode as UTF-8.

    Control characters, lone surrogates (``"\\ud800"``, which UTF-8 cannot encode),
    line separators and the bidirectional controls that reorder what a terminal
    shows (``\\u202e`` and the other embeddings, overrides, isolates and marks) are
    written as JSON escapes (``\\t``, ``\\u001b``, ``\\ud800``, ``\\u202e``);
    everything else is kept as it is, ``†`` included.

    >>> printable("†state.a\\tb\\ud800")
    '†state.a\\\\tb\\\\ud800'
    """
    return _UNPRINTABLE.sub(_escape, text)


_CARET_WIDTH = 100
"""A source line longer than this many characters is shown as a window around the span."""


def caret_lines(source: str, span: tuple[int, int]) -> list[str]:
    """Render ``source`` with carets under ``span`` (character offsets, end exclusive).

    Returns two lines: the source (only the line of a multi-line source that holds
    ``span[0]``) and a line of ``^`` under the span.  An empty span, or one at the
    end of the text, gets a single caret just past the last character.  Characters
    that would not print (see :func:`printable`) are shown escaped, the carets
    moved to match; a line longer than 100 characters is cut to a window around
    the span, ``...`` marking each cut.

    >>> caret_lines("†state..x", (7, 8))
    ['†state..x', '       ^']
    """
    start, end = span
    start = min(max(start, 0), len(source))
    line_start = source.rfind("\n", 0, start) + 1
    line_end = source.find("\n", start)
    if line_end == -1:
        line_end = len(source)
    stop = min(max(end, start + 1), line_end)
    before, inside, after = (
        source[line_start:start],
        source[start:stop],
        source[stop:line_end],
    )
    head, cut_head = printable(before), False
    body = printable(inside)
    tail, cut_tail = printable(after), False
    if len(head) + len(body) + len(tail) > _CARET_WIDTH:
        room = _CARET_WIDTH // 2
        if len(body) > room:
            body, cut_tail, tail = body[:room], True, ""
        if len(head) > room // 2:
            head, cut_head = head[-(room // 2) :], True
        spare = _CARET_WIDTH - len(head) - len(body)
        if len(tail) > spare:
            tail, cut_tail = tail[: max(spare, 0)], True
    prefix = "..." if cut_head else ""
    line = prefix + head + body + tail + ("..." if cut_tail else "")
    width = max(1, len(body))
    return [line, " " * (len(prefix) + len(head)) + "^" * width]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a plan (docs/diagnostics.md).

    Fields:
        code: stable identifier such as ``"unresolved_reference"``.
        severity: ``"error"`` (the plan cannot run) or ``"warning"``.
        message: what was found and what was expected, without the location.
        call: index of the call in the plan, or ``None`` for plan-level problems.
        path: argument path inside the call, e.g. ``"args.customer.id"`` or
            ``"_outputPath"``; ``None`` when the whole call is meant.
        span: ``(start, end)`` character offsets inside ``source``, end exclusive.
        source: the text the span points into (an expression, or the JSON document
            for ``json_syntax``); used only to draw the caret.
        label: how the call is named to people, e.g. ``"#3 issueRefund"``.
    """

    code: DiagnosticCode
    severity: Severity
    message: str
    call: int | None = None
    path: str | None = None
    span: tuple[int, int] | None = None
    source: str | None = field(default=None, compare=False)
    label: str | None = field(default=None, compare=False)

    @property
    def loc(self) -> Location:
        """pydantic-core style location: ``(call index, *argument path parts)``."""
        parts: list[str | int] = []
        if self.call is not None:
            parts.append(self.call)
        if self.path:
            parts.append(self.path)
        return tuple(parts)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by ``obelisk check --json``:
        ``{"code", "severity", "call", "path", "span", "message"}`` (span is
        ``[start, end]`` or ``null``)."""
        return {
            "code": self.code,
            "severity": self.severity,
            "call": self.call,
            "path": self.path,
            "span": list(self.span) if self.span is not None else None,
            "message": self.message,
        }

    def headline(self) -> str:
        """One line: ``error[code] #3 issueRefund, args.x: message`` (unprintable
        characters escaped, see :func:`printable`)."""
        where = []
        if self.label is not None:
            where.append(self.label)
        elif self.call is not None:
            where.append(f"#{self.call}")
        if self.path:
            where.append(self.path)
        prefix = f"{self.severity}[{self.code}]"
        if where:
            prefix += " " + ", ".join(where)
        return printable(f"{prefix}: {self.message}")

    def __str__(self) -> str:
        lines = [self.headline()]
        if self.source is not None and self.span is not None:
            lines.extend("    " + text for text in caret_lines(self.source, self.span))
        return "\n".join(lines)


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The stable order of diagnostics: plan-level first, then by call index,
    argument path and code (order of discovery breaks the remaining ties)."""
    return tuple(
        sorted(
            diagnostics,
            key=lambda d: (-1 if d.call is None else d.call, _path_order(d.path), d.code),
        )
    )


def limit_per_code(diagnostics: Iterable[Diagnostic], per_code: int) -> tuple[Diagnostic, ...]:
    """At most ``per_code`` diagnostics of each code, in the stable order of
    :func:`sort_diagnostics`; the ones left out are summed up in one more
    plan-level diagnostic of their code (an error if any of them is one):
    ``... and 1900 more write_conflict diagnostics (at most 100 of one code are
    reported; raise Limits.max_diagnostics_per_code to see them all)``
    (docs/limits.md).
    """
    ordered = sort_diagnostics(diagnostics)
    counts: dict[DiagnosticCode, int] = {}
    for diagnostic in ordered:
        counts[diagnostic.code] = counts.get(diagnostic.code, 0) + 1
    if all(count <= per_code for count in counts.values()):
        return ordered
    kept: list[Diagnostic] = []
    seen: dict[DiagnosticCode, int] = {}
    worst: dict[DiagnosticCode, Severity] = {}
    for diagnostic in ordered:
        code = diagnostic.code
        seen[code] = seen.get(code, 0) + 1
        if seen[code] <= per_code:
            kept.append(diagnostic)
        elif diagnostic.severity == "error" or code not in worst:
            worst[code] = diagnostic.severity
    for code, severity in worst.items():
        more = counts[code] - per_code
        kept.append(
            Diagnostic(
                code,
                severity,
                f"... and {more} more {code} diagnostic{'s' if more != 1 else ''} "
                f"(at most {per_code} of one code are reported; raise "
                "Limits.max_diagnostics_per_code to see them all)",
            )
        )
    return sort_diagnostics(kept)


def _path_order(path: str | None) -> tuple[tuple[int, int, str], ...]:
    """Argument paths in document order: ``args.x[2]`` before ``args.x[10]`` (digit runs
    compare as numbers, by length first: no ``int()``, so any length is fine)."""
    if not path:
        return ()
    return tuple(
        (1, len(part.lstrip("0")), part.lstrip("0"))
        if part.isascii() and part.isdigit()
        else (0, 0, part)
        for part in re.split(r"([0-9]+)", path)
        if part
    )


class Named(Protocol):
    """A call as a :class:`Collector` names it: its index in the plan and its label."""

    @property
    def index(self) -> int: ...

    @property
    def label(self) -> str: ...


class Collector:
    """Collects the diagnostics of one plan: the ``fail()`` helper shared by the
    plan parser, the checker and the simulator.  ``fail`` names the call (a call
    with an ``index`` and a ``label``, or an index plus ``tool`` for a call that
    did not parse), so every diagnostic gets its ``#3 issueRefund`` label."""

    def __init__(self, diagnostics: Iterable[Diagnostic] = ()) -> None:
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self.unparsed: dict[int, set[str]] = {}
        """Per call index, the top-level arguments holding an expression that did not parse."""

    def fail(
        self,
        code: DiagnosticCode,
        message: str,
        call: Named | int | None = None,
        path: str | None = None,
        span: tuple[int, int] | None = None,
        source: str | None = None,
        *,
        tool: str | None = None,
        severity: Severity = "error",
    ) -> None:
        """Record one diagnostic: ``code`` and ``message`` (what was found and what
        was expected), the ``call`` it is about (``None`` for the whole plan), the
        argument ``path``, and the ``span`` inside ``source`` to put a caret under."""
        if call is None or isinstance(call, int):
            index, label = call, None
            if index is not None:
                label = f"#{index} {tool}" if tool else f"#{index}"
        else:
            index, label = call.index, call.label
        self.diagnostics.append(
            Diagnostic(code, severity, message, index, path, span, source, label)
        )
