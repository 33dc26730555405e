"""What JSON types a JSON schema admits, for the ``type_mismatch`` check (docs/diagnostics.md).

The check is deliberately conservative: a schema whose types cannot be worked
out (``{}``, ``allOf``, unresolvable ``$ref``, ...) admits everything, so only a
reference that can *never* fit its parameter is reported.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from obelisk.grammar import Field, Index, Segment, Wildcard
from obelisk.json_values import copy_json

__all__ = [
    "JSON_TYPES",
    "STAND_IN_UNKNOWN",
    "MissingField",
    "admitted_types",
    "describe_types",
    "json_type",
    "schema_at",
    "stand_in",
    "stand_in_at",
    "types_compatible",
]

JSON_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})


class MissingField(str):
    """The reason :func:`schema_at` gives when a closed object has no such field
    (``"it has no field 'x'"``): no value of the schema holds the path."""

    __slots__ = ()


_MAX_DEPTH = 32


def _resolve(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    while isinstance(schema, Mapping) and "$ref" in schema and depth < _MAX_DEPTH:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return None
        target: Any = root
        for part in ref[2:].split("/"):
            if not isinstance(target, Mapping) or part not in target:
                return None
            target = target[part]
        schema = target
        depth += 1
    return schema


def json_type(value: Any) -> str:
    """The JSON type of a JSON value: ``"null"``, ``"boolean"``, ``"integer"``,
    ``"number"``, ``"string"``, ``"array"`` or ``"object"``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def admitted_types(
    schema: Any, root: Mapping[str, Any] | None = None, depth: int = 0
) -> frozenset[str] | None:
    """The JSON types ``schema`` admits, or None when it cannot be worked out."""
    if depth > _MAX_DEPTH:
        return None
    root = root if root is not None else (schema if isinstance(schema, Mapping) else {})
    schema = _resolve(schema, root)
    if not isinstance(schema, Mapping):  # true or false, or no schema at all
        return frozenset() if schema is False else None
    if "const" in schema:
        return frozenset({json_type(schema["const"])})
    if isinstance(schema.get("enum"), list):
        return frozenset(json_type(value) for value in schema["enum"])
    branches = _branches(schema)
    if branches is not None:
        return _union_types(branches, root, depth)
    return _declared_types(schema.get("type"))


def _branches(schema: Mapping[str, Any]) -> list[Any] | None:
    """The branches of ``schema``'s ``anyOf``, else of its ``oneOf``; None when it has
    no such list."""
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            return branches
    return None


def _union_types(branches: list[Any], root: Mapping[str, Any], depth: int) -> frozenset[str] | None:
    """The types any of ``branches`` admits; None when one branch's cannot be worked out."""
    union: set[str] = set()
    for branch in branches:
        types = admitted_types(branch, root, depth + 1)
        if types is None:
            return None
        union |= types
    return frozenset(union)


def _declared_types(declared: Any) -> frozenset[str] | None:
    """The types a ``type`` keyword names (one name or a list of them), or None."""
    if isinstance(declared, str) and declared in JSON_TYPES:
        return frozenset({declared})
    if isinstance(declared, list) and all(t in JSON_TYPES for t in declared):
        return frozenset(declared)
    return None


def _expand(types: frozenset[str]) -> frozenset[str]:
    # An integer is a number; a number may hold an integral value.
    if "integer" in types or "number" in types:
        return types | {"integer", "number"}
    return types


def types_compatible(produced: frozenset[str] | None, accepted: frozenset[str] | None) -> bool:
    """False only when no value of the produced types can be accepted."""
    if produced is None or accepted is None:
        return True
    return bool(_expand(produced) & _expand(accepted))


def schema_at(
    schema: Any, segments: tuple[Segment, ...], root: Mapping[str, Any] | None = None
) -> tuple[Any, str | None]:
    """Walk ``schema`` down ``segments``.

    Returns ``(sub_schema, None)``; ``sub_schema`` is None when the path leaves
    what the schema describes.  Returns ``(None, reason)`` when the schema
    rules the path out (a field a closed object does not have: a
    :class:`MissingField` reason; an index into something that is never an array).
    ``[*]`` goes to an array's ``items`` (or an object's ``additionalProperties``).
    """
    root = root if root is not None else (schema if isinstance(schema, Mapping) else {})
    current = schema
    for segment in segments:
        current = _one_branch(current, root)
        if not isinstance(current, Mapping):
            return None, None
        current, reason = _STEPS[type(segment)](current, segment, root)
        if reason is not None:
            return None, reason
    return current, None


