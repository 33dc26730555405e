"""What the execution loop sends a model and what it gets back (docs/loop.md).

A :class:`Request` is ``{"config", "schema", "context"}``: the loop's settings,
the JSON schema a :class:`Solution` must fit, and the context messages, rebuilt
from scratch for every request (there is no hidden chat history).  Context
messages are tagged by ``type``:

* ``{"type": "text", "text"}``: an instruction or a notice;
* ``{"type": "tool", "tools": [{"name", "description", "parameters", "output"?, "latent"}]}``;
* ``{"type": "input", "input", "instance"?}``: the read-only input (per instance);
* ``{"type": "state", "state", "instance"?, "schema"?}``: the current state (per
  instance), with the state's JSON schema when the loop has one;
* ``{"type": "data", "kind", "data"}``: another data document (``†data...``);
* ``{"type": "plan", "plan": [call, ...], "mode"}``: the calls carried over;
* ``{"type": "error", "call"?, "error": {"type", "message", ...}}``: one error record.

A :class:`Solution` is ``{"calls": [call, ...], "output": <user schema> | null}``.
:func:`solution_schema` builds its schema from a registry: one item schema per
tool in ``calls`` (its arguments, ``_tool`` as a const, ``_outputPath`` as a
string starting with ``†``, ``_output`` for latent tools in eager mode), and the
caller's output schema, made nullable, for ``output``, where any value may be a
reference (``"†state.summary"``), as the loop reads them in every mode.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from obelisk.errors import SolutionError
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import decimal_digits, loads_strict
from obelisk.limits import DEFAULT_LIMITS, int_digits_limit

__all__ = [
    "IDENTICAL_CALLS",
    "DataMessage",
    "ErrorMessage",
    "InputMessage",
    "Message",
    "PlanMessage",
    "Request",
    "Solution",
    "StateMessage",
    "TextMessage",
    "ToolMessage",
    "parse_solution",
    "message_data",
    "output_schema_with_references",
    "solution_schema",
    "tool_description",
]

IDENTICAL_CALLS = (  # the instructions say it too (docs/loop.md)
    "A call you write again exactly as before (same _tool, arguments and _outputPath, or "
    "the same _id) runs once: if it succeeded it is kept, not run again; to run an "
    "identical call again on purpose, give it a new _id."
)
_EXPRESSION = {"type": "string", "pattern": "^†", "description": "a reference, e.g. †state.x"}


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextMessage(_Message):
    """An instruction or notice for the model."""

    type: Literal["text"] = "text"
    text: str


class ToolMessage(_Message):
    """The tools the model may call (see :func:`tool_description`)."""

    type: Literal["tool"] = "tool"
    tools: list[dict[str, Any]]


class InputMessage(_Message):
    """The read-only input; ``instance`` names the instance it belongs to (docs/semantics.md)."""

    type: Literal["input"] = "input"
    input: Any
    instance: str | None = None


class StateMessage(_Message):
    """The current state as ``instance`` sees it (the shared state when ``None``);
    ``schema``: the JSON schema of the state, when the loop has one (``state_schema``),
    so the model plans against its shape."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    type: Literal["state"] = "state"
    state: Any
    instance: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class DataMessage(_Message):
    """Another data document, read as ``†<kind>...``."""

    type: Literal["data"] = "data"
    kind: str
    data: Any


class PlanMessage(_Message):
    """Calls carried into this request: every call of the last answer that was a
    solution, as the model wrote it (after any edit by the approver), those that ran
    included (the state shows what they did); on the first turn, the plan given to
    ``Loop.run``.  ``mode`` is the loop's (docs/loop.md, "The carried plan")."""

    type: Literal["plan"] = "plan"
    plan: list[dict[str, Any]]
    mode: Literal["eager", "lazy"] = "eager"


class ErrorMessage(_Message):
    """One error record ``{call, error}`` (docs/semantics.md): ``call`` is a label such as
    ``#3 issueRefund`` or ``None`` for a problem of the whole answer."""

    type: Literal["error"] = "error"
    call: str | None = None
    error: dict[str, Any]


Message = Annotated[
    TextMessage
    | ToolMessage
    | InputMessage
    | StateMessage
    | DataMessage
    | PlanMessage
    | ErrorMessage,
    Field(discriminator="type"),
]


def message_data(message: Message) -> dict[str, Any]:
    """A context message as plain JSON; an absent ``instance``, ``call`` or state
    ``schema`` is left out, a ``null`` payload is kept."""
    data = message.model_dump(mode="json", by_alias=True)
    for key in ("instance", "call", "schema"):
        if key in data and data[key] is None:
            del data[key]
    return data


