"""Text tools: templates, splitting and joining, regular expressions, case."""

from __future__ import annotations

import json
import math
import re
import string
from typing import Any

from typing_extensions import TypedDict

from obelisk.interpreter.tools.tool import Tool, tool
from obelisk.stdlib_tools._common import json_equal, json_type, one_line

__all__ = [
    "TOOLS",
    "RegexMatch",
    "concat",
    "contains",
    "ends_with",
    "format_text",
    "join",
    "length",
    "lower",
    "regex_find_all",
    "regex_match",
    "regex_replace",
    "replace",
    "split",
    "starts_with",
    "strip",
    "to_number",
    "to_string",
    "upper",
]

_FORMATTER = string.Formatter()
_BIG_NUMBER = re.compile(r"\d{5,}")


def _template_fields(template: str) -> list[str]:
    """The field names of a template; ValueError for anything but plain named fields."""
    names: list[str] = []
    for _literal, name, spec, _conversion in _FORMATTER.parse(template):
        if name is None:
            continue
        if not name.isidentifier():
            raise ValueError(
                f"template field {{{name}}} is not a plain name; use named fields such as"
                " {city} (no positional fields, attribute access or indexes)"
            )
        if spec and "{" in spec:
            raise ValueError(f"template field {{{name}:{spec}}} has a nested field in its format")
        if spec and _BIG_NUMBER.search(spec):
            raise ValueError(f"template field {{{name}:{spec}}}: widths above 9999 are not allowed")
        names.append(name)
    return names


@tool(name="format", pure=True)
def format_text(template: str, fields: dict[str, Any]) -> str:
    """Fill `template` ("Hello {name}, {total:.2f} EUR") from `fields` (str.format syntax,
    named fields only). A field missing from `fields`: KeyError; other field forms: ValueError."""
    for name in _template_fields(template):
        if name not in fields:
            given = ", ".join(sorted(fields)) or "none"
            raise KeyError(f"template field {name!r} is not in fields (given: {given})")
    return template.format_map(fields)


@tool(pure=True)
def concat(parts: list[str], separator: str = "") -> str:
    """The strings of `parts` joined with `separator` (default: nothing between them)."""
    return separator.join(parts)


@tool(pure=True)
def join(parts: list[str], separator: str) -> str:
    """The strings of `parts` joined with `separator` (e.g. ", ")."""
    return separator.join(parts)


@tool(pure=True)
def split(text: str, separator: str | None = None, max_splits: int = -1) -> list[str]:
    """`text` split at `separator` (null: runs of whitespace, dropping empty parts), at most
    `max_splits` times (-1: no limit). An empty separator: ValueError."""
    return text.split(separator, max_splits)


@tool(pure=True)
def replace(text: str, old: str, new: str, count: int = -1) -> str:
    """`text` with occurrences of `old` replaced by `new`; the first `count` only
    (-1: all)."""
    return text.replace(old, new, count)


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


class RegexMatch(TypedDict):
    match: str
    groups: list[str | None]
    named: dict[str, str | None]


@tool(pure=True)
def regex_match(text: str, pattern: str) -> RegexMatch | None:
    """The first match of Python regex `pattern` anywhere in `text` as {"match": whole match,
    "groups": [numbered groups], "named": {name: group}} (unmatched group: null), or null.
    Bad pattern: ValueError."""
    found = _compile(pattern).search(text)
    if found is None:
        return None
    return {"match": found.group(0), "groups": list(found.groups()), "named": found.groupdict()}


@tool(pure=True)
def regex_find_all(text: str, pattern: str) -> list[str]:
    """The whole text of every non-overlapping match of Python regex `pattern` in `text`,
    in order. Bad pattern: ValueError."""
    return [found.group(0) for found in _compile(pattern).finditer(text)]


@tool(pure=True)
def regex_replace(text: str, pattern: str, replacement: str, count: int = 0) -> str:
    r"""`text` with matches of Python regex `pattern` replaced by `replacement` (may use \1,
    \g<name>); the first `count` only (0: all). Bad pattern or replacement: ValueError."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    try:
        return _compile(pattern).sub(replacement, text, count=count)
    except re.error as exc:
        raise ValueError(f"invalid replacement {replacement!r}: {exc}") from None


@tool(pure=True)
def lower(text: str) -> str:
    """`text` in lower case."""
    return text.lower()


@tool(pure=True)
def upper(text: str) -> str:
    """`text` in upper case."""
    return text.upper()


@tool(pure=True)
def strip(text: str, chars: str | None = None) -> str:
    """`text` without leading and trailing `chars` (null: whitespace)."""
    return text.strip(chars)


@tool(pure=True)
def length(value: str | list[Any] | dict[str, Any]) -> int:
    """Characters in a string, items in a list, or keys in an object."""
    return len(value)


@tool(pure=True)
def contains(value: str | list[Any] | dict[str, Any], item: Any) -> bool:
    """Whether a string contains the substring `item`, a list contains an item equal to
    `item` (JSON equality), or an object has the key `item`."""
    if isinstance(value, list):
        return any(json_equal(element, item) for element in value)
    if not isinstance(item, str):
        what = "a string" if isinstance(value, str) else "an object"
        raise TypeError(f"contains: {what} can only contain a string, not a {json_type(item)}")
    return item in value


@tool(pure=True)
def starts_with(text: str, prefix: str) -> bool:
    """Whether `text` begins with `prefix`."""
    return text.startswith(prefix)


@tool(pure=True)
def ends_with(text: str, suffix: str) -> bool:
    """Whether `text` ends with `suffix`."""
    return text.endswith(suffix)


@tool(pure=True)
def to_string(value: Any) -> str:
    """A string as is; any other value as compact JSON (3 -> "3", null -> "null")."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@tool(pure=True)
def to_number(value: str | int | float) -> int | float:
    """A number from a decimal string ("42" -> 42, " -1.5e3 " -> -1500.0); numbers pass
    through. Anything else: ValueError."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"not a number: {value!r}")
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"number out of range: {value!r}")
    return number


TOOLS: tuple[Tool, ...] = one_line(
    format_text,
    concat,
    join,
    split,
    replace,
    regex_match,
    regex_find_all,
    regex_replace,
    lower,
    upper,
    strip,
    length,
    contains,
    starts_with,
    ends_with,
    to_string,
    to_number,
)
