"""JSON schemas as Hypothesis strategies, type tests and seeded samples (docs/testing.md).

Three jobs, each used by the strategies and the fakes:

* :func:`strategy_for` turns a JSON schema into a strategy of values that fit it.
  Leaves (strings, numbers, ``enum``, ``format``, ``pattern``) come from
  ``hypothesis_jsonschema.from_schema``; objects, arrays, ``anyOf``/``oneOf`` and
  local ``$ref`` are composed here, because ``from_schema`` 0.23.1 fails on every
  object schema with current Hypothesis (``'many' object has no attribute
  'more'``).  Every drawn value is checked with :mod:`jsonschema`, so a keyword
  this module does not model can only make a draw be retried, never wrong.
* :func:`accepts` decides whether every value of one schema fits another: the
  test ``plans()`` uses before it lets a reference feed a parameter.
* :class:`SchemaSampler` draws a value from a schema with a seeded
  :class:`random.Random`, outside Hypothesis (for :class:`~obelisk.testing.FakeTools`).
"""

from __future__ import annotations

import json
import math
import random
import warnings
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, cast

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from obelisk.errors import UsageError

__all__ = [
    "ANY_TYPE",
    "JSON_TYPES",
    "SchemaSampler",
    "accepts",
    "inline_refs",
    "json_values",
    "known_types",
    "strategy_for",
    "sub_schemas",
]

JSON_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
#: What an unconstrained schema (``{}``, ``true``) admits.
ANY_TYPE = JSON_TYPES
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$schema",
        "$id",
        "$defs",
        "definitions",
    }
)
_MAX_REF_DEPTH = 16

_scalar_options = (
    st.none(),
    st.booleans(),
    st.integers(-(2**31), 2**31),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
)
_scalars = st.one_of(*_scalar_options)
#: Small JSON values, nested two deep at most: what a schema of ``{}`` admits.  (Not
#: ``st.recursive``: its bookkeeping costs more than the rest of a plan.)
json_values: st.SearchStrategy[Any] = st.one_of(
    *_scalar_options,
    st.lists(_scalars, max_size=3),
    st.dictionaries(
        st.text(max_size=6), st.one_of(_scalars, st.lists(_scalars, max_size=2)), max_size=3
    ),
)


# -- $ref ---------------------------------------------------------------------------


def _lookup(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        raise UsageError(f"cannot resolve $ref {ref!r}: only local references ('#/...') are")
    target: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            raise UsageError(f"cannot resolve $ref {ref!r}: no {part!r} in the schema")
        target = target[part]
    return target


def inline_refs(schema: Any, root: Mapping[str, Any] | None = None, depth: int = 0) -> Any:
    """``schema`` with every local ``$ref`` replaced by what it points to.

    ``root`` is the document refs resolve against (default: ``schema``).  Raises
    :class:`~obelisk.errors.UsageError` for a remote or dangling ``$ref`` and for a
    recursive schema (deeper than 16 references).
    """
    if root is None:
        root = schema if isinstance(schema, Mapping) else {}
    if depth > _MAX_REF_DEPTH:
        raise UsageError("cannot generate values for a recursive schema ($ref nested too deep)")
    if isinstance(schema, list):
        return [inline_refs(item, root, depth) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    if isinstance(schema.get("$ref"), str):
        target = inline_refs(_lookup(root, schema["$ref"]), root, depth + 1)
        rest = {k: v for k, v in schema.items() if k not in ("$ref", "$defs", "definitions")}
        if not rest:
            return target
        if isinstance(target, Mapping):
            return {**target, **{k: inline_refs(v, root, depth) for k, v in rest.items()}}
        return target
    return {
        key: (
            value
            if key in ("$defs", "definitions", "const", "enum", "default", "examples")
            else inline_refs(value, root, depth)
        )
        for key, value in schema.items()
        if key not in ("$defs", "definitions")
    }


# -- what a schema admits ------------------------------------------------------------


def _value_type(value: Any) -> str:
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
    return "array" if isinstance(value, list) else "object"


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
        return frozenset({_value_type(schema["const"])})
    if isinstance(schema.get("enum"), list):
        return frozenset(_value_type(value) for value in schema["enum"])
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
    if set(schema) - _ANNOTATIONS:
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
    keys = set(schema) - _ANNOTATIONS
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
        return {k: _strip(v) for k, v in schema.items() if k not in _ANNOTATIONS}
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


# -- strategies ---------------------------------------------------------------------


def _canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, default=repr)


def strategy_for(schema: Any, where: Callable[[Any], bool] | None = None) -> st.SearchStrategy[Any]:
    """A strategy of JSON values that fit ``schema`` (a JSON schema; local ``$ref``
    allowed; draft 2020-12 keywords) and, when given, satisfy ``where``.

    Raises :class:`~obelisk.errors.UsageError` for a schema that is not valid, has a
    remote ``$ref`` or is recursive.  Strategies without ``where`` are cached by the
    schema's text.
    """
    if where is None:
        return _cached_strategy(_canonical(schema))
    strategy, valid = _parts(_canonical(schema))
    # One filter, not two: Hypothesis re-validates a strategy with two chained
    # non-rewritable filters on every draw (6.170), which costs a source lookup each.
    return strategy.filter(lambda value: valid(value) and where(value))


@lru_cache(maxsize=512)
def _cached_strategy(text: str) -> st.SearchStrategy[Any]:
    strategy, valid = _parts(text)
    return strategy.filter(valid)


@lru_cache(maxsize=512)
def _parts(text: str) -> tuple[st.SearchStrategy[Any], Callable[[Any], bool]]:
    schema = json.loads(text)
    if isinstance(schema, Mapping):
        try:
            Draft202012Validator.check_schema(schema)
        except Exception as exc:
            raise UsageError(f"not a valid JSON schema: {exc}".split("\n")[0]) from None
    inlined = inline_refs(schema)
    if not isinstance(inlined, Mapping):
        return _build(inlined), lambda value: inlined is not False
    if _exact(inlined):  # built keyword by keyword: every value fits, no need to check
        return _build(inlined), lambda value: True
    return _build(inlined), Draft202012Validator(inlined).is_valid


# Keywords _build honours exactly (leaves with other keywords go to from_schema,
# which honours them too).
_MODELLED = _ANNOTATIONS | {
    "type",
    "const",
    "enum",
    "anyOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
}


def _exact(schema: Any) -> bool:
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping) or set(schema) - _MODELLED:
        return False
    if "anyOf" in schema and set(schema) - _ANNOTATIONS - {"anyOf"}:
        return False  # a branch merged with sibling keywords: let jsonschema decide
    if "type" not in schema and set(schema) - _ANNOTATIONS - {"const", "enum", "anyOf"}:
        return False  # the type is guessed from the keywords
    parts = [*(schema.get("properties") or {}).values(), *(schema.get("anyOf") or ())]
    parts += [*(schema.get("prefixItems") or ())]
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), (Mapping, bool)):
            parts.append(schema[key])
    return all(_exact(part) for part in parts)


