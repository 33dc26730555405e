"""From a tool's result to the writes it makes (docs/language.md, docs/semantics.md).

A result is turned into JSON data (:func:`json_result`): pydantic models,
dataclasses, enums, dates and times (ISO 8601 strings), UUIDs, decimals (strings),
tuples and sets (lists) become what pydantic-core's JSON serializer makes of them,
so the state only ever holds JSON.  A bare value goes to the first
alternative of the call's ``_outputPath``; an
:class:`~obelisk.interpreter.tools.options.Outcome` picks its alternative by
index or by a name the tool declares; a raised exception goes to the last
alternative (the error arm) when the call has two or more and the tool declares
no ``outcomes``.  Each alternative may fan out (``a && b``): the same value is
written to every target.  The value is validated before anything is written: as
returned, against a function's return annotation (pydantic, which honours the
model's own settings such as ``strict``), or as JSON data, against a JSON output
schema.  A value that does not fit is refused (``strict``), or written as it is
with a warning (``warn``) or without one (``off``): :func:`validated_writes`
(docs/tools.md, "Output validation"); a value with no JSON form, or past the
limits, is always refused.

Copies: the conversion makes obelisk's own copy of the result, and that copy is
what the state keeps (``State.write_many(..., owned=True)``); the write log and
the call record get one more copy, which never shares objects with the state.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from jiter import from_json
from pydantic_core import to_json, to_jsonable_python

from obelisk.errors import OutcomeError, OutputValidationError
from obelisk.grammar import Reference
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.runtime.state import log_text
from obelisk.interpreter.tools.options import Outcome, OutputValidation
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import int_digits_limit, nesting_depth, unreadable_digits
from obelisk.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "Writes",
    "error_arm",
    "error_record",
    "forget_traceback",
    "json_result",
    "json_result_text",
    "result_writes",
    "result_writes_text",
    "sized_json_result",
    "validated_writes",
    "writes_for",
]

Writes = list[tuple[Reference, Any]]
"""The writes of one call: ``(target, value)`` pairs, committed all or nothing."""


def error_record(exc: BaseException) -> dict[str, Any]:
    """``{"type": <exception class name>, "message": str(exc)}``: a call's ``error``.

    An exception that cannot describe itself (its ``__str__`` raises, or returns no
    string) gets the message ``<unprintable Name message>`` (docs/limits.md)."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not lose the run
        message = f"<unprintable {name} message>"
    return {"type": name, "message": message}


