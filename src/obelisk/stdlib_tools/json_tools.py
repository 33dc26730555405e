"""JSON tools: parse and print JSON text, validate values against a JSON schema."""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import TypedDict

from obelisk.interpreter.tools.patterns import linear_validator_class
from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.stdlib_tools._common import check_output_size, one_line, path_text

__all__ = [
    "TOOLS",
    "SchemaProblem",
    "ValidationReport",
    "json_dump",
    "json_parse",
    "json_validate",
    "parse_json_text",
    "pretty_json_size",
]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_text(text: str) -> Any:
    """``json.loads`` with a ``ValueError`` that gives the line and column (1-based);
    ``NaN``/``Infinity`` are refused."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None


@standard_tool(pure=True)
def json_parse(text: str) -> Any:
    """The JSON value in `text`. Invalid JSON: ValueError naming line and column (1-based)."""
    return parse_json_text(text)


@standard_tool(pure=True)
def json_dump(value: Any, indent: int | None = None, sort_keys: bool = False) -> str:
    """`value` as JSON text: compact on one line, or pretty with `indent` spaces; non-ASCII
    characters are kept. Negative indent: ValueError."""
    if indent is not None and indent < 0:
        raise ValueError(f"indent must be >= 0, got {indent}")
    separators = (",", ":") if indent is None else (",", ": ")
    if indent is not None:
        check_output_size("json_dump", pretty_json_size(value, indent) + 2)
    return json.dumps(
        value,
        indent=indent,
        sort_keys=sort_keys,
        separators=separators,
        ensure_ascii=False,
        allow_nan=False,
    )


def pretty_json_size(value: Any, indent: int) -> int:
    """The characters of ``json.dumps(value, indent=indent, separators=(",", ": "),
    ensure_ascii=False)``, counted without building it: the text without line breaks,
    plus a line break and ``indent`` spaces a level for each line.  Costs one compact
    ``json.dumps`` and a walk over the arrays and objects.  Raises what ``json.dumps``
    raises (``ValueError`` for NaN, with ``allow_nan=False``)."""
    size = len(json.dumps(value, separators=(",", ": "), ensure_ascii=False, allow_nan=False))
    stack: list[tuple[Any, int]] = [(value, 0)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if not children:
            continue
        # each child on a line of its own one level deeper, the closing bracket on one more
        count = len(children)
        size += count + 1 + indent * (count * (depth + 1) + depth)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return size


class SchemaProblem(TypedDict):
    path: str
    message: str


class ValidationReport(TypedDict):
    valid: bool
    errors: list[SchemaProblem]


@standard_tool(pure=True)
def json_validate(value: Any, schema: dict[str, Any]) -> ValidationReport:
    """Check `value` against JSON schema `schema` (draft from its "$schema", default 2020-12;
    formats checked; patterns run by RE2, in linear time): {"valid": bool, "errors":
    [{"path": "items[0].id", "message"}]} (path "" = the value itself). An invalid schema
    or an unresolvable $ref: ValueError."""
    from jsonschema import SchemaError  # imported when first used: 4 MB
    from jsonschema.validators import validator_for
    from referencing.exceptions import Unresolvable

    cls = linear_validator_class(validator_for(schema))  # patterns in linear time
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = path_text(exc.absolute_path)
        raise ValueError(
            f"invalid schema{f' at {where}' if where else ''}: {exc.message}"
        ) from None
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    try:
        found = [
            (path_text(error.absolute_path), error.message)
            for error in validator.iter_errors(value)
        ]
    except Unresolvable as exc:
        raise ValueError(f"invalid schema: cannot resolve $ref {exc.ref!r}") from None
    errors: list[SchemaProblem] = [
        {"path": path, "message": message} for path, message in sorted(found)
    ]
    return {"valid": not errors, "errors": errors}


TOOLS: tuple[Tool, ...] = one_line(json_parse, json_dump, json_validate)