def _one_branch(schema: Any, root: Mapping[str, Any]) -> Any:
    """``schema`` resolved; a union (``anyOf``, ``oneOf``) goes to its one branch that
    admits more than null, and to None when it has several."""
    schema = _resolve(schema, root)
    branches = _branches(schema) if isinstance(schema, Mapping) else None
    if branches is None:
        return schema
    live = [b for b in branches if admitted_types(b, root) != frozenset({"null"})]
    return _resolve(live[0], root) if len(live) == 1 else None


_Step = tuple[Any, str | None]  # (the schema one segment down, or None; why it cannot be)


def _field_step(schema: Mapping[str, Any], segment: Field, root: Mapping[str, Any]) -> _Step:
    """``.name``: the property's schema, or ``additionalProperties``'; a closed object
    without that field rules the path out (a :class:`MissingField` reason)."""
    types = admitted_types(schema, root)
    if types is not None and "object" not in types:
        return None, f"it is {describe_types(types)}, which has no field '{segment.name}'"
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and segment.name in properties:
        return properties[segment.name], None
    if schema.get("additionalProperties") is False and isinstance(properties, Mapping):
        close = difflib.get_close_matches(segment.name, sorted(properties), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return None, MissingField(f"it has no field '{segment.name}'{hint}")
    extra = schema.get("additionalProperties")
    return (extra if isinstance(extra, Mapping) else None), None


def _index_step(schema: Mapping[str, Any], segment: Index, root: Mapping[str, Any]) -> _Step:
    """``[i]``: the schema of the items; something never an array rules the path out."""
    types = admitted_types(schema, root)
    if types is not None and "array" not in types:
        return None, f"it is {describe_types(types)}, which cannot be indexed"
    items = schema.get("items")
    return (items if isinstance(items, Mapping) else None), None


def _wildcard_step(schema: Mapping[str, Any], segment: Wildcard, root: Mapping[str, Any]) -> _Step:
    """``[*]``: every item of an array (``items``), or value of an object
    (``additionalProperties``)."""
    types = admitted_types(schema, root)
    items = schema.get("items")
    if isinstance(items, Mapping) and (types is None or "object" not in types):
        return items, None
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping) and (types is None or "array" not in types):
        return extra, None
    return None, None


_STEPS: dict[type, Callable[[Mapping[str, Any], Any, Mapping[str, Any]], _Step]] = {
    Field: _field_step,
    Index: _index_step,
    Wildcard: _wildcard_step,
}


def describe_types(types: frozenset[str]) -> str:
    """``frozenset({"string", "null"})`` -> ``"null or a string"``."""
    words = {
        "null": "null",
        "boolean": "a boolean",
        "integer": "an integer",
        "number": "a number",
        "string": "a string",
        "array": "an array",
        "object": "an object",
    }
    ordered = [words[t] for t in sorted(types)]
    return " or ".join(ordered) if ordered else "nothing"


_NOTES = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)  # keywords that admit every value
_EMPTY: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0.0,
    "boolean": False,
    "null": None,
    "array": [],
    "object": {},
}
_UNKNOWN = object()  # no stand-in is obvious


