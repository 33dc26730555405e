"""Values that fit a JSON schema, drawn with a seeded random generator.

The dry run generates the outputs of tools that have no stub from their output
schema, and the same seed gives the same values, so the same command prints the same
report (docs/simulate.md).  ``hypothesis-jsonschema`` would be the library for this,
but its 0.23.1 release fails on every object schema with current Hypothesis (``'many'
object has no attribute 'more'``), and a Hypothesis strategy cannot be drawn from
with a fixed seed outside a test; this sampler covers the keywords tool schemas use
and checks every value with :mod:`jsonschema`, so a keyword it does not model can
only make a draw be retried, never wrong.  ``obelisk.testing`` uses it too.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from obelisk.errors import UsageError
from obelisk.interpreter.tools.patterns import linear_validator_class

__all__ = ["ANNOTATIONS", "SchemaSampler", "canonical", "guess_type", "inline_refs", "merge"]

_MAX_REF_DEPTH = 16
ANNOTATIONS = frozenset(
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
        return _inline_ref(schema, root, depth)
    return {
        key: (
            value
            if key in ("$defs", "definitions", "const", "enum", "default", "examples")
            else inline_refs(value, root, depth)
        )
        for key, value in schema.items()
        if key not in ("$defs", "definitions")
    }


def _inline_ref(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    """What ``schema``'s ``$ref`` points to, with the schema's other keywords (but
    ``$defs``) added when the target is an object schema."""
    target = inline_refs(_lookup(root, schema["$ref"]), root, depth + 1)
    rest = {k: v for k, v in schema.items() if k not in ("$ref", "$defs", "definitions")}
    if not rest:
        return target
    if isinstance(target, Mapping):
        return {**target, **{k: inline_refs(v, root, depth) for k, v in rest.items()}}
    return target


def merge(base: Mapping[str, Any], branch: Any) -> Any:
    """``branch`` (of an ``anyOf``/``oneOf``) with ``base``'s constraints added."""
    if not isinstance(branch, Mapping):
        return branch
    merged = {k: v for k, v in base.items() if k not in ANNOTATIONS}
    merged.update(branch)
    return merged


def guess_type(schema: Mapping[str, Any]) -> str | None:
    """The JSON type a schema without ``type`` implies by its keywords, or ``None``."""
    if {"properties", "required", "additionalProperties"} & set(schema):
        return "object"
    if {"items", "prefixItems", "minItems", "maxItems"} & set(schema):
        return "array"
    if {"minLength", "maxLength", "pattern", "format"} & set(schema):
        return "string"
    if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} & set(schema):
        return "number"
    return None


def _declared_type(schema: Mapping[str, Any], rng: random.Random) -> Any:
    """The schema's ``type``: one drawn from a list, or the one its keywords imply."""
    declared = schema.get("type")
    if isinstance(declared, list) and declared:
        declared = rng.choice(declared)
    if declared is None:
        declared = guess_type(schema)
    return declared


def canonical(schema: Any) -> str:
    """A schema as one JSON text, keys sorted (a cache key)."""
    return json.dumps(schema, sort_keys=True, default=repr)


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
        from jsonschema import Draft202012Validator  # imported when a dry run samples: 4 MB

        self.schema = inline_refs(schema) if schema is not None else True
        self._validator = (
            linear_validator_class(Draft202012Validator)(self.schema)
            if isinstance(self.schema, Mapping)
            else None
        )

    def sample(self, rng: random.Random) -> Any:
        """One value that fits the schema."""
        for _ in range(50):
            value = self._draw(self.schema, rng, 0)
            if self._validator is None or self._validator.is_valid(value):
                return value
        raise UsageError(
            f"cannot generate a value for the schema {canonical(self.schema)[:200]}; "
            "give this tool a fixed value instead (a stub of obelisk.simulate, "
            "outputs= of obelisk.testing.FakeTools)"
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
                return self._draw(merge(rest, rng.choice(schema[key])), rng, depth)
        declared = _declared_type(schema, rng)
        draw = self._BY_TYPE.get(declared) if isinstance(declared, str) else None
        if draw is None:
            return self._any(rng, depth)
        return draw(self, schema, rng, depth)

    def _object(self, schema: Mapping[str, Any], rng: random.Random, depth: int) -> Any:
        """The required properties, and each other one with a chance of one half."""
        properties = schema.get("properties") or {}
        out = {}
        for name in schema.get("required") or ():
            out[name] = self._draw(properties.get(name, True), rng, depth + 1)
        for name, sub in properties.items():
            if name not in out and rng.random() < 0.5:
                out[name] = self._draw(sub, rng, depth + 1)
        return out

    def _array(self, schema: Mapping[str, Any], rng: random.Random, depth: int) -> Any:
        """The ``prefixItems``, then ``items`` up to a length between the bounds."""
        out = [self._draw(sub, rng, depth + 1) for sub in schema.get("prefixItems") or ()]
        items = schema.get("items", True)
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", max(low, len(out)) + 2))
        while items is not False and len(out) < rng.randint(low, max(low, high)):
            out.append(self._draw(items, rng, depth + 1))
        return out

    def _integer(self, schema: Mapping[str, Any], rng: random.Random, depth: int) -> Any:
        return self._number(schema, rng, True)

    def _real(self, schema: Mapping[str, Any], rng: random.Random, depth: int) -> Any:
        return self._number(schema, rng, False)

    def _string(self, schema: Mapping[str, Any], rng: random.Random, depth: int) -> Any:
        """Letters and digits, at most 8 more than ``minLength``."""
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", max(low, 8)))
        size = rng.randint(low, max(low, min(high, low + 8)))
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size))

    def _boolean(self, schema: Mapping[str, Any], rng: random.Random, depth: int) -> Any:
        return rng.random() < 0.5

    def _null(self, schema: Mapping[str, Any], rng: random.Random, depth: int) -> Any:
        return None

    # how to draw each JSON type (any other type: any value)
    _BY_TYPE: ClassVar[
        Mapping[str, Callable[[SchemaSampler, Mapping[str, Any], random.Random, int], Any]]
    ] = {
        "object": _object,
        "array": _array,
        "integer": _integer,
        "number": _real,
        "string": _string,
        "boolean": _boolean,
        "null": _null,
    }

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
