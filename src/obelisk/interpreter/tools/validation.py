"""Validation of values against tool schemas, with short human messages.

Problems are structured data (:class:`ArgumentProblem`: ``loc`` and ``message``,
in the style of pydantic-core); the messages say what was expected and what was
found, e.g. ``expected an integer, got "abc"``.  Function tools validate with
pydantic, schema-only tools with jsonschema (docs/diagnostics.md, docs/semantics.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails, to_json

from obelisk.caches import BoundedCache
from obelisk.errors import ArgumentProblem, ToolDefinitionError
from obelisk.interpreter.tools.patterns import linear_validator_class
from obelisk.json_values import preview

__all__ = [
    "bad",
    "checked_validator_class",
    "pydantic_problem",
    "pydantic_problems",
    "schema_problems",
    "validator_for",
]

# Schemas found valid, by canonical JSON (sorted keys) and as written (key order kept).
_CHECKED_SCHEMAS: BoundedCache[tuple[type, str], bool] = BoundedCache(
    max_entries=4096, max_bytes=16 << 20
)
_WRITTEN_SCHEMAS: BoundedCache[tuple[type, bytes], bool] = BoundedCache(
    max_entries=4096, max_bytes=16 << 20
)
_PHRASES = {
    "integer": "an integer", "number": "a number", "string": "a string", "boolean": "a boolean",
    "object": "an object", "array": "an array", "null": "null",
}  # fmt: skip
_PYDANTIC_KINDS = {
    "int_type": "integer", "int_parsing": "integer", "int_from_float": "integer",
    "float_type": "number", "float_parsing": "number", "string_type": "string",
    "bool_type": "boolean", "bool_parsing": "boolean", "dict_type": "object",
    "model_type": "object", "dataclass_type": "object", "list_type": "array",
    "tuple_type": "array", "set_type": "array", "none_required": "null",
}  # fmt: skip


def bad(tool_name: Any, message: str) -> ToolDefinitionError:
    return ToolDefinitionError(f"tool {tool_name!r}: {message}")


def show(value: Any) -> str:
    """A bad value in a message: short JSON-like text that never raises."""
    return preview(value, 60)


def expected(kinds: Any, value: Any) -> str:
    names = kinds if isinstance(kinds, list) else [kinds]
    return f"expected {' or '.join(_PHRASES.get(k, str(k)) for k in names)}, got {show(value)}"


def pydantic_problem(err: ErrorDetails) -> ArgumentProblem:
    """One pydantic error as a problem, with a short message."""
    kind = _PYDANTIC_KINDS.get(err["type"])
    message = expected(kind, err["input"]) if kind else f"{err['msg']}, got {show(err['input'])}"
    if err["type"] in ("missing", "extra_forbidden"):
        message = "missing required field" if err["type"] == "missing" else "unexpected field"
    return ArgumentProblem(tuple(err["loc"]), message)


def pydantic_problems(exc: ValidationError) -> list[ArgumentProblem]:
    return [pydantic_problem(err) for err in exc.errors()]


def schema_problems(validator: Any, value: Any) -> list[ArgumentProblem]:
    return [
        ArgumentProblem(
            tuple(err.absolute_path),
            expected(err.validator_value, err.instance) if err.validator == "type" else err.message,
        )
        for err in validator.iter_errors(value)
    ]


def checked_validator_class(schema: Any, tool_name: str, key: str) -> Any:
    """The jsonschema validator class for ``schema`` (``$schema`` picks it; default
    draft 2020-12) made to match ``pattern`` with RE2 (docs/limits.md, "Patterns in
    schemas"), after checking ``schema`` against that class's metaschema.

    The check costs milliseconds, so it is done once per distinct schema (keyed by
    its canonical JSON: sorted keys) and remembered (the last 4,096 schemas, 16 MiB
    of their JSON at most); catalogs repeat schemas.  A schema seen before with the
    same key order is recognized from its unsorted JSON (``pydantic_core.to_json``, a
    few microseconds), without sorting.
    Raises :class:`ToolDefinitionError` naming ``tool_name`` and ``key``
    (the key the user wrote, e.g. ``'inputSchema'``) and where the schema is wrong.
    docs/tools.md describes the costs.
    """
    if not isinstance(schema, (Mapping, bool)):
        raise bad(tool_name, f"{key!r} must be a JSON schema (an object or a boolean)")
    import jsonschema  # only for tools described by JSON schemas: 4 MB and 60 ms to import

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:  # a first look, 5x cheaper than sorting keys: the schema as written
        written: tuple[type, bytes] | None = (cls, to_json(schema))
    except Exception:  # not JSON data: only the canonical form says
        written = None
    if written is not None and written in _WRITTEN_SCHEMAS:
        return linear_validator_class(cls)
    fingerprint = (cls, json.dumps(schema, sort_keys=True, default=repr))
    if fingerprint not in _CHECKED_SCHEMAS:
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            at = ".".join(map(str, exc.absolute_path))
            raise bad(
                tool_name,
                f"{key!r} is not a valid JSON schema{' at ' + at if at else ''}: {exc.message}",
            ) from None
        _CHECKED_SCHEMAS.put(fingerprint, True, 2 * len(fingerprint[1]) + 64)
    if written is not None:
        _WRITTEN_SCHEMAS.put(written, True, 2 * len(written[1]) + 64)
    return linear_validator_class(cls)


def validator_for(schema: Any, tool_name: str, key: str) -> Any:
    """A checked jsonschema validator for ``schema``; the class follows ``$schema``
    (see :func:`checked_validator_class`, which raises :class:`ToolDefinitionError`)."""
    return checked_validator_class(schema, tool_name, key)(schema)