def stand_in(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """A value ``schema`` obviously admits, where one is obvious: ``None`` for a schema
    that admits everything, a ``const``, the first ``enum`` value, or the empty value
    of a type with no constraints (``""``, ``0``, ``0.0``, ``False``, ``None``,
    ``[]``, or ``{}`` for an object that requires nothing); the first branch of an
    ``anyOf`` that has one.  :data:`STAND_IN_UNKNOWN` otherwise (a ``format``, a
    ``pattern``, bounds, required fields...)."""
    schema = _resolve(schema, root)
    if schema is True or (isinstance(schema, Mapping) and _NOTES.issuperset(schema)):
        return None
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return _UNKNOWN
    if "const" in schema:
        return copy_json(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return copy_json(enum[0])
    branches = schema.get("anyOf")
    if isinstance(branches, list) and _NOTES.issuperset(set(schema) - {"anyOf"}):
        return _first_stand_in(branches, root, depth)
    return _empty_value(schema)


def _first_stand_in(branches: list[Any], root: Mapping[str, Any], depth: int) -> Any:
    """The stand-in of the first of ``branches`` that has one."""
    for branch in branches:
        value = stand_in(branch, root, depth + 1)
        if value is not _UNKNOWN:
            return value
    return _UNKNOWN


_SHAPES_ONLY = {"array": {"items"}, "object": {"properties", "additionalProperties"}}
"""Keywords of a type's schema that leave its empty value admitted."""


def _empty_value(schema: Mapping[str, Any]) -> Any:
    """The empty value of the schema's ``type`` (a fresh list or object each time) when
    nothing else constrains it (beyond :data:`_SHAPES_ONLY`, notes, and an empty
    ``required``)."""
    declared = schema.get("type")
    if not isinstance(declared, str) or declared not in _EMPTY:
        return _UNKNOWN
    rest = set(schema) - _NOTES - {"type"} - _SHAPES_ONLY.get(declared, set())
    if declared == "object" and not schema.get("required"):
        rest.discard("required")
    return _UNKNOWN if rest else copy_json(_EMPTY[declared])


STAND_IN_UNKNOWN = _UNKNOWN
"""What :func:`stand_in` and :func:`stand_in_at` give when no stand-in is obvious."""


def stand_in_at(schema: Any, path: tuple[str | int, ...], root: Mapping[str, Any]) -> Any:
    """:func:`stand_in` of the part of ``schema`` at ``path`` (keys and list indexes
    inside a value of ``schema``): what a reference at that place of a literal is
    replaced by so that the literal around it can be validated (``check``,
    docs/diagnostics.md, ``invalid_argument``).  A key no property names goes to
    ``additionalProperties`` (anything when it is absent); under an ``anyOf``, the
    branches that hold the path must agree.  :data:`STAND_IN_UNKNOWN` otherwise."""
    found = _stand_in_at(schema, path, root)
    return _UNKNOWN if found is _MISSING else found


def _stand_in_at(schema: Any, path: tuple[str | int, ...], root: Mapping[str, Any]) -> Any:
    if not path:
        return stand_in(schema, root)
    schema = _resolve(schema, root)
    if schema is True or schema == {}:
        return None
    if not isinstance(schema, Mapping):
        return _UNKNOWN
    branches = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(branches, list):
        return _agreed_stand_in(branches, path, root)
    if isinstance(path[0], str):
        return _stand_in_at_key(schema, path[0], path[1:], root)
    return _stand_in_at_index(schema, path[0], path[1:], root)


def _agreed_stand_in(
    branches: list[Any], path: tuple[str | int, ...], root: Mapping[str, Any]
) -> Any:
    """The stand-in at ``path`` that every branch holding the path agrees on."""
    found = [_stand_in_at(branch, path, root) for branch in branches]
    held = [value for value in found if value is not _MISSING]
    if held and all(value is not _UNKNOWN and value == held[0] for value in held):
        return held[0]
    return _UNKNOWN


def _stand_in_at_key(
    schema: Mapping[str, Any], key: str, rest: tuple[str | int, ...], root: Mapping[str, Any]
) -> Any:
    """Down the property ``key`` (or ``additionalProperties``) of an object schema."""
    types = admitted_types(schema, root)
    if types is not None and "object" not in types:
        return _MISSING
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        return _stand_in_at(properties[key], rest, root)
    extra = schema.get("additionalProperties", True)
    return _MISSING if extra is False else _stand_in_at(extra, rest, root)


def _stand_in_at_index(
    schema: Mapping[str, Any], index: int, rest: tuple[str | int, ...], root: Mapping[str, Any]
) -> Any:
    """Down item ``index`` (``prefixItems``, else ``items``) of an array schema."""
    types = admitted_types(schema, root)
    if types is not None and "array" not in types:
        return _MISSING
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        return _stand_in_at(prefix[index], rest, root) if index < len(prefix) else _UNKNOWN
    return _stand_in_at(schema.get("items", True), rest, root)


_MISSING = object()  # (stand_in_at, a branch of anyOf) this branch cannot hold the path