def _build(schema: Any) -> st.SearchStrategy[Any]:
    if schema is True or schema == {}:
        return json_values
    if schema is False:
        return st.nothing()
    assert isinstance(schema, Mapping)
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list):
        return st.sampled_from(schema["enum"])
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return st.one_of([_build(_merge(rest, branch)) for branch in schema[key]])
    declared = schema.get("type")
    if isinstance(declared, list):
        return st.one_of([_build({**schema, "type": t}) for t in declared])
    if declared is None:
        declared = _guess_type(schema)
        if declared is None:
            return json_values
    if declared == "object":
        return _object(schema)
    if declared == "array":
        return _array(schema)
    simple = _SIMPLE.get(declared)
    if simple is not None and not set(schema) - _ANNOTATIONS - {"type"}:
        return simple
    return _leaf(_canonical(schema))


# Unconstrained leaves: each is one Hypothesis choice (from_schema's text() draws
# one choice per character, through an explicit alphabet).
_SIMPLE: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(),
    "integer": st.integers(),
    "number": st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)),
    "boolean": st.booleans(),
    "null": st.none(),
}


def _merge(base: Mapping[str, Any], branch: Any) -> Any:
    if not isinstance(branch, Mapping):
        return branch
    merged = {k: v for k, v in base.items() if k not in _ANNOTATIONS}
    merged.update(branch)
    return merged


def _guess_type(schema: Mapping[str, Any]) -> str | None:
    if {"properties", "required", "additionalProperties"} & set(schema):
        return "object"
    if {"items", "prefixItems", "minItems", "maxItems"} & set(schema):
        return "array"
    if {"minLength", "maxLength", "pattern", "format"} & set(schema):
        return "string"
    if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} & set(schema):
        return "number"
    return None


@lru_cache(maxsize=512)
def _leaf(text: str) -> st.SearchStrategy[Any]:
    from hypothesis_jsonschema import from_schema

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cast(st.SearchStrategy[Any], from_schema(json.loads(text)))


