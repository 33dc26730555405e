"""What a JSON schema admits, for the strategies and the fakes (docs/testing.md).

:func:`inline_refs` (the dry run's, re-exported) resolves local ``$ref``;
:func:`known_types` tells which JSON types a value can have; :func:`accepts`
decides whether every value of one schema fits another (the test ``plans()`` makes
before it lets a reference feed a parameter); :func:`sub_schemas` lists the paths
a value always has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from obelisk.interpreter.analysis.schema_types import JSON_TYPES, json_type
from obelisk.interpreter.simulate.samples import ANNOTATIONS, inline_refs

__all__ = [
    "ANNOTATIONS",
    "ANY_TYPE",
    "JSON_TYPES",
    "accepts",
    "inline_refs",
    "known_types",
    "sub_schemas",
]

#: What an unconstrained schema (``{}``, ``true``) admits.
ANY_TYPE = JSON_TYPES

# -- what a schema admits ------------------------------------------------------------


def known_types(schema: Any) -> frozenset[str] | None:
    """The JSON types a value of ``schema`` (refs inlined) can have, or None when
    this cannot be told (``allOf``, ``not`` alone, unknown keywords).  ``{}`` and
    ``true`` give every type."""
    if schema is True:
        return ANY_TYPE
    if schema is False:
        return frozenset()
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return frozenset({json_type(schema["const"])})
    if isinstance(schema.get("enum"), list):
        return frozenset(json_type(value) for value in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            union: set[str] = set()
            for branch in schema[key]:
                types = known_types(branch)
                if types is None:
                    return None
                union |= types
            declared = _declared(schema)
            return frozenset(union & _widen(declared)) if declared is not None else frozenset(union)
    declared = _declared(schema)
    if declared is not None:
        return declared
    if set(schema) - ANNOTATIONS:
        return None
    return ANY_TYPE


def _declared(schema: Mapping[str, Any]) -> frozenset[str] | None:
    declared = schema.get("type")
    if isinstance(declared, str) and declared in JSON_TYPES:
        return frozenset({declared})
    if isinstance(declared, list) and declared and all(t in JSON_TYPES for t in declared):
        return frozenset(declared)
    return None


def _widen(types: frozenset[str]) -> frozenset[str]:
    return types | {"integer"} if "number" in types else types


def _type_filter(schema: Any) -> frozenset[str] | None:
    """The types of a schema that says nothing but which types it takes (annotations
    aside; ``anyOf`` of such schemas too), else None."""
    if schema is True:
        return ANY_TYPE
    if not isinstance(schema, Mapping):
        return None
    keys = set(schema) - ANNOTATIONS
    if not keys:
        return ANY_TYPE
    if keys == {"type"}:
        declared = _declared(schema)
        return _widen(declared) if declared is not None else None
    if keys == {"anyOf"} and isinstance(schema["anyOf"], list):
        union: set[str] = set()
        for branch in schema["anyOf"]:
            types = _type_filter(branch)
            if types is None:
                return None
            union |= types
        return frozenset(union)
    return None


def _strip(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        return {k: _strip(v) for k, v in schema.items() if k not in ANNOTATIONS}
    if isinstance(schema, list):
        return [_strip(item) for item in schema]
    return schema


def accepts(parameter: Any, produced: Any) -> bool:
    """True when every value that fits ``produced`` fits ``parameter`` (both with
    refs inlined; ``produced`` None means unknown).

    Sound, not complete: a parameter that only restricts types (``{"type":
    "number"}``, ``Optional[str]``, ``{}``) takes any producer whose types it
    covers (an integer is a number); a parameter with further constraints takes
    only a producer with the very same schema, annotations aside.
    """
    allowed = _type_filter(parameter)
    if allowed == ANY_TYPE:
        return True
    if produced is None:
        return False
    if allowed is not None:
        types = known_types(produced)
        return types is not None and bool(types) and types <= allowed
    return bool(_strip(parameter) == _strip(produced))


def sub_schemas(schema: Any, depth: int = 2) -> list[tuple[tuple[str, ...], Any]]:
    """``(path, sub_schema)`` for ``schema`` itself and every property that a valid
    value always has (``required``), down to ``depth`` levels: the paths a reference
    into such a value may read without ever missing."""
    found: list[tuple[tuple[str, ...], Any]] = [((), schema)]
    if depth <= 0 or not isinstance(schema, Mapping):
        return found
    if known_types(schema) != frozenset({"object"}):
        return found
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return found
    for name in schema.get("required") or ():
        if isinstance(name, str) and name in properties:
            for path, sub in sub_schemas(properties[name], depth - 1):
                found.append(((name, *path), sub))
    return found
