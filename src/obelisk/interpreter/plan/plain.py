"""The fast path of :func:`~obelisk.interpreter.plan.call.parse_call`: calls with nothing to report.

Most calls of real plans have string keys, a tool name, known meta keys with
well-formed values and expressions that parse within the limits.  :func:`plain_call`
recognises such a call and builds its :class:`~obelisk.interpreter.plan.model.Call`
without the general parser's bookkeeping (labels, per-call closures, diagnostics
paths), about twice as fast (benchmarks/check_throughput.py).  It never reports:
anything unusual returns None and the general parser handles the call, so every
diagnostic still comes from one place.
"""

from __future__ import annotations

from typing import Any

from obelisk.errors import ReferenceSyntaxError
from obelisk.grammar import DAGGER, Escaped, Expression, Reference, Wildcard, parse_expression
from obelisk.interpreter.plan.model import (
    META_KEYS,
    OUTPUT_METHODS,
    ROUND_TRIP_KEYS,
    ArgumentExpression,
    Call,
    alternatives_of,
    new_argument_expression,
    new_call,
)
from obelisk.interpreter.plan.scan import (
    SMALL_INT,
    ArgPath,
    ValueProblem,
    huge_digits,
    path_depth_problem,
    scan_value,
)
from obelisk.limits import Limits, int_digits_limit

__all__ = ["plain_call"]

_META = frozenset(META_KEYS)
_TOP_PATHS: dict[str, tuple[str]] = {}
"""``(name,)``, the path of an expression that is a whole argument, per argument name:
one tuple shared by every call with that argument rather than one per expression,
so a large plan leaves fewer objects for the garbage collector to walk."""
_MAX_TOP_PATHS = 4096  # emptied when full: a plan of many distinct names grows it no further
_MAX_SHARED_NAME = 64  # characters: longer names get a tuple of their own, not kept after
_PLAIN_META = frozenset(("_tool", "_outputPath", "_output"))  # no other meta to read


def _plain_expression(text: str, limits: Limits) -> Expression | Escaped | None:
    """The parsed expression ``text``, or None when it has a problem to report."""
    try:
        node = parse_expression(text)
    except ReferenceSyntaxError:
        return None
    if type(node) is Reference:  # the common case, without path_depth_problem's loop
        return node if len(node.segments) <= limits.max_path_depth else None
    return node if path_depth_problem(node, limits) is None else None


class _WrittenPath:
    """Holds a plain call's ``written_meta``, ``{"_outputPath": ...}``: the dicts of its
    instances share one table of keys (PEP 412), about 100 bytes a call instead of 190."""

    _outputPath: Any  # the key as written in a plan


def _written_path(output_path: Any) -> dict[str, Any]:
    held = _new_object(_WrittenPath)
    held._outputPath = output_path
    written: dict[str, Any] = held.__dict__
    return written


_new_object = object.__new__
_ARGUMENT_HOLDERS: dict[tuple[str, ...], type] = {}
"""A plain holder class per tuple of argument names (the calls of one tool mostly
have the same): the ``arguments`` dicts of its instances share one table of keys
(PEP 412), about 90 bytes a call less for two arguments."""
_MAX_HOLDERS = 256  # emptied when full: a stream of distinct names grows it no further
_MAX_HELD_ARGUMENTS = 8  # a call with more arguments, or a longer name, keeps a dict of its own


