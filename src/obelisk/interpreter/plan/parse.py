"""Parse plans: JSON in, a typed, parsed :class:`~obelisk.interpreter.plan.model.Plan` out.

:func:`parse_plan` accepts JSON text, UTF-8 bytes or an already-decoded value in
any of the three shapes of docs/language.md::

    [call, ...]
    {"mode": "eager" | "lazy", "calls": [call, ...]}
    {"type": "plan", "plan": [call, ...], "mode": ...}

Each call is parsed as :func:`~obelisk.interpreter.plan.call.parse_call` does: by its
fast path for a call with nothing to report, else by the general parser.
Problems are collected, never raised one by one: JSON syntax, plan shape and
reference syntax errors all come back together in one
:class:`~obelisk.errors.PlanError`.  Unknown ``_meta`` keys are warnings, kept on
the plan and written back by :meth:`Plan.to_json`.  :func:`parse_partial` keeps
what can be read of a plan with errors, so the checker can report every problem.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from obelisk.diagnostics import Collector, Diagnostic, limit_per_code, sort_diagnostics
from obelisk.errors import PlanError
from obelisk.interpreter.plan.call import json_kind, parse_reported_call
from obelisk.interpreter.plan.collector import gc_paused
from obelisk.interpreter.plan.model import Call, Plan, PlanMode, new_call
from obelisk.interpreter.plan.plain import plain_call
from obelisk.json_values import loads_strict, preview, repeated_key
from obelisk.limits import DEFAULT_LIMITS, Limits

__all__ = ["PartialPlan", "parse_partial", "parse_plan"]


def _decode(source: str | bytes | bytearray, out: Collector, repeats: list[Diagnostic]) -> Any:
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
        data = loads_strict(source)
    except json.JSONDecodeError as exc:
        end = exc.pos + 1 if exc.pos < len(source) else exc.pos
        out.fail(
            "json_syntax",
            f"invalid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            span=(exc.pos, end),
            source=source,
        )
        return None
    repeated = repeated_key(source, data)
    if repeated is not None:  # reported once the plan is read: the rest is checked too
        key, start, stop = repeated
        line = source.count("\n", 0, start) + 1
        column = start - source.rfind("\n", 0, start)
        repeats.append(
            Diagnostic(
                "json_syntax",
                "error",
                f"key {preview(key)} appears twice in one object at line {line}, column "
                f"{column}; JSON keeps only the last value, so write each key once",
                span=(start, stop),
                source=source,
            )
        )
    return data


def _unwrap(data: Any, out: Collector) -> tuple[Any, PlanMode | None, str]:
    """Find the list of calls in one of the three plan shapes."""
    if isinstance(data, list):
        return data, None, "list"
    if not isinstance(data, dict):
        out.fail(
            "plan_shape",
            f"a plan must be an array of calls or an object with 'calls', found {json_kind(data)}",
        )
        return None, None, "list"
    if data.get("type") == "plan" or "plan" in data:
        form, key, allowed = "message", "plan", {"type", "plan", "mode"}
        if data.get("type") != "plan":
            out.fail("plan_shape", 'a plan message must have "type": "plan"')
    else:
        form, key, allowed = "object", "calls", {"calls", "mode"}
    for name in data:
        if type(name) is not str:
            out.fail(
                "plan_shape", f"the keys of the plan object must be strings, found {preview(name)}"
            )
        elif name not in allowed:
            expected = ", ".join(f"'{k}'" for k in sorted(allowed))
            out.fail("plan_shape", f"unexpected key '{name}' in the plan; expected {expected}")
    mode = data.get("mode")
    if mode is not None and mode not in ("eager", "lazy"):
        out.fail("plan_shape", f'\'mode\' must be "eager" or "lazy", found {preview(mode)}')
        mode = None
    if key not in data:
        out.fail("plan_shape", f"the plan object has no '{key}' array")
        return None, mode, form
    calls = data[key]
    if not isinstance(calls, list):
        out.fail("plan_shape", f"'{key}' must be an array of calls, found {json_kind(calls)}")
        return None, mode, form
    return calls, mode, form


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


def parse_partial(
    source: str | bytes | bytearray | list[Any] | dict[str, Any], limits: Limits | None = None
) -> PartialPlan:
    """Parse a plan, keeping what can be read when parts of it have errors.

    Never raises for a bad plan: every ``json_syntax``, ``plan_shape``,
    ``reference_syntax`` and ``limit`` problem is in the result's ``diagnostics``
    (not capped per code: the caller caps).  ``limits`` defaults to
    :class:`~obelisk.Limits` ``()``.  The checker uses it to report every problem of
    a plan at once (docs/diagnostics.md).
    """
    limits = limits if limits is not None else DEFAULT_LIMITS
    out = Collector()
    repeats: list[Diagnostic] = []  # keys an object of the text names twice
    data = _decode(source, out, repeats) if isinstance(source, (str, bytes, bytearray)) else source
    calls_data, mode, form = (None, None, "list") if out.diagnostics else _unwrap(data, out)
    out.diagnostics.extend(repeats)
    if calls_data is None:
        return PartialPlan(None, sort_diagnostics(out.diagnostics))
    reader = _CallReader(out, limits)
    read, keep = reader.read, reader.calls.append
    for index, raw in enumerate(calls_data):
        call = plain_call(raw, index, limits) if type(raw) is dict else None
        if call is None or call.id is not None:
            read(index, raw, call)
        else:
            keep(call)  # the common call: nothing to report, no _id to compare
    diagnostics = sort_diagnostics(out.diagnostics)
    plan = Plan.model_construct(
        calls=tuple(reader.calls),
        mode=mode,
        form=form,
        mode_written=isinstance(data, dict) and "mode" in data,
        diagnostics=diagnostics,
    )
    return PartialPlan(
        plan, diagnostics, frozenset(reader.stand_ins), reader.unchecked, reader.unknown_writes
    )


@dataclass(slots=True)
class _CallReader:
    """Reads the calls of a plan one by one for :func:`parse_partial`, keeping what
    each adds to the :class:`PartialPlan`: the calls (a stand-in for a call that
    cannot be read), the arguments left unchecked, whether some write is unknown."""

    out: Collector
    limits: Limits
    calls: list[Call] = field(default_factory=list)
    stand_ins: set[int] = field(default_factory=set)
    unchecked: dict[int, frozenset[str]] = field(default_factory=dict)
    unknown_writes: bool = False
    seen_ids: dict[str | int, Call] = field(default_factory=dict)

    def read(self, index: int, raw: Any, call: Call | None) -> None:
        """Keep the call at ``index``: ``call`` when :func:`plain_call` read it (most
        calls have nothing to report, and skip the bookkeeping of diagnostics of
        :meth:`_reported`), else what the general parser reads of ``raw``."""
        if call is None:
            call = self._reported(index, raw)
        if call.id is not None and index not in self.stand_ins:
            first = self.seen_ids.setdefault(call.id, call)
            if first is not call:
                _duplicate_id(self.out, call, first)
        self.calls.append(call)

    def _reported(self, index: int, raw: Any) -> Call:
        """The call at ``index`` read by the general parser, or its stand-in."""
        out = self.out
        before = len(out.diagnostics)
        call = parse_reported_call(raw, index, out, True, self.limits)
        problems = [d for d in out.diagnostics[before:] if d.severity == "error"]
        if call is None:
            self.stand_ins.add(index)
            if isinstance(raw, dict) and "_outputPath" in raw:
                self.unknown_writes = True
            return new_call({**_STAND_IN, "index": index, "tool": _tool_text(raw)})
        if problems:
            if any(d.path == "_outputPath" for d in problems):
                self.unknown_writes = True
            if index in out.unparsed:
                self.unchecked[index] = frozenset(out.unparsed[index])
        return call


def _duplicate_id(out: Collector, call: Call, first: Call) -> None:
    out.fail(
        "plan_shape",
        f"duplicate _id {preview(call.id)}: {first.label} has it too",
        call=call,
        path="_id",
    )


_STAND_IN: dict[str, Any] = {
    "arguments": {},
    "output_path": None,
    "output_method": "set",
    "has_output": False,
    "output": None,
    "instance": None,
    "id": None,
    "reasoning": None,
    "after": (),
    "extra": {},
    "written_meta": {},
    "expressions": (),
    "target": None,
    "outputs": (),
}


def _tool_text(raw: Any) -> str:
    tool = raw.get("_tool") if isinstance(raw, dict) else None
    return tool if isinstance(tool, str) and tool else "?"


def parse_plan(
    source: str | bytes | bytearray | list[Any] | dict[str, Any] | Plan,
    *,
    limits: Limits | None = None,
) -> Plan:
    """Parse a plan from JSON text, UTF-8 bytes or a decoded JSON value (docs/language.md).

    Returns a :class:`Plan` whose ``diagnostics`` hold the warnings found
    (``unknown_meta``).  Raises :class:`~obelisk.errors.PlanError` carrying every
    ``json_syntax``, ``plan_shape``, ``reference_syntax`` and ``limit`` error at
    once, at most ``limits.max_diagnostics_per_code`` of one code (docs/limits.md);
    no other exception escapes.  JSON text is read strictly: ``NaN``, ``Infinity``,
    numbers too large for a float and integers too long for Python are
    ``json_syntax`` errors.  ``limits`` defaults to :class:`~obelisk.Limits` ``()``.
    A :class:`Plan` passed in is returned unchanged.

    >>> plan = parse_plan('[{"_tool": "fetch", "id": "†input.user", "_outputPath": "†state.u"}]')
    >>> plan.calls[0].label, str(plan.calls[0].expressions[0].expression)
    ('#0 fetch', '†input.user')
    """
    if isinstance(source, Plan):
        return source
    limits = limits if limits is not None else DEFAULT_LIMITS
    with gc_paused():
        parsed = parse_partial(source, limits)
    if not parsed.ok or parsed.plan is None:
        raise PlanError(limit_per_code(parsed.diagnostics, limits.max_diagnostics_per_code))
    return parsed.plan
