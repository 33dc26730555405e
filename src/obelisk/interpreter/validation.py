"""Validation of values against tool schemas, with short human messages.

Problems are structured data (:class:`ArgumentProblem`: ``loc`` and ``message``,
in the style of pydantic-core); the messages say what was expected and what was
found, e.g. ``expected an integer, got "abc"``.  Function tools validate with
pydantic, schema-only tools with jsonschema (DESIGN §2.2, §2.3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
from pydantic import ValidationError

from obelisk.errors import ObeliskError, ToolDefinitionError

__all__ = [
    "ArgumentProblem",
    "ArgumentValidationError",
    "bad",
    "pydantic_problems",
    "schema_problems",
    "validator_for",
]

Loc = tuple[str | int, ...]
_CHECKED_SCHEMAS: set[tuple[type, str]] = set()
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


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """One validation problem.  ``loc`` is the path inside the validated value
    (``()`` = the value itself; strings are keys, ints list indices); ``message``
    says what was expected, e.g. ``expected an integer, got "abc"``."""

    loc: Loc
    message: str

    @property
    def path(self) -> str:
        """``loc`` as text, e.g. ``customer.lines[0]``."""
        return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.loc).lstrip(".")


class ArgumentValidationError(ObeliskError):
    """A call's arguments do not fit its tool's schema (DESIGN §2.2, §2.3).

    ``tool_name`` names the tool; ``problems`` holds every problem, each ``loc``
    starting with the argument name.  ``str()`` lists them one per line.
    """

    code = "invalid_argument"

    def __init__(self, tool_name: str, problems: Iterable[ArgumentProblem]) -> None:
        self.tool_name = tool_name
        self.problems: tuple[ArgumentProblem, ...] = tuple(problems)
        lines = [f"\n  {p.path or '<arguments>'}: {p.message}" for p in self.problems]
        super().__init__(f"invalid arguments for tool {tool_name!r}:" + "".join(lines))


def bad(tool_name: Any, message: str) -> ToolDefinitionError:
    return ToolDefinitionError(f"tool {tool_name!r}: {message}")


def show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:59] + "…"


def expected(kinds: Any, value: Any) -> str:
    names = kinds if isinstance(kinds, list) else [kinds]
    return f"expected {' or '.join(_PHRASES.get(k, str(k)) for k in names)}, got {show(value)}"


def pydantic_problems(exc: ValidationError) -> list[ArgumentProblem]:
    problems = []
    for err in exc.errors():
        kind = _PYDANTIC_KINDS.get(err["type"])
        message = (
            expected(kind, err["input"]) if kind else f"{err['msg']}, got {show(err['input'])}"
        )
        if err["type"] in ("missing", "extra_forbidden"):
            message = "missing required field" if err["type"] == "missing" else "unexpected field"
        problems.append(ArgumentProblem(tuple(err["loc"]), message))
    return problems


def schema_problems(validator: Any, value: Any) -> list[ArgumentProblem]:
    return [
        ArgumentProblem(
            tuple(err.absolute_path),
            expected(err.validator_value, err.instance) if err.validator == "type" else err.message,
        )
        for err in validator.iter_errors(value)
    ]


def validator_for(schema: Any, tool_name: str, key: str) -> Any:
    """A checked jsonschema validator for ``schema``; the class follows ``$schema``."""
    if not isinstance(schema, (Mapping, bool)):
        raise bad(tool_name, f"{key!r} must be a JSON schema (an object or a boolean)")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    # Checking a schema against its metaschema costs milliseconds; catalogs repeat schemas.
    fingerprint = (cls, json.dumps(schema, sort_keys=True, default=repr))
    if fingerprint in _CHECKED_SCHEMAS:
        return cls(schema)
    try:
        cls.check_schema(schema)
        _CHECKED_SCHEMAS.add(fingerprint)
    except jsonschema.SchemaError as exc:
        at = ".".join(map(str, exc.absolute_path))
        raise bad(
            tool_name,
            f"{key!r} is not a valid JSON schema{' at ' + at if at else ''}: {exc.message}",
        ) from None
    return cls(schema)