def _shared_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` (names that do not start with ``_``) in a key-sharing dict: a
    plain ``dict`` equal to it, in the same order."""
    if not arguments or len(arguments) > _MAX_HELD_ARGUMENTS:
        return arguments
    if any(len(name) > _MAX_SHARED_NAME for name in arguments):
        return arguments  # a long name is not kept alive by the table
    names = tuple(arguments)
    holder = _ARGUMENT_HOLDERS.get(names)
    if holder is None:
        if len(_ARGUMENT_HOLDERS) >= _MAX_HOLDERS:
            _ARGUMENT_HOLDERS.clear()
        holder = _ARGUMENT_HOLDERS[names] = type("_Arguments", (), {"__module__": __name__})
    held: Any = _new_object(holder)
    for name, value in arguments.items():
        setattr(held, name, value)
    shared: dict[str, Any] = held.__dict__
    return shared


def plain_call(raw: dict[Any, Any], index: int, limits: Limits) -> Call | None:
    """:func:`parse_call` of a call with nothing to report, or None.

    The fast path for the common call: string keys, a tool name, known meta keys
    with well-formed values, expressions that parse within the limits.  It decides
    only that there is no diagnostic and builds the same :class:`Call` the general
    code would; anything else (a problem, a warning) returns None, and the general
    code finds and reports it, so diagnostics keep one source.
    """
    tool = raw.get("_tool")
    if type(tool) is not str or not tool:
        return None
    keys = _plain_keys(raw, limits)
    if keys is None:
        return None
    arguments, expressions, plain_meta = keys
    output_path = raw.get("_outputPath")
    if type(output_path) is str and "_output" not in raw:  # the common case: a path alone
        target = _plain_target(output_path, limits)
        if target is None:
            return None
        has_output, output_value = False, None
    else:
        output = _plain_output(raw, limits)
        if output is None:
            return None
        has_output, output_value, output_path, target = output
    if plain_meta:
        method, instance, call_id, reasoning = "set", None, None, None
        after: tuple[str | int, ...] = ()
        written_meta = _written_path(output_path) if "_outputPath" in raw else {}
    else:
        meta = _plain_meta(raw)
        if meta is None:
            return None
        method, instance, call_id, reasoning, after = meta
        written_meta = {key: raw[key] for key in ROUND_TRIP_KEYS if key in raw}
    return new_call(
        {
            "index": index,
            "tool": tool,
            "arguments": arguments,
            "output_path": output_path,
            "output_method": method,
            "has_output": has_output,
            "output": output_value,
            "instance": instance,
            "id": call_id,
            "reasoning": reasoning,
            "after": after,
            "extra": {},
            "written_meta": written_meta,
            "expressions": tuple(expressions),
            "target": target,
            "outputs": alternatives_of(target) if target is not None else (),
        }
    )


def _plain_keys(
    raw: dict[Any, Any], limits: Limits
) -> tuple[dict[str, Any], list[ArgumentExpression], bool] | None:
    """``(arguments, their expressions, whether the only meta keys are _tool,
    _outputPath and _output)``, or None when a key or an argument has a problem."""
    arguments: dict[str, Any] = {}
    expressions: list[ArgumentExpression] = []
    plain_meta = True
    for key, value in raw.items():
        if type(key) is not str:
            return None
        if key[:1] == "_":  # a meta key (a slice is cheaper than startswith)
            if key not in _META or key == "_tools":
                return None  # an unknown_meta warning; _tools is scanned for limits there
            if key not in _PLAIN_META:
                plain_meta = False
            continue
        arguments[key] = value
        if type(value) is str:  # the common argument, without a call
            if value.startswith(DAGGER):
                node = _plain_expression(value, limits)
                if node is None:
                    return None
                top = _TOP_PATHS.get(key) or _top_path(key)
                expressions.append(new_argument_expression(top, value, node))
        elif not _plain_value(key, value, limits, expressions):
            return None
    return _shared_arguments(arguments), expressions, plain_meta


def _plain_value(
    key: str, value: Any, limits: Limits, expressions: list[ArgumentExpression]
) -> bool:
    """Append the expressions inside argument ``key``, a value other than a string, to
    ``expressions``; False when the value has a problem to report."""
    kind = type(value)
    if (
        kind is float
        or kind is bool
        or value is None
        or (kind is int and -SMALL_INT < value < SMALL_INT)
    ):
        return True
    found: list[tuple[ArgPath, str]] = []
    try:
        scan_value(value, (key,), limits, found)
    except ValueProblem:
        return False
    for path, text in found:
        nested = _plain_expression(text, limits)
        if nested is None:
            return False
        expressions.append(new_argument_expression(path, text, nested))
    return True


def _top_path(key: str) -> tuple[str]:
    """``(key,)`` for a name not in :data:`_TOP_PATHS`, kept there when it is short."""
    top = (key,)
    if len(key) <= _MAX_SHARED_NAME:  # a long name is not kept alive
        if len(_TOP_PATHS) >= _MAX_TOP_PATHS:
            _TOP_PATHS.clear()
        _TOP_PATHS[key] = top
    return top


def _plain_output(
    raw: dict[str, Any], limits: Limits
) -> tuple[bool, Any, str | None, Expression | None] | None:
    """``(has _output, _output, _outputPath, its target)``, or None when ``_output``
    or ``_outputPath`` has a problem to report."""
    has_output = "_output" in raw
    output = raw["_output"] if has_output else None
    if has_output and type(output) is not str:
        try:
            scan_value(output, (), limits, [])
        except ValueProblem:
            return None
    output_path = raw.get("_outputPath")
    if output_path is None:
        return has_output, output, None, None
    if type(output_path) is not str:
        return None
    target = _plain_target(output_path, limits)
    if target is None:
        return None
    return has_output, output, output_path, target


def _plain_target(text: str, limits: Limits) -> Expression | None:
    """The parsed output path ``text``, or None when it has a problem to report."""
    if not text.startswith(DAGGER):
        return None
    node = _plain_expression(text, limits)
    if type(node) is Reference:  # the common case: is any segment a wildcard?
        return None if Wildcard in map(type, node.segments) else node
    if node is None or isinstance(node, Escaped):
        return None
    for ref in node.references:
        for segment in ref.segments:
            if isinstance(segment, Wildcard):
                return None
    return node


def _plain_meta(
    raw: dict[str, Any],
) -> tuple[str, str | None, str | int | None, str | None, tuple[str | int, ...]] | None:
    """``(output method, instance, id, reasoning, after)`` read from a call's meta
    keys, or None when one of them has a problem to report."""
    method = raw.get("_outputMethod")
    if method is None:
        method = "set"
    elif not isinstance(method, str) or method not in OUTPUT_METHODS:
        return None
    instance, reasoning = raw.get("_instance"), raw.get("_reasoningForCall")
    call_id = raw.get("_id")
    if not (_optional_string(instance) and _optional_string(reasoning)):
        return None
    if not (_optional_string(call_id) or _small_int(call_id)):
        return None
    after = _plain_after(raw.get("_after"))
    if after is None:
        return None
    return method, instance, call_id, reasoning, after


def _optional_string(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _plain_after(after: Any) -> tuple[str | int, ...] | None:
    """``_after`` as a tuple (empty when absent), or None when it has a problem."""
    if after is None:
        return ()
    if type(after) is not list or not all(
        isinstance(item, str) or _small_int(item) for item in after
    ):
        return None
    return tuple(after)


def _small_int(value: Any) -> bool:
    """True for an integer (not a boolean) Python can turn into text."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not huge_digits(value, int_digits_limit())
    )
