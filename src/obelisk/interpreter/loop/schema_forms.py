"""The solution schema in the forms providers' decoders take (docs/loop.md, "Schemas
for constrained decoders").

:func:`~obelisk.interpreter.loop.messages.solution_schema` builds the loose form:
draft 2020-12, patterns anchored ``^...$``, which llama.cpp's grammar converter,
xgrammar (vLLM, SGLang) and outlines-core compile as they are.  OpenAI's strict
structured outputs take a subset only; :func:`strict_schema` rewrites a loose schema
into it and :func:`from_strict` reads an answer written in that form back:

* every object is closed (``additionalProperties: false``) and lists every property
  as required; a property that was optional is nullable instead, and ``null`` there
  means "left out" (:func:`from_strict` drops it);
* an object with free keys (``dict[str, X]``) is a list of ``{"key", "value"}``
  pairs; any value (``{}``) is ``#/$defs/strict.any``: text, a number, a boolean,
  ``null``, a list of any values, or an object as ``{"_object": [pairs]}``;
* ``oneOf`` becomes ``anyOf``, a list of types an ``anyOf``, ``allOf`` its merged
  items; keywords strict mode does not know are left out (the loop checks every
  argument itself, against the tool's own schema).

:func:`calls_left_to_check` is the schema an adapter checks a JSON-mode answer
against: the calls are only objects there, since ``check``'s diagnostics, located
at ``#3 issueRefund``, say what is wrong with a call better than a schema validator,
whose best match among the tools' item schemas may be another tool's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["ANY_DEF", "calls_left_to_check", "from_strict", "strict_schema"]

ANY_DEF = "strict.any"
_ANY_REF = f"#/$defs/{ANY_DEF}"
_OBJECT_KEY = "_object"  # an object inside an any value: {"_object": [pairs]}
_KEPT = frozenset(
    ("type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
     "const", "$ref", "description", "title", "pattern", "format", "minimum", "maximum",
     "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems")
)  # fmt: skip
_FORMATS = frozenset(
    ("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
)
_CONSTRAINING = frozenset(
    ("type", "properties", "additionalProperties", "items", "prefixItems", "anyOf", "oneOf",
     "allOf", "enum", "const", "$ref", "pattern", "required")
)  # fmt: skip
_NULL = {"type": "null"}


def _pair(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": value},
        "required": ["key", "value"],
        "additionalProperties": False,
    }


def _pairs(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "array",
        "items": _pair(value),
        "description": "an object, as the list of its key/value pairs",
    }


def _any_definition() -> dict[str, Any]:
    any_value = {"$ref": _ANY_REF}
    wrapped = {
        "type": "object",
        "properties": {_OBJECT_KEY: _pairs(any_value)},
        "required": [_OBJECT_KEY],
        "additionalProperties": False,
    }
    scalars = [{"type": name} for name in ("string", "number", "boolean", "null")]
    return {"anyOf": [*scalars, {"type": "array", "items": any_value}, wrapped]}


def _is_any(schema: Any) -> bool:
    """Whether ``schema`` admits every value (``{}``, ``true``, only annotations)."""
    return schema is True or (isinstance(schema, dict) and not _CONSTRAINING & schema.keys())


def _merged(schemas: list[Any]) -> dict[str, Any]:
    """``allOf``'s items as one schema (properties and requirements joined)."""
    merged: dict[str, Any] = {}
    for item in schemas:
        if not isinstance(item, dict):
            continue
        for key, value in item.items():
            if key == "properties" and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            elif key == "required" and isinstance(merged.get(key), list):
                merged[key] = [*merged[key], *value]
            else:
                merged[key] = value
    return merged