class Request(_Message):
    """One request to a model: ``config`` (loop settings: mode, turn, ...),
    ``schema`` (the JSON schema of the expected :class:`Solution`) and ``context``."""

    config: dict[str, Any] = {}
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")
    context: list[Message] = []

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @property
    def schema(self) -> dict[str, Any]:  # type: ignore[override]
        """The solution's JSON schema."""
        return self.schema_

    def to_data(self) -> dict[str, Any]:
        """``{"config", "schema", "context": [message, ...]}`` as plain JSON values."""
        return {
            "config": self.config,
            "schema": self.schema_,
            "context": [message_data(m) for m in self.context],
        }

    def to_json(self) -> str:
        """The request as compact JSON text (what a model adapter sends)."""
        return json.dumps(self.to_data(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Request:
        """Inverse of :meth:`to_data`; raises ``pydantic.ValidationError`` on bad shapes."""
        return cls.model_validate(dict(data))


class Solution(_Message):
    """A model's answer: ``calls`` (plan calls as JSON objects) and ``output``
    (the final answer, or ``None`` to go on)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: list[dict[str, Any]] = []
    output: Any = None
    _usage: dict[str, int] | None = PrivateAttr(default=None)

    @property
    def usage(self) -> dict[str, int] | None:
        """Token usage of the answer when the model reported it
        (``{"prompt_tokens", "completion_tokens", "total_tokens"}``), else ``None``."""
        return self._usage

    def with_usage(self, usage: Mapping[str, int] | None) -> Solution:
        """A copy of this solution that carries ``usage`` (token counts)."""
        copied = self.model_copy()
        copied._usage = None if usage is None else dict(usage)
        return copied

    def to_data(self) -> dict[str, Any]:
        """``{"calls": [...], "output": ...}``."""
        return {"calls": self.calls, "output": self.output}


def _path_text(link: Any) -> str:
    """``"calls.0.x"`` for a chain of ``(parent link, key)`` pairs (``None`` ends it)."""
    parts: list[str] = []
    while link is not None:
        link, key = link
        parts.append(str(key))
    return ".".join(reversed(parts)) or "the answer"


def _unusable_value(value: Any, max_depth: int) -> str | None:
    """Why a decoded answer cannot be used as JSON data (``"calls.0.x: ..."``), or None.

    Iterative, so any nesting is safe: a value nested deeper than ``max_depth``
    levels, an integer of more digits than Python converts to text, an object key
    that is not a string.  The path of an item is a chain of links, made into text
    only for the problem found, so a large answer is walked in linear time.
    """
    digits_limit = int_digits_limit()
    stack: list[tuple[Any, int, Any]] = [(value, 0, None)]
    while stack:
        item, depth, link = stack.pop()
        if isinstance(item, bool) or not isinstance(item, (int, dict, list)):
            continue
        if isinstance(item, int):
            if digits_limit and item.bit_length() > 3 * digits_limit:
                digits = decimal_digits(item)
                if digits > digits_limit:
                    return (
                        f"{_path_text(link)}: integer of {digits} digits is too long (Python "
                        f"converts at most {digits_limit} digits)"
                    )
            continue
        if depth >= max_depth:
            return f"{_path_text(link)}: nested deeper than {max_depth} levels"
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    kind = type(key).__name__
                    return f"{_path_text(link)}: object keys must be strings, found {kind}"
                if isinstance(child, _WALKED):  # text, numbers and null need no look
                    stack.append((child, depth + 1, (link, key)))
        else:
            stack.extend(
                (child, depth + 1, (link, n))
                for n, child in enumerate(item)
                if isinstance(child, _WALKED)
            )
    return None


_WALKED = (dict, list, int)


_SOLUTION_DEPTH = DEFAULT_LIMITS.max_argument_depth + 3
"""A solution nests at most this deep: the object, ``calls``, a call, then an argument
(``Limits.max_argument_depth``); ``output`` gets the same room."""


def parse_solution(answer: str | bytes | Mapping[str, Any] | Solution) -> Solution:
    """A :class:`Solution` from JSON text or a decoded object.

    Raises :class:`SolutionError` when the text is not JSON or the value is not
    ``{"calls": [object, ...], "output": ...}``; the message names the first
    problem and where it is (``line 1 column 9`` or ``calls.2``).  The text is read
    strictly (``NaN``, ``Infinity``, integers too long for Python and nesting too
    deep to decode are errors, located); a value nested deeper than
    ``Limits.max_argument_depth`` + 3 levels, or holding an integer too long for
    Python, is an error too (docs/limits.md).  A :class:`Solution` built by hand is
    returned as it is, after the same checks of its values.

    >>> parse_solution('{"calls": [], "output": 42}').output
    42
    >>> parse_solution('{"calls": [1]}')
    Traceback (most recent call last):
    ...
    obelisk.SolutionError: the answer does not fit the solution shape: \
calls.0: Input should be a valid dictionary
    """
    if isinstance(answer, Solution):
        problem = _unusable_value(answer.to_data(), _SOLUTION_DEPTH)
        if problem is not None:  # a Solution built by hand, nested too deep
            raise SolutionError(f"the answer cannot be used: {problem}")
        return answer
    text = None
    if isinstance(answer, (str, bytes)):
        text = answer.decode("utf-8", "replace") if isinstance(answer, bytes) else answer
        try:
            answer = loads_strict(text)
        except json.JSONDecodeError as exc:
            raise SolutionError(
                f"the answer is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                text,
            ) from None
    if not isinstance(answer, Mapping):
        raise SolutionError(
            f'the answer must be a JSON object {{"calls": [...], "output": ...}}, '
            f"got {type(answer).__name__}",
            text,
        )
    problem = _unusable_value(dict(answer), _SOLUTION_DEPTH)
    if problem is not None:
        raise SolutionError(f"the answer cannot be used: {problem}", text)
    try:
        return Solution.model_validate(dict(answer))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise SolutionError(
            f"the answer does not fit the solution shape: {where}: {first['msg']}", text
        ) from None


def tool_description(tool: Tool) -> dict[str, Any]:
    """How a tool appears in a ``tool`` message:
    ``{"name", "description", "parameters", "output"?, "latent"}``."""
    described: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "latent": tool.latent,
    }
    if tool.output_schema is not None:
        described["output"] = tool.output_schema
    return described


def _rewrite_refs(schema: Any, prefix: str) -> Any:
    """Point ``#/$defs/X`` references at ``#/$defs/<prefix>X`` (defs are hoisted)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                out[key] = "#/$defs/" + prefix + value[len("#/$defs/") :]
            else:
                out[key] = _rewrite_refs(value, prefix)
        return out
    if isinstance(schema, list):
        return [_rewrite_refs(item, prefix) for item in schema]
    return schema


def _hoist(schema: Mapping[str, Any], prefix: str, defs: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` whose ``$defs`` move into ``defs`` as ``<prefix><name>``,
    with its ``#/$defs/...`` references rewritten to match."""
    copied: dict[str, Any] = _rewrite_refs(copy.deepcopy(dict(schema)), prefix)
    for name, definition in (copied.pop("$defs", None) or {}).items():
        defs[prefix + name] = definition
    return copied


_SUBSCHEMA = ("additionalProperties", "items", "additionalItems", "contains",
              "unevaluatedItems", "unevaluatedProperties")  # fmt: skip
_SUBSCHEMA_MAPS = ("properties", "patternProperties")
_SAME_VALUE = ("anyOf", "oneOf", "allOf")  # subschemas of the value itself
_SAME_VALUE_ONE = ("then", "else")


def _referable(schema: Any) -> Any:
    """``schema`` for a value that may also be a reference (``"†state.x"``), read
    before the value is used: ``anyOf [schema with its inner values referable,
    reference]``.  Boolean schemas and ``{}`` (any value) stay as they are."""
    if not isinstance(schema, dict) or not schema:
        return schema
    return {"anyOf": [_inner_referable(schema), _EXPRESSION]}


def _inner_referable(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` whose inner values (properties, items, ...) may each be
    a reference; applicators that look at the value itself (``anyOf``, ``oneOf``,
    ``allOf``, ``then``, ``else``, ``$defs``) get the same treatment inside, and
    ``not``, ``if`` and ``propertyNames`` are left alone (a key is never a reference)."""
    out = dict(schema)
    for key, value in schema.items():
        part = _REFERABLE_PARTS.get(key)
        if part is not None:
            out[key] = part(value)
    return out


def _subschema(value: Any) -> Any:
    """A subschema of inner values (or a list of them, old ``items``), referable."""
    return [_referable(item) for item in value] if isinstance(value, list) else _referable(value)


def _same_value(value: Any) -> Any:
    """A subschema of the value itself: its inner values referable."""
    return _inner_referable(value) if isinstance(value, dict) else value


def _in_list(part: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``part`` applied to each item of a list (anything else stays)."""
    return lambda value: [part(item) for item in value] if isinstance(value, list) else value


def _in_map(part: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``part`` applied to each value of an object (anything else stays)."""
    return lambda value: (
        {name: part(item) for name, item in value.items()} if isinstance(value, dict) else value
    )


_REFERABLE_PARTS: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(_SUBSCHEMA, _subschema),
    "prefixItems": _in_list(_referable),
    **dict.fromkeys(_SUBSCHEMA_MAPS, _in_map(_referable)),
    **dict.fromkeys(_SAME_VALUE, _in_list(_same_value)),
    **dict.fromkeys(_SAME_VALUE_ONE, _same_value),
    **dict.fromkeys(("$defs", "definitions", "dependentSchemas"), _in_map(_same_value)),
}
"""How :func:`_inner_referable` treats each keyword's value (other keywords stay)."""


def output_schema_with_references(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The schema of a solution's ``output`` for the caller's ``schema``: the final
    answer, where any value at any depth may be a reference (``"†state.total"``,
    read once the turn's calls have run, docs/loop.md), or ``null`` to go on.
    ``None`` (no output schema) gives ``{}``: any value.

    >>> output_schema_with_references({"type": "integer"})["anyOf"][1]
    {'type': 'string', 'pattern': '^†', 'description': 'a reference, e.g. †state.x'}
    """
    if schema is None:
        return {}
    inner = _inner_referable(dict(schema))
    defs = inner.pop("$defs", None)  # stays at the top, where #/$defs/... points
    made: dict[str, Any] = {"anyOf": [inner, _EXPRESSION, {"type": "null"}]}
    if defs is not None:
        made["$defs"] = defs
    return made


def _nullable(schema: Mapping[str, Any] | None, defs: dict[str, Any]) -> dict[str, Any]:
    if schema is None:
        return {}
    return _hoist(output_schema_with_references(schema), "output.", defs)


_NAMES = {"type": "array", "items": {"type": "string"}}
_DELEGATE_TOOLS = {
    "anyOf": [
        _NAMES,
        {
            "type": "object",
            "properties": {"allow": _NAMES, "deny": _NAMES},
            "additionalProperties": False,
        },
    ],
    "description": "the tools the delegate's own loop may use (default: none that write)",
}
"""A delegate call's ``_tools`` (docs/loop.md, "Delegates")."""


def _call_item(tool: Tool, mode: str, defs: dict[str, Any]) -> dict[str, Any]:
    prefix = f"{tool.name}."
    parameters = _hoist(tool.parameters, prefix, defs)
    properties: dict[str, Any] = {"_tool": {"const": tool.name}}
    for name, schema in (parameters.get("properties") or {}).items():
        properties[name] = {"anyOf": [schema, _EXPRESSION]}
    properties["_outputPath"] = _EXPRESSION
    properties["_outputMethod"] = {"enum": ["set", "merge", "assign", "push", "concat", "erase"]}
    properties["_instance"] = {"type": "string"}
    properties["_id"] = {"type": ["string", "integer"]}
    properties["_reasoningForCall"] = {"type": "string"}
    required = ["_tool", *(parameters.get("required") or [])]
    if tool.delegate:
        properties["_tools"] = _DELEGATE_TOOLS
    if tool.latent and not tool.delegate and mode == "eager":
        output = tool.output_schema
        properties["_output"] = _hoist(output, f"{prefix}output.", defs) if output else {}
    item: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    extra = parameters.get("additionalProperties", True)
    item["additionalProperties"] = extra is not False
    if tool.description:
        item["description"] = tool.description
    return item


def solution_schema(
    tools: Registry,
    output_schema: Mapping[str, Any] | None = None,
    *,
    mode: Literal["eager", "lazy"] = "eager",
) -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of a :class:`Solution` for ``tools``.

    ``calls`` items are ``anyOf`` one object schema per tool; each argument
    accepts its own schema or an expression string (``^†``).  ``output`` is
    ``output_schema``, a reference, or ``null`` (any JSON value or ``null`` when
    no schema is given); inside it too, any value may be a reference
    (:func:`output_schema_with_references`), as the loop reads them
    (docs/loop.md).  Tools' ``$defs`` are hoisted to the top as ``<tool>.<name>``,
    the output schema's as ``output.<name>``.

    >>> from obelisk.interpreter.tools.registry import Registry
    >>> from obelisk.interpreter.tools.tool import Tool
    >>> schema = solution_schema(Registry([Tool.from_schema({"name": "ask"})]), {"type": "string"})
    >>> output = schema["properties"]["output"]["anyOf"]
    >>> [option.get("pattern", option["type"]) for option in output]
    ['string', '^†', 'null']
    >>> schema["properties"]["calls"]["items"]["anyOf"][0]["properties"]["_tool"]
    {'const': 'ask'}
    """
    defs: dict[str, Any] = {}
    items = [_call_item(tool, mode, defs) for tool in tools]
    calls: dict[str, Any] = {
        "type": "array",
        "items": {"anyOf": items} if items else False,
        "description": IDENTICAL_CALLS,
    }
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"calls": calls, "output": _nullable(output_schema, defs)},
        "required": ["calls", "output"],
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    return schema
