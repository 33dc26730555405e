"""The schema a constrained decoder gets for one turn (docs/loop.md, "Schemas for
constrained decoders"): the request's answer schema, narrowed to what this turn's
request shows.

A decoder that follows this schema cannot write three mistakes small models make:

* a read of an input field that does not exist (``unresolved_reference``): a
  reference to the input names one of the input's own fields;
* an eager answer that neither calls a tool nor finishes (``{"calls": [], "output":
  null}``, which makes no progress): the answer has calls and ``output`` ``null``
  (the results show up in the next turn's state), or calls and an output that may
  read what they write (the task done in one answer; its references stay open, as
  no grammar can list the paths the calls will write), or no calls and an output;
  on the last turn, only the third; while the state is empty (nothing has run),
  only the first two;
* a finishing output that reads something missing or of the wrong shape
  (``invalid_output``): with no calls, nothing runs before the output is read, so each
  reference it may hold is one of the paths the state (or the input) has now, whose
  value fits the output schema where it stands.

:func:`decoding_schema` is what :class:`~obelisk.models.OpenAIChatModel` sends as the
grammar (``response_format``); ``Request.schema`` stays the loop's answer schema,
which every answer is read against.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator

from obelisk.interpreter.loop.messages import (
    DataMessage,
    InputMessage,
    PlanMessage,
    Request,
    StateMessage,
)
from obelisk.interpreter.loop.reference_patterns import reference_pattern

__all__ = ["decoding_schema", "state_paths"]

_REFERENCE = {"$ref": "#/$defs/reference"}
_NOT_NULL = {"type": ["object", "array", "string", "number", "boolean"]}
_MAX_PATHS = 200
_MAX_ITEMS = 8
_PLAIN = Draft202012Validator({"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_-]*$"})


def state_paths(root: str, value: Any, depth: int = 4) -> Iterator[tuple[str, Any]]:
    """``(reference, value)`` for ``value`` and what is inside it, as ``root``
    (``"†state"``) names it: ``†state.a.b``, ``†state.items[0]``, ``†state['a b']``;
    at most ``depth`` steps down and the first few items of a list."""
    yield root, value
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            if _PLAIN.is_valid(key):
                yield from state_paths(f"{root}.{key}", inner, depth - 1)
            elif isinstance(key, str) and "'" not in key and '"' not in key and "\\" not in key:
                yield from state_paths(f"{root}['{key}']", inner, depth - 1)
    elif isinstance(value, list):
        for index, inner in enumerate(value[:_MAX_ITEMS]):
            yield from state_paths(f"{root}[{index}]", inner, depth - 1)


def _documents(request: Request) -> tuple[Any, Any, bool, bool, tuple[str, ...]]:
    """``(input, state, instances, planned, roots)`` of a request: the input and the
    shared state (``None`` when absent), whether it has named instances, whether its
    plan message holds calls that have not run, and the documents a reference may
    start at (``state`` and the data kinds shown)."""
    input_value: Any = None
    state: Any = None
    instances = planned = False
    roots = ["state"]
    for message in request.context:
        if isinstance(message, DataMessage):
            roots.append(message.kind)
        if isinstance(message, InputMessage | StateMessage) and message.instance is not None:
            instances = True
        elif isinstance(message, InputMessage):
            input_value = message.input
        elif isinstance(message, StateMessage):
            state = message.state
        elif isinstance(message, PlanMessage):
            planned = any(call.get("_status") == "planned" for call in message.plan)
    return input_value, state, instances, planned, tuple(roots)


def _unwrapped(schema: Any) -> Any:
    """``schema`` without the reference alternatives the answer schema added."""
    if isinstance(schema, list):
        return [_unwrapped(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list) and _REFERENCE in options and len(schema) == 1:
        rest = [option for option in options if option != _REFERENCE]
        return _unwrapped(rest[0]) if len(rest) == 1 else {"anyOf": _unwrapped(rest)}
    return {key: _unwrapped(value) for key, value in schema.items()}


class _Fitting:
    """Replaces each reference alternative of an output schema by the references
    whose value, read now, fits the alternative beside it."""

    def __init__(self, defs: Mapping[str, Any], paths: list[tuple[str, Any]]) -> None:
        self.defs = _unwrapped(dict(defs))
        self.paths = paths

    def fitting(self, schema: Any) -> list[str]:
        whole = {**_unwrapped(schema), "$defs": self.defs} if isinstance(schema, dict) else schema
        try:
            check = Draft202012Validator(whole)
            return [path for path, value in self.paths if check.is_valid(value)]
        except Exception:  # an unusual schema: offer no reference here
            return []

    def narrow(self, schema: Any) -> Any:
        if isinstance(schema, list):
            return [self.narrow(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        options = schema.get("anyOf")
        if isinstance(options, list) and _REFERENCE in options:
            rest = [self.narrow(o) for o in options if o not in (_REFERENCE, {"type": "null"})]
            found = self.fitting(rest[0] if len(rest) == 1 else {"anyOf": rest})
            narrowed = rest + ([{"enum": found}] if found else [])
            others = {k: self.narrow(v) for k, v in schema.items() if k != "anyOf"}
            return {**others, "anyOf": narrowed} if len(narrowed) > 1 or others else narrowed[0]
        return {key: self.narrow(value) for key, value in schema.items()}


_TEXT = '^([^†"\\\\\\x00-\\x1f][^"\\\\\\x00-\\x1f]*)?$'
"""A plain text that a decoder cannot write as a reference in disguise (the loop
reads a text starting with ``†`` as a reference), nor with a quote, backslash or
control character (which would let it end the JSON string early)."""
_FREE_TEXT = ("pattern", "enum", "const", "format", "contentEncoding", "contentMediaType")


def _no_reference_literals(schema: Any) -> None:
    """Give each plain text schema inside ``schema`` (in place) the :data:`_TEXT`
    pattern: a reference goes through the reference schema, checked as the
    request's documents allow, not through a text argument."""
    if isinstance(schema, list):
        for item in schema:
            _no_reference_literals(item)
    elif isinstance(schema, dict):
        if schema.get("type") == "string" and not any(key in schema for key in _FREE_TEXT):
            schema["pattern"] = _TEXT
        for key, value in schema.items():
            if key not in ("properties", "$defs") or not isinstance(value, dict):
                _no_reference_literals(value)
            else:
                for inner in value.values():
                    _no_reference_literals(inner)


