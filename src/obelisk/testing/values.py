"""JSON schemas as Hypothesis strategies: inputs, tool outputs, literals (docs/testing.md).

:func:`strategy_for` turns a JSON schema into a strategy of values that fit it.
Leaves (strings, numbers, ``enum``, ``format``, ``pattern``) come from
``hypothesis_jsonschema.from_schema``; objects, arrays, ``anyOf``/``oneOf`` and
local ``$ref`` are composed here, because ``from_schema`` 0.23.1 fails on every
object schema with current Hypothesis (``'many' object has no attribute
'more'``).  A value is checked with :mod:`jsonschema` unless the schema uses only
keywords this module builds exactly, so a keyword it does not model can only make
a draw be retried, never wrong.  :func:`inputs` and :func:`tool_outputs` are the
public faces.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, cast

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from obelisk.errors import UsageError
from obelisk.interpreter.simulate.samples import (
    ANNOTATIONS,
    canonical,
    guess_type,
    inline_refs,
    merge,
)
from obelisk.interpreter.tools.tool import Tool

__all__ = [
    "inputs",
    "json_values",
    "strategy_for",
    "strategy_parts",
    "tool_outputs",
]

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


# -- strategies ---------------------------------------------------------------------


def strategy_for(schema: Any, where: Callable[[Any], bool] | None = None) -> st.SearchStrategy[Any]:
    """A strategy of JSON values that fit ``schema`` (a JSON schema; local ``$ref``
    allowed; draft 2020-12 keywords) and, when given, satisfy ``where``.

    Raises :class:`~obelisk.errors.UsageError` for a schema that is not valid, has a
    remote ``$ref`` or is recursive.  Strategies without ``where`` are cached by the
    schema's text.
    """
    if where is None:
        return _cached_strategy(canonical(schema))
    strategy, valid = _parts(canonical(schema))
    # One filter, not two: Hypothesis re-validates a strategy with two chained
    # non-rewritable filters on every draw (6.170), which costs a source lookup each.
    return strategy.filter(lambda value: valid(value) and where(value))


@lru_cache(maxsize=512)
def _cached_strategy(text: str) -> st.SearchStrategy[Any]:
    strategy, valid = _parts(text)
    return strategy.filter(valid)


def strategy_parts(
    schema: Any,
) -> tuple[st.SearchStrategy[Any], Callable[[Any], bool]]:
    """``(strategy, fits)``: a strategy of values that mostly fit ``schema`` and the
    test that tells those that do (always true when the strategy is exact)."""
    return _parts(canonical(schema))


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
_MODELLED = ANNOTATIONS | {
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
    if "anyOf" in schema and set(schema) - ANNOTATIONS - {"anyOf"}:
        return False  # a branch merged with sibling keywords: let jsonschema decide
    if "type" not in schema and set(schema) - ANNOTATIONS - {"const", "enum", "anyOf"}:
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
    alternatives = _alternatives(schema)
    if alternatives is not None:
        return alternatives
    return _typed(schema)


def _alternatives(schema: Mapping[str, Any]) -> st.SearchStrategy[Any] | None:
    """One of the ``anyOf``/``oneOf`` branches (each merged with the keywords beside
    it), or one of a list of types; ``None`` when the schema has neither."""
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return st.one_of([_build(merge(rest, branch)) for branch in schema[key]])
    declared = schema.get("type")
    if isinstance(declared, list):
        return st.one_of([_build({**schema, "type": t}) for t in declared])
    return None


def _typed(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """A schema of one type (declared, or guessed from its keywords)."""
    declared = schema.get("type")
    if declared is None:
        declared = guess_type(schema)
        if declared is None:
            return json_values
    if declared == "object":
        return _object(schema)
    if declared == "array":
        return _array(schema)
    simple = _SIMPLE.get(declared)
    if simple is not None and not set(schema) - ANNOTATIONS - {"type"}:
        return simple
    return _leaf(canonical(schema))


# Unconstrained leaves: each is one Hypothesis choice (from_schema's text() draws
# one choice per character, through an explicit alphabet).
_SIMPLE: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(),
    "integer": st.integers(),
    "number": st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)),
    "boolean": st.booleans(),
    "null": st.none(),
}


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
    if extra is True and properties:  # extra keys are allowed, not needed: none
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
        unique_by=canonical if unique else None,
    )
    if not prefix:
        return tail
    return st.builds(lambda a, b: a + b, head, tail)


# -- the public faces ----------------------------------------------------------------


def inputs(input_schema: Mapping[str, Any] | bool) -> st.SearchStrategy[Any]:
    """Input documents that fit ``input_schema`` (a JSON schema; local ``$ref`` allowed).

    Raises :class:`~obelisk.errors.UsageError` for an invalid, remote-``$ref`` or
    recursive schema.
    """
    return strategy_for(input_schema)


def tool_outputs(tool: Tool) -> st.SearchStrategy[Any]:
    """Results that fit ``tool``'s output schema (any JSON when it has none).

    Values are also checked with ``tool.validate_output`` (pydantic for function
    tools), so each one is a result the tool may return.
    """
    if not isinstance(tool, Tool):
        raise UsageError(f"tool_outputs takes an obelisk.Tool, not {tool!r}")
    schema = tool.output_schema if tool.output_schema is not None else True
    return strategy_for(schema, lambda value: not tool.validate_output(value))