def forget_traceback(exc: BaseException) -> None:
    """Drop the tracebacks of ``exc`` and of the exceptions it chains (at most 16).

    A call's error keeps only its type and message (:func:`error_record`), and a
    traceback holds the frames the exception passed through: a frame that awaited
    the future now holding the exception closes a reference cycle, which would keep
    the whole run alive until Python's next full garbage collection."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 16:
        seen.add(id(current))
        current.__traceback__ = None
        current = current.__cause__ or current.__context__


class _NotJSON(Exception):
    """Raised by the conversion's fallback: ``args[0]`` is the type's name."""


def _refuse(value: Any) -> Any:
    raise _NotJSON(type(value).__qualname__)


_SCALARS = (str, int, float, bool, type(None))
_PLAIN = frozenset((dict, list, str, int, float, bool, type(None)))


def _refuse_iterator(tool: Tool, value: Any) -> None:
    """An iterator (a generator, ``itertools.count()``, ``iter(...)``) is not JSON data
    and may never end: converting it would run and grow without bound on the event
    loop, so it is refused (docs/limits.md).  A list, a tuple or a set is fine."""
    kind = type(value)
    if kind not in _PLAIN and hasattr(kind, "__next__"):
        raise OutputValidationError(
            f"the output of {tool.name} is an iterator ({kind.__qualname__}), not JSON "
            "data: it may never end; return a list"
        )


def json_result(tool: Tool, value: Any, limits: Limits = DEFAULT_LIMITS) -> Any:
    """``value`` as JSON data: a new object that shares no container with ``value``
    (scalars are returned as they are); see :func:`sized_json_result`."""
    return sized_json_result(tool, value, limits)[0]


def sized_json_result(tool: Tool, value: Any, limits: Limits = DEFAULT_LIMITS) -> tuple[Any, int]:
    """``(data, size)``: see :func:`json_result_text`, which also returns the text."""
    data, size, _ = json_result_text(tool, value, limits)
    return data, size


def json_result_text(
    tool: Tool, value: Any, limits: Limits = DEFAULT_LIMITS
) -> tuple[Any, int, bytes | None]:
    """``(data, size, text)``: ``value`` as JSON data and its size as compact UTF-8 JSON
    (bytes; an estimate for scalars other than strings), and that compact JSON text
    (UTF-8 bytes, what the write log keeps: ``state.log_text(data)``) when the size was measured
    on it: ``None`` for a scalar ``value``, and for data with no UTF-8 text (a lone
    surrogate).  The write log keeps that text instead of making it again.

    The conversion is pydantic-core's JSON serializer (``to_json``; aliases as in the
    tool's JSON schema; dates and times as ISO 8601 strings; UUIDs and decimals as
    strings; tuples, sets and frozensets as lists, sets in iteration order; bytes as
    UTF-8 text; non-string dict keys as strings), and the data is that text parsed
    back by jiter: one pass makes the text, one makes the copy, and jiter shares the
    strings of up to 64 bytes it has met before (keys, mostly).  Values the parser
    refuses are converted by ``pydantic_core.to_jsonable_python`` instead, and their
    text made from that data: nested over 200 levels, with no UTF-8 text, or with a
    dict whose keys become one string (``1`` and ``"1"``: the data keeps the last
    value, and so does the text).  Raises
    :class:`~obelisk.errors.OutputValidationError` when a part of it has no JSON
    form: ``the output of make_socket is not JSON data: socket is not JSON
    serializable``, or ``the output of price is not JSON data: nan at items[2].cost``
    (NaN and infinities are not JSON; docs/semantics.md, "Values are JSON data");
    and when it is bigger than ``limits.max_output_bytes`` or nests deeper than
    ``limits.max_output_depth`` (docs/limits.md), and for an iterator (a generator,
    ``itertools.count()``), which may never end: ``the output of numbers is an iterator
    (count), not JSON data: it may never end; return a list``.
    """
    kind = type(value)
    if kind in _SCALARS:
        if kind is float and not math.isfinite(value):
            raise OutputValidationError(f"the output of {tool.name} is not JSON data: {value}")
        if kind is int and value.bit_length() > _READABLE_BITS and unreadable_digits(value):
            raise _unreadable(tool, str(_big_int(value)))
        size = _string_size(value) if kind is str else 8
        _check_size(tool, size, limits)
        return value, size, None
    _refuse_iterator(tool, value)
    made: bytes | None
    try:  # the common case: one pass to compact JSON text, and its parse is the new data
        text = made = to_json(value, fallback=_refuse, inf_nan_mode="constants")
        converted = from_json(text, allow_inf_nan=True, catch_duplicate_keys=True)
        parsed = True
    except Exception:  # no JSON form, a lone surrogate, too deep for the parser, keys that
        # collide, an integer of more than 4,300 digits
        converted, text, made = _converted(tool, value, limits)
        parsed = False
    _check_converted(tool, converted, text, parsed, limits)
    return converted, len(text), made


def _check_converted(tool: Tool, converted: Any, text: bytes, parsed: bool, limits: Limits) -> None:
    """The checks of :func:`json_result_text` on converted data and its ``text``
    (``parsed``: made by the short way): no NaN or infinity, no integer too long to
    read back, within the size and depth limits.  Each looks into the data only when
    the text says it may have to."""
    if b"NaN" in text or b"Infinity" in text:
        where = _non_finite(converted)
        if where is not None:
            raise OutputValidationError(f"the output of {tool.name} is not JSON data: {where}")
    if not parsed or 0 < int_digits_limit() < _JITER_DIGITS:
        where = _find(converted, _big_int)
        if where is not None:
            raise _unreadable(tool, where)
    _check_size(tool, len(text), limits)
    limit = limits.max_output_depth
    # conversion refuses anything deeper than _CONVERTIBLE_DEPTH; count only below that
    if limit < _CONVERTIBLE_DEPTH and text.count(b"[") + text.count(b"{") > limit:
        depth = nesting_depth(converted)
        if depth > limit:
            raise _too_deep(tool, str(depth), limits)


def _converted(tool: Tool, value: Any, limits: Limits) -> tuple[Any, bytes, bytes | None]:
    """``(data, text, made)`` of :func:`json_result_text` the long way, for a value
    the short way refused: ``to_jsonable_python`` makes the data, then its text is
    made (``made``), or measured with lone surrogates kept (``made`` is None).
    Raises the :class:`~obelisk.errors.OutputValidationError` the value deserves."""
    try:
        converted = to_jsonable_python(value, fallback=_refuse)
    except _NotJSON as exc:
        raise OutputValidationError(
            f"the output of {tool.name} is not JSON data: {exc.args[0]} is not JSON serializable"
        ) from None
    except ValueError as exc:
        # pydantic-core's own cap: "Maximum serialization depth exceeded", or
        # "Circular reference detected (depth exceeded)" in older releases
        if "depth exceeded" in str(exc):
            raise _too_deep(tool, f"more than {_CONVERTIBLE_DEPTH}", limits) from None
        raise OutputValidationError(
            f"the output of {tool.name} is not JSON data: {type(exc).__name__}: {exc}"
        ) from None
    except Exception as exc:  # a serializer of the value's own failed, a cycle, bad UTF-8
        raise OutputValidationError(
            f"the output of {tool.name} is not JSON data: {type(exc).__name__}: {exc}"
        ) from None
    made: bytes | None = None
    try:
        text = made = log_text(converted)
    except ValueError:  # a lone surrogate, which UTF-8 cannot hold: measure it all the same
        text = json.dumps(converted, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )
    return converted, text, made


# pydantic-core's serializer refuses values nested deeper than this (levels)
_CONVERTIBLE_DEPTH = 255


def _too_deep(tool: Tool, depth: str, limits: Limits) -> OutputValidationError:
    allowed = min(limits.max_output_depth, _CONVERTIBLE_DEPTH)
    return OutputValidationError(
        f"the output of {tool.name} nests {depth} levels deep; at most "
        f"{allowed} are allowed (Limits.max_output_depth)"
    )


def _string_size(text: str) -> int:
    if len(text) < 1 << 20:  # cheap: at most 4 bytes a character
        return len(text) + 2
    return len(text.encode("utf-8", "surrogatepass")) + 2


def _check_size(tool: Tool, size: int, limits: Limits) -> None:
    if size > limits.max_output_bytes:
        raise OutputValidationError(
            f"the output of {tool.name} is {size:,} bytes of JSON; at most "
            f"{limits.max_output_bytes:,} are allowed (Limits.max_output_bytes)"
        )


def _unreadable(tool: Tool, where: str) -> OutputValidationError:
    return OutputValidationError(
        f"the output of {tool.name} is not JSON data that can be read back: {where} "
        f"(Python reads integers of at most {int_digits_limit():,} digits from JSON text: "
        "sys.get_int_max_str_digits())"
    )


# jiter reads integers of at most this many digits (Python's default limit)
_JITER_DIGITS = 4300
# an integer of at most this many bits has at most 640 digits, which Python always
# reads (sys.set_int_max_str_digits refuses a lower limit): no call needed on the hot path
_READABLE_BITS = 3 * 640


def _big_int(item: Any) -> str | None:
    """``an integer of 4,301 digits`` for an integer Python cannot read back from
    JSON text, else ``None``."""
    if type(item) is not int:
        return None
    digits = unreadable_digits(item)
    return None if digits is None else f"an integer of {digits:,} digits"


def _non_finite(value: Any) -> str | None:
    """Where ``value`` (JSON data) holds NaN or an infinity, e.g. ``nan at [2].price``,
    or ``None``."""
    return _find(value, _not_finite)


def _not_finite(item: Any) -> str | None:
    return str(item) if type(item) is float and not math.isfinite(item) else None


def _find(value: Any, problem: Callable[[Any], str | None]) -> str | None:
    """The first ``problem`` (a description of a scalar, or ``None``) in ``value``
    (JSON data), with where it is: ``nan at [2].price``; ``None`` when there is none."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        found = problem(item)
        if found is not None:
            return f"{found} at {path}" if path else found
        if isinstance(item, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return None


def result_writes(
    call: Call, tool: Tool, output: Any, limits: Limits = DEFAULT_LIMITS
) -> tuple[Any, Writes, int]:
    """``(value, writes, size)``: see :func:`result_writes_text`, which also returns
    the value's JSON text."""
    value, writes, size, _ = result_writes_text(call, tool, output, limits)
    return value, writes, size


def result_writes_text(
    call: Call, tool: Tool, output: Any, limits: Limits = DEFAULT_LIMITS
) -> tuple[Any, Writes, int, bytes | None]:
    """``(value, writes, size, text)``: the result as JSON data (:func:`sized_json_result`; an
    ``Outcome``'s value) and the writes it makes: its alternative's targets, each
    given that value (one object for every target: the state copies repeats).
    A tool's return annotation checks the value as returned, before conversion
    (:attr:`Tool.typed_output`); a JSON output schema checks the JSON data.

    Raises :class:`~obelisk.errors.OutcomeError` for an ``Outcome`` naming an
    alternative the call does not have, and
    :class:`~obelisk.errors.OutputValidationError` when the value is not JSON data
    or does not fit the tool's output schema, or is bigger or deeper than
    ``limits`` allow.  ``size`` is the value's size as JSON (bytes), ``text`` its compact
    JSON text or ``None`` (:func:`json_result_text`).  A call without
    ``_outputPath``
    writes nothing, whatever the outcome (docs/language.md, docs/semantics.md).
    """
    value, writes, size, text, misfit = validated_writes(call, tool, output, limits)
    if misfit is not None:
        raise OutputValidationError(misfit)
    return value, writes, size, text


def validated_writes(
    call: Call,
    tool: Tool,
    output: Any,
    limits: Limits = DEFAULT_LIMITS,
    validation: OutputValidation = "strict",
) -> tuple[Any, Writes, int, bytes | None, str | None]:
    """``(value, writes, size, text, misfit)``: :func:`result_writes_text` under
    ``validation`` (docs/tools.md, "Output validation").  ``misfit`` says how the
    value does not fit the tool's output schema or return annotation (``the output of
    enable_roaming does not fit its schema: expected an object, got "Roaming
    enabled"``), or is ``None``.  Under ``strict`` a value that does not fit makes no
    writes (``value`` is ``None``, ``writes`` empty) and ``misfit`` says why; under
    ``warn`` it is written as returned (made JSON data) and ``misfit`` is the
    warning; under ``off`` it is written and ``misfit`` is ``None`` (nothing checks
    it).  Raises :class:`~obelisk.errors.OutputValidationError` for a value with no
    JSON form, or bigger or deeper than ``limits`` allow, under every setting, and
    :class:`~obelisk.errors.OutcomeError` as :func:`result_writes_text` does.
    """
    alternatives = call.alternatives
    chosen: int | str = 0
    value = output
    if isinstance(output, Outcome):
        value = output.value
        chosen = tool.outcomes.index(output.k) if output.k in tool.outcomes else output.k
        if alternatives and (
            not isinstance(chosen, int)
            or isinstance(chosen, bool)
            or not 0 <= chosen < len(alternatives)
        ):
            count = len(alternatives)
            raise OutcomeError(
                f"{call.label} returned Outcome({output.k!r}, ...), but its _outputPath has "
                f"{count} alternative{'s' if count != 1 else ''}",
            )
    size, text = 0, None
    if validation == "off":  # nothing checks it: it only becomes JSON
        value, size, text = json_result_text(tool, value, limits)
        problems = []
    elif tool.typed_output:  # pydantic checks what the function returned, then it becomes JSON
        _refuse_iterator(tool, value)  # before pydantic, which would iterate it
        problems = tool.validate_output(value)
        if not problems or validation == "warn":
            value, size, text = json_result_text(tool, value, limits)
    else:  # a JSON schema checks JSON data
        value, size, text = json_result_text(tool, value, limits)
        problems = tool.validate_output(value)
    if problems:
        where = problems[0].path
        message = (
            f"the output of {tool.name} does not fit its schema"
            + (f" at {where}" if where else "")
            + f": {problems[0].message}"
        )
        if validation == "strict":
            return None, [], 0, None, message
        return value, _targets(alternatives, chosen, value), size, text, message
    return value, _targets(alternatives, chosen, value), size, text, None


def _targets(
    alternatives: tuple[tuple[Reference, ...], ...], chosen: int | str, value: Any
) -> Writes:
    """The writes of ``value`` to alternative ``chosen`` (none without ``_outputPath``)."""
    if not alternatives:
        return []
    assert isinstance(chosen, int)
    return [(ref, value) for ref in alternatives[chosen]]


def writes_for(call: Call, tool: Tool, output: Any) -> Writes:
    """The writes ``output`` makes (see :func:`result_writes`, which also returns
    the JSON value; raises as it does)."""
    return result_writes(call, tool, output)[1]


def error_arm(call: Call, tool: Tool, error: dict[str, Any]) -> Writes | None:
    """The writes of a failure routed to the error arm, or ``None`` when the call
    has no error arm (fewer than two alternatives, or the tool declares outcomes).

    The value written is ``{"error": {"type", "message", "tool", "call"}}``.
    """
    alternatives = call.alternatives
    if len(alternatives) < 2 or tool.outcomes:
        return None
    value = {"error": {**error, "tool": call.tool, "call": call.index}}
    return [(ref, value) for ref in alternatives[-1]]