def _shape(schema: Mapping[str, Any], calls: dict[str, Any], output: Any) -> dict[str, Any]:
    properties = {"calls": {**schema["properties"]["calls"], **calls}, "output": output}
    return {**{k: v for k, v in schema.items() if k != "$defs"}, "properties": properties}


def _finishing(
    schema: dict[str, Any], paths: list[tuple[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The answer with no calls and an output whose references read ``paths``, and
    the ``$defs`` it needs (the output's own, narrowed alike: only the output reads
    them)."""
    defs = copy.deepcopy(schema.get("$defs") or {})
    fitting = _Fitting(defs, paths)
    output = schema["properties"]["output"]
    if output in ({}, True):
        found = [path for path, _ in paths]
        narrowed: Any = {"anyOf": [_NOT_NULL, {"enum": found}]} if found else _NOT_NULL
    else:
        narrowed = fitting.narrow(output)
    for name in [name for name in defs if name.startswith("output.")]:
        defs[name] = fitting.narrow(defs[name])
    return _shape(schema, {"maxItems": 0}, narrowed), defs


_OPEN = "open."
"""The prefix of the ``$defs`` an open output (:func:`_open_output`) reads: the
output's own, with their references left open, beside the narrowed ones."""


def _reopened(schema: Any) -> Any:
    """``schema`` with each ``$ref`` to an ``output.`` definition pointing at its
    open copy (``open.output.``)."""
    if isinstance(schema, list):
        return [_reopened(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/output."):
        schema = {**schema, "$ref": "#/$defs/" + _OPEN + ref.removeprefix("#/$defs/")}
    return {key: _reopened(value) if key != "$ref" else value for key, value in schema.items()}


def _open_output(schema: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The output of an answer that calls and finishes at once: any output but
    ``null``, whose references stay open (they may read what this answer's own
    calls write, which no grammar can list), and the open copies of the output's
    ``$defs`` it reads."""
    output = schema["properties"]["output"]
    defs = schema.get("$defs") or {}
    opened = {_OPEN + k: _reopened(v) for k, v in defs.items() if k.startswith("output.")}
    if output in ({}, True):
        return _NOT_NULL, opened
    options = output.get("anyOf") if isinstance(output, dict) else None
    if isinstance(options, list) and len(output) == 1:
        rest = [option for option in options if option != {"type": "null"}]
        output = rest[0] if len(rest) == 1 else {"anyOf": rest}
    return _reopened(output), opened


def _narrow_references(
    schema: dict[str, Any], input_value: Any, instances: bool, roots: tuple[str, ...]
) -> None:
    """Restrict the shared reference schema to the request's documents and the
    input's fields (a dict input, no instances)."""
    defs = schema.get("$defs") or {}
    if "reference" not in defs or instances or not isinstance(input_value, dict | None):
        return
    keys = [key for key in input_value or {} if isinstance(key, str)]
    defs["reference"] = {**defs["reference"], "pattern": reference_pattern(keys, roots)}


def decoding_schema(request: Request) -> dict[str, Any]:
    """The schema to constrain this turn's answer with: ``request.schema`` narrowed
    as the module says (a copy; ``request.schema`` itself when it is not a loop's
    answer schema with references, ``$defs.reference``).  The answer shapes apply
    to an eager turn (``config`` with ``mode`` ``"eager"``, ``turn`` and
    ``max_turns``, as the loop's requests have) with no planned calls and no named
    instances."""
    original = request.schema
    answer = set(original.get("properties") or {}) == {"calls", "output"}
    if not answer or "reference" not in (original.get("$defs") or {}):
        return original
    schema = copy.deepcopy(original)
    input_value, state, instances, planned, roots = _documents(request)
    _narrow_references(schema, input_value, instances, roots)
    _no_reference_literals(schema)
    config = request.config
    turn, max_turns = config.get("turn"), config.get("max_turns")
    if config.get("mode") != "eager" or planned or instances:
        return schema
    if not isinstance(turn, int) or not isinstance(max_turns, int):
        return schema
    return _eager_shapes(schema, input_value, state, last=turn >= max_turns)


def _eager_shapes(
    schema: dict[str, Any], input_value: Any, state: Any, last: bool
) -> dict[str, Any]:
    """The eager answer shapes of the module's docstring, for an answer schema
    narrowed as the request allows: on the ``last`` turn only the finishing one;
    while ``state`` is empty, only those with calls."""
    paths = list(state_paths("†state", state if isinstance(state, dict) else {}))[1:]
    if input_value is not None:
        paths += list(state_paths("†input", input_value))
    finish, defs = _finishing(schema, paths[:_MAX_PATHS])
    if last:
        return {**finish, **({"$defs": defs} if defs else {})}  # the last turn: finish now
    go_on = _shape(schema, {"minItems": 1}, {"type": "null"})
    output, opened = _open_output(schema)
    call_and_finish = _shape(schema, {"minItems": 1}, output)
    shapes = [go_on, call_and_finish] + ([finish] if state else [])  # nothing run: call
    return {"anyOf": shapes, "$defs": {**(schema.get("$defs") or {}), **defs, **opened}}