def _flattened(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with ``allOf`` merged in and ``oneOf`` made ``anyOf``."""
    made = dict(schema)
    if "allOf" in made:
        made = _merged([{k: v for k, v in made.items() if k != "allOf"}, *made["allOf"]])
    if "oneOf" in made:
        made["anyOf"] = [*made.pop("oneOf"), *made.get("anyOf", [])]
    return made


class _Strict:
    """One rewrite into the strict subset; remembers whether the any value was used."""

    def __init__(self) -> None:
        self.uses_any = False

    def any(self, schema: Any) -> dict[str, Any]:
        self.uses_any = True
        described = schema.get("description") if isinstance(schema, dict) else None
        return {"$ref": _ANY_REF, **({"description": described} if described else {})}

    def convert(self, schema: Any) -> dict[str, Any]:
        if schema is False:
            return {"type": "array", "maxItems": 0, "items": _NULL}  # an empty list only
        if _is_any(schema):
            return self.any(schema)
        schema = _flattened(schema)
        if "anyOf" in schema:
            return self.options(schema)
        if isinstance(schema.get("type"), list):
            types = schema["type"]
            return {"anyOf": [self.convert({**schema, "type": name}) for name in types]}
        if "$ref" in schema:
            return {"$ref": schema["$ref"]}
        if schema.get("type") == "object" or "properties" in schema:
            return self.object(schema)
        if schema.get("type") == "array" or "items" in schema or "prefixItems" in schema:
            return self.array(schema)
        return self.scalar(schema)

    def options(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``anyOf``: each branch converted, with the keywords beside it."""
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        shared = rest if _CONSTRAINING & rest.keys() else {}
        made: dict[str, Any] = {
            "anyOf": [self.convert({**shared, **branch}) for branch in schema["anyOf"]]
        }
        if "description" in schema:
            made["description"] = schema["description"]
        return made

    def object(self, schema: dict[str, Any]) -> dict[str, Any]:
        properties = schema.get("properties")
        extra = schema.get("additionalProperties", True)
        if not properties and extra is not False:  # free keys: a list of pairs
            made = _pairs(self.convert({} if extra is True else extra))
            if "description" in schema:
                made["description"] = f"{schema['description']} ({made['description']})"
            return made
        required = set(schema.get("required") or ())
        converted: dict[str, Any] = {}
        for name, value in (properties or {}).items():
            strict = self.convert(value)
            converted[name] = strict if name in required else {"anyOf": [strict, _NULL]}
        made = {
            "type": "object",
            "properties": converted,
            "required": list(converted),
            "additionalProperties": False,
        }
        for key in ("description", "title"):
            if key in schema:
                made[key] = schema[key]
        return made

    def array(self, schema: dict[str, Any]) -> dict[str, Any]:
        made = self.scalar({k: v for k, v in schema.items() if k not in ("items", "prefixItems")})
        made["type"] = "array"
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(prefix, list) and prefix:
            options = [*prefix, *([] if items is False else [items])]
            made["items"] = self.convert({"anyOf": options})
        elif items is False:
            made["maxItems"], made["items"] = 0, _NULL
        else:
            made["items"] = self.convert(items)
        return made

    def scalar(self, schema: dict[str, Any]) -> dict[str, Any]:
        made = {key: value for key, value in schema.items() if key in _KEPT}
        if made.get("format") not in _FORMATS:
            made.pop("format", None)
        return made


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a solution schema, or any JSON schema whose top is an object) in
    the subset of OpenAI's strict structured outputs (see the module docstring).
    Its ``$defs`` keep their names; ``strict.any`` is added when a value may be
    anything.  Pure: ``schema`` is not changed.

    >>> made = strict_schema({"type": "object", "properties": {"n": {"type": "integer"},
    ...     "note": {"type": "string", "minLength": 1}}, "required": ["n"]})
    >>> made["required"], made["additionalProperties"], made["properties"]["note"]
    (['n', 'note'], False, {'anyOf': [{'type': 'string'}, {'type': 'null'}]})
    """
    rewrite = _Strict()
    loose = copy.deepcopy(dict(schema))
    defs = loose.pop("$defs", None) or {}
    made = rewrite.convert(loose)
    strict_defs = {name: rewrite.convert(value) for name, value in defs.items()}
    if rewrite.uses_any:
        strict_defs[ANY_DEF] = _any_definition()
    if strict_defs:
        made["$defs"] = strict_defs
    return made


# -- reading an answer back -------------------------------------------------------------


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    """``schema`` with a local ``$ref`` (``#/$defs/name``) followed, a few times at most."""
    for _ in range(8):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        name = schema["$ref"].removeprefix("#/$defs/")
        schema = (root.get("$defs") or {}).get(name, True)
    return schema


def _branches(schema: Any, root: Mapping[str, Any]) -> list[Any]:
    """The alternatives ``schema`` offers, flattened: ``anyOf``/``oneOf`` items, types."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return [schema]
    if "allOf" in schema:
        schema = _merged([{k: v for k, v in schema.items() if k != "allOf"}, *schema["allOf"]])
    options = [*schema.get("anyOf", ()), *schema.get("oneOf", ())]
    if options:
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
        return [branch for option in options for branch in _branches({**rest, **option}, root)]
    if isinstance(schema.get("type"), list):
        return [{**schema, "type": name} for name in schema["type"]]
    return [schema]


def _any_back(value: Any) -> Any:
    """An any value read back: ``{"_object": [pairs]}`` becomes the object."""
    if isinstance(value, list):
        return [_any_back(item) for item in value]
    if isinstance(value, dict):
        pairs = value.get(_OBJECT_KEY)
        if len(value) == 1 and isinstance(pairs, list) and all(_is_pair(p) for p in pairs):
            return {pair["key"]: _any_back(pair["value"]) for pair in pairs}
        return {key: _any_back(item) for key, item in value.items()}
    return value


def _is_pair(item: Any) -> bool:
    return isinstance(item, dict) and item.keys() == {"key", "value"}


def _is_map(branch: Any) -> bool:
    return (
        isinstance(branch, dict)
        and not branch.get("properties")
        and branch.get("additionalProperties", True) is not False
        and (branch.get("type") == "object" or "additionalProperties" in branch)
    )


def _object_branch(value: dict[str, Any], branches: list[Any]) -> dict[str, Any] | None:
    """The object schema ``value`` was written for: the one whose constants
    (``_tool``) it matches, else the first that knows all its keys."""
    objects = [b for b in branches if isinstance(b, dict) and b.get("properties")]
    for branch in objects:
        constants = {
            name: sub["const"]
            for name, sub in branch["properties"].items()
            if isinstance(sub, dict) and "const" in sub
        }
        if constants and all(value.get(name) == const for name, const in constants.items()):
            return branch
    for branch in objects:
        if set(value) <= set(branch["properties"]):
            return branch
    return None


def from_strict(value: Any, schema: Any, root: Mapping[str, Any] | None = None) -> Any:
    """``value``, written for :func:`strict_schema` of the loose ``schema``, in the
    loose form: optional properties that are ``null`` left out, pairs made objects
    again.  ``root``: the schema ``$defs`` references point into (default
    ``schema``).  What it does not recognise stays as it is (the loop's checks
    report it).

    >>> loose = {"type": "object", "properties": {"n": {"type": "integer"},
    ...     "tags": {"type": "object", "additionalProperties": {"type": "string"}}}}
    >>> from_strict({"n": None, "tags": [{"key": "a", "value": "b"}]}, loose)
    {'tags': {'a': 'b'}}
    """
    root = schema if root is None else root
    if not isinstance(root, Mapping):
        root = {}
    branches = _branches(schema, root)
    if isinstance(value, dict):
        return _object_back(value, branches, root)
    if isinstance(value, list):
        return _list_back(value, branches, root)
    return value


def _object_back(value: dict[str, Any], branches: list[Any], root: Mapping[str, Any]) -> Any:
    branch = _object_branch(value, branches)
    if branch is None:
        return _any_back(value) if any(_is_any(b) for b in branches) else value
    required = set(branch.get("required") or ())
    properties = branch["properties"]
    return {
        name: from_strict(item, properties[name], root) if name in properties else item
        for name, item in value.items()
        if item is not None or name in required
    }


def _list_back(value: list[Any], branches: list[Any], root: Mapping[str, Any]) -> Any:
    arrays = [b for b in branches if isinstance(b, dict) and b.get("type") == "array"]
    maps = [b for b in branches if _is_map(b)]
    if maps and not arrays and all(_is_pair(item) for item in value):
        extra = maps[0].get("additionalProperties", True)
        return {item["key"]: from_strict(item["value"], extra, root) for item in value}
    if arrays:
        items = arrays[0].get("items", True)
        return [from_strict(item, items, root) for item in value]
    if any(_is_any(branch) for branch in branches):
        return _any_back(value)
    return value


def calls_left_to_check(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A solution ``schema`` whose ``calls`` items are only objects: what is left for
    an adapter to check of a JSON-mode answer, the calls being ``check``'s to judge
    (see the module docstring).  A schema without ``calls`` is returned as it is."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or "calls" not in properties:
        return dict(schema)
    calls = {"type": "array", "items": {"type": "object"}}
    return {**schema, "properties": {**properties, "calls": calls}}
