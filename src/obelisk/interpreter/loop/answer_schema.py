"""The answer schema: the JSON schema (draft 2020-12) a model's answer must fit, one
item schema per tool, with ``†`` references allowed in every argument and in the
output, and the tools as a ``tool`` message shows them (docs/loop.md).

:mod:`obelisk.interpreter.loop.messages` re-exports :func:`solution_schema`,
:func:`tool_description`, :func:`output_schema_with_references` and
:data:`IDENTICAL_CALLS`; :mod:`obelisk.interpreter.loop.schema_forms` turns the schema
into the strict form some providers demand.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Literal

from obelisk.interpreter.loop.reference_patterns import (
    REFERENCE_SCHEMA,
    SHARED,
    output_path_schema,
    shared_definitions,
)
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = [
    "IDENTICAL_CALLS",
    "output_schema_with_references",
    "solution_schema",
    "tool_description",
]

IDENTICAL_CALLS = (  # the instructions say it too (docs/loop.md)
    "A call you write again exactly as before (same _tool, arguments and _outputPath, or "
    "the same _id) runs once: if it succeeded it is kept, not run again; to run an "
    "identical call again on purpose, give it a new _id."
)
_EXPRESSION = REFERENCE_SCHEMA


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

    >>> from obelisk.interpreter.loop.reference_patterns import REFERENCE_PATTERN
    >>> made = output_schema_with_references({"type": "integer"})
    >>> made["anyOf"][1]["pattern"] == REFERENCE_PATTERN
    True
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


def _has_result(tool: Tool) -> bool:
    """Whether a call of ``tool`` gives a result worth keeping: every tool but one
    whose output schema admits only ``null`` (a Python function ``-> None``)."""
    return tool.output_schema != {"type": "null"}


def _call_item(tool: Tool, mode: str, defs: dict[str, Any]) -> dict[str, Any]:
    prefix = f"{tool.name}."
    parameters = _hoist(tool.parameters, prefix, defs)
    properties: dict[str, Any] = {"_tool": {"const": tool.name}}
    for name, schema in (parameters.get("properties") or {}).items():
        properties[name] = {"anyOf": [schema, _EXPRESSION]}
    properties["_outputPath"] = output_path_schema(tool, mode)
    properties["_outputMethod"] = {"enum": ["set", "merge", "assign", "push", "concat", "erase"]}
    properties["_instance"] = {"type": "string"}
    properties["_id"] = {"type": ["string", "integer"]}
    properties["_reasoningForCall"] = {"type": "string"}
    required = ["_tool", *(parameters.get("required") or [])]
    if tool.delegate:
        properties["_tools"] = _DELEGATE_TOOLS
    if _has_result(tool):  # a result written nowhere is lost: the model must place it
        required.append("_outputPath")
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
    accepts its own schema or an expression string (:data:`REFERENCE_PATTERN`); ``_outputPath``
    is required for every tool whose result is not always ``null``, so no result is
    written nowhere (docs/loop.md).  ``output`` is
    ``output_schema``, a reference, or ``null`` (any JSON value or ``null`` when
    no schema is given); inside it too, any value may be a reference
    (:func:`output_schema_with_references`), as the loop reads them
    (docs/loop.md).  Tools' ``$defs`` are hoisted to the top as ``<tool>.<name>``,
    the output schema's as ``output.<name>``; the reference and output-path schemas
    are there once, as ``reference`` and ``outputPath``, each use a ``$ref`` to them
    (their patterns are long).

    >>> from obelisk.interpreter.loop.reference_patterns import REFERENCE_PATTERN
    >>> from obelisk.interpreter.tools.registry import Registry
    >>> from obelisk.interpreter.tools.tool import Tool
    >>> schema = solution_schema(Registry([Tool.from_schema({"name": "ask"})]), {"type": "string"})
    >>> schema["properties"]["output"]["anyOf"]
    [{'type': 'string'}, {'$ref': '#/$defs/reference'}, {'type': 'null'}]
    >>> schema["$defs"]["reference"]["pattern"] == REFERENCE_PATTERN
    True
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
    used: set[str] = set()
    schema = shared_definitions(schema, used)
    defs = shared_definitions(defs, used)
    defs.update({name: SHARED[name] for name in sorted(used)})
    if defs:
        schema["$defs"] = defs
    return schema