def _object(schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties") or {}
    required = [name for name in schema.get("required") or () if isinstance(name, str)]
    fixed = {name: _build(properties.get(name, True)) for name in required}
    optional = {name: _build(sub) for name, sub in properties.items() if name not in fixed}
    base: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(fixed, optional=optional)
    extra = schema.get("additionalProperties", True)
    if extra is False or schema.get("unevaluatedProperties") is False:
        return base
    extra_values = json_values if extra is True else _build(extra)
    names = schema.get("propertyNames")
    keys = (
        _build({"type": "string", **names}) if isinstance(names, Mapping) else st.text(max_size=6)
    )
    others = st.dictionaries(
        keys.filter(lambda key: key not in properties), extra_values, max_size=2
    )
    return st.builds(lambda known, more: {**more, **known}, base, others)


def _array(schema: Mapping[str, Any]) -> st.SearchStrategy[list[Any]]:
    prefix = [_build(sub) for sub in schema.get("prefixItems") or ()]
    items = schema.get("items", True)
    low = int(schema.get("minItems", 0))
    high = schema.get("maxItems")
    high = int(high) if high is not None else max(low, len(prefix)) + 3
    unique = bool(schema.get("uniqueItems"))
    head: st.SearchStrategy[list[Any]] = st.tuples(*prefix).map(list)
    if items is False:
        return head
    tail_low = max(0, low - len(prefix))
    tail_high = max(tail_low, high - len(prefix))
    tail = st.lists(
        json_values if items is True else _build(items),
        min_size=tail_low,
        max_size=tail_high,
        unique_by=_canonical if unique else None,
    )
    if not prefix:
        return tail
    return st.builds(lambda a, b: a + b, head, tail)


# -- seeded samples, outside Hypothesis -----------------------------------------------


class SchemaSampler:
    """Values that fit a JSON schema, drawn with a seeded :class:`random.Random`.

    Deterministic: the same seed gives the same values.  Covers ``type``,
    ``const``, ``enum``, ``anyOf``/``oneOf``, objects (``properties``,
    ``required``), arrays (``items``, ``prefixItems``, ``minItems``), numeric
    bounds and string lengths; every value is checked with :mod:`jsonschema` and
    redrawn (up to 50 times) when it does not fit.  Raises
    :class:`~obelisk.errors.UsageError` when no fitting value turns up (a
    ``pattern`` or ``format`` it does not model, say): give such a tool a scripted
    output instead.
    """

    def __init__(self, schema: Any) -> None:
        self.schema = inline_refs(schema) if schema is not None else True
        self._validator = (
            Draft202012Validator(self.schema) if isinstance(self.schema, Mapping) else None
        )

    def sample(self, rng: random.Random) -> Any:
        """One value that fits the schema."""
        for _ in range(50):
            value = self._draw(self.schema, rng, 0)
            if self._validator is None or self._validator.is_valid(value):
                return value
        raise UsageError(
            f"cannot generate a value for the schema {_canonical(self.schema)[:200]}; "
            "give this tool a scripted output (outputs={name: value})"
        )

    def _draw(self, schema: Any, rng: random.Random, depth: int) -> Any:
        if schema is True or schema == {} or not isinstance(schema, Mapping):
            return self._any(rng, depth)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
                return self._draw(_merge(rest, rng.choice(schema[key])), rng, depth)
        declared = schema.get("type")
        if isinstance(declared, list) and declared:
            declared = rng.choice(declared)
        if declared is None:
            declared = _guess_type(schema)
        if declared == "object":
            properties = schema.get("properties") or {}
            out = {}
            for name in schema.get("required") or ():
                out[name] = self._draw(properties.get(name, True), rng, depth + 1)
            for name, sub in properties.items():
                if name not in out and rng.random() < 0.5:
                    out[name] = self._draw(sub, rng, depth + 1)
            return out
        if declared == "array":
            out_list = [self._draw(sub, rng, depth + 1) for sub in schema.get("prefixItems") or ()]
            items = schema.get("items", True)
            low = int(schema.get("minItems", 0))
            high = int(schema.get("maxItems", max(low, len(out_list)) + 2))
            while items is not False and len(out_list) < rng.randint(low, max(low, high)):
                out_list.append(self._draw(items, rng, depth + 1))
            return out_list
        if declared in ("integer", "number"):
            return self._number(schema, rng, declared == "integer")
        if declared == "string":
            low = int(schema.get("minLength", 0))
            high = int(schema.get("maxLength", max(low, 8)))
            size = rng.randint(low, max(low, min(high, low + 8)))
            return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size))
        if declared == "boolean":
            return rng.random() < 0.5
        if declared == "null":
            return None
        return self._any(rng, depth)

    @staticmethod
    def _number(schema: Mapping[str, Any], rng: random.Random, integer: bool) -> Any:
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1000))
        high = schema.get("maximum", schema.get("exclusiveMaximum", max(low, 0) + 1000))
        if "exclusiveMinimum" in schema:
            low += 1 if integer else 1e-6
        if "exclusiveMaximum" in schema:
            high -= 1 if integer else 1e-6
        if integer:
            value: Any = rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
        else:
            value = round(rng.uniform(low, high), 3)
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            value = (
                type(value)(round(value / step) * step) if integer else round(value / step) * step
            )
        return value

    def _any(self, rng: random.Random, depth: int) -> Any:
        kind = rng.choice(
            ["null", "boolean", "integer", "string"] + (["array", "object"] if depth < 2 else [])
        )
        return self._draw({"type": kind}, rng, depth + 1)
