r"""Text tools: templates, splitting and joining, regular expressions, case.

The regular-expression tools use RE2 (the ``google-re2`` package), whose matching
time grows linearly with the text whatever the pattern: a catastrophic pattern such
as ``(a+)+$`` cannot hang the process, and a tool timeout could not stop Python's
``re`` anyway, since it holds the GIL.  RE2 syntax is Python's without the
constructs that need backtracking: no backreferences (``\1``, ``(?P=name)``), no
lookahead or lookbehind (``(?=``, ``(?!``, ``(?<=``, ``(?<!``), no atomic groups or
possessive quantifiers, and ``\z`` instead of ``\Z``; ``\w``, ``\d``, ``\s`` and
``\b`` match ASCII only (``\pL`` is any letter, ``\p{Greek}`` a script)
(https://github.com/google/re2/wiki/Syntax).  A pattern RE2 refuses is a
``ValueError`` naming the construct.  ``re2`` (a few MiB of native code) is
imported when the first pattern is compiled.
"""

from __future__ import annotations

import collections
import json
import math
import re
import string
from typing import Any

from typing_extensions import TypedDict

from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.limits import active_limits
from obelisk.stdlib_tools._common import (
    check_output_size,
    json_equal,
    json_type,
    native_call,
    one_line,
    re2_program,
)

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


@standard_tool(name="format", pure=True)
def format_text(template: str, fields: dict[str, Any]) -> str:
    """Fill `template` ("Hello {name}, {total:.2f} EUR") from `fields` (str.format syntax,
    named fields only). A field missing from `fields`: KeyError; other field forms: ValueError."""
    for wanted in _template_fields(template):
        if wanted not in fields:
            given = ", ".join(sorted(fields)) or "none"
            raise KeyError(f"template field {wanted!r} is not in fields (given: {given})")
    # filled one field at a time, counting: a template that repeats a long field is
    # refused before its text is built
    pieces: list[str] = []
    size = 2
    for literal, name, spec, conversion in _FORMATTER.parse(template):
        pieces.append(literal)
        size += len(literal)
        if name is not None:
            value = _FORMATTER.convert_field(fields[name], conversion)
            piece = _FORMATTER.format_field(value, spec or "")
            pieces.append(piece)
            size += len(piece)
        check_output_size("format", size)
    return "".join(pieces)


@standard_tool(pure=True)
def concat(parts: list[str], separator: str = "") -> str:
    """The strings of `parts` joined with `separator` (default: nothing between them)."""
    check_output_size("concat", _joined_size(parts, separator))
    return separator.join(parts)


@standard_tool(pure=True)
def join(parts: list[str], separator: str) -> str:
    """The strings of `parts` joined with `separator` (e.g. ", ")."""
    check_output_size("join", _joined_size(parts, separator))
    return separator.join(parts)


def _joined_size(parts: list[str], separator: str) -> int:
    """The characters of ``separator.join(parts)`` and its two quotes: a lower bound
    of its JSON size."""
    return sum(map(len, parts)) + max(len(parts) - 1, 0) * len(separator) + 2


@standard_tool(pure=True)
def split(text: str, separator: str | None = None, max_splits: int = -1) -> list[str]:
    """`text` split at `separator` (null: runs of whitespace, dropping empty parts), at most
    `max_splits` times (-1: no limit). An empty separator: ValueError."""
    if separator:  # each part costs at least 3 bytes of JSON: quotes and a comma
        cuts = text.count(separator)
        if max_splits >= 0:
            cuts = min(cuts, max_splits)
        check_output_size("split", len(text) - cuts * len(separator) + 3 * cuts + 4)
    return text.split(separator, max_splits)


@standard_tool(pure=True)
def replace(text: str, old: str, new: str, count: int = -1) -> str:
    """`text` with occurrences of `old` replaced by `new`; the first `count` only
    (-1: all)."""
    if len(new) > len(old):  # the result's length is known before it is built
        found = text.count(old)
        if count >= 0:
            found = min(found, count)
        check_output_size("replace", len(text) + found * (len(new) - len(old)) + 2)
    return text.replace(old, new, count)


class RegexMatch(TypedDict):
    match: str
    groups: list[str | None]
    named: dict[str, str | None]


@standard_tool(pure=True)
def regex_match(text: str, pattern: str) -> RegexMatch | None:
    r"""The first match of RE2 regex `pattern` in `text`: {"match": whole match, "groups":
    [numbered groups], "named": {name: group}} (unmatched group: null), or null. RE2 runs in
    linear time: no backreferences or lookaround; \w \d \s \b are ASCII-only. Bad pattern:
    ValueError."""
    compiled = re2_program(pattern)
    with native_call():  # RE2 releases the GIL: the interpreter's exit waits for it
        found = compiled.search(text)
    if found is None:
        return None
    return {"match": found.group(0), "groups": list(found.groups()), "named": found.groupdict()}


@standard_tool(pure=True)
def regex_find_all(text: str, pattern: str) -> list[str]:
    r"""The whole text of every non-overlapping match of RE2 regex `pattern` in `text`, in
    order. RE2 runs in linear time: no backreferences or lookaround; \w \d \s \b are
    ASCII-only. Bad pattern: ValueError."""
    compiled = re2_program(pattern)
    matches: list[str] = []
    size = 2  # counted as the list grows: an empty pattern matches at every position
    with native_call():  # RE2 releases the GIL: the interpreter's exit waits for it
        for found in compiled.finditer(text):
            match = found.group(0)
            matches.append(match)
            size += len(match) + 3
            if size > _FIND_ALL_CHECK:
                check_output_size("regex_find_all", size)
    return matches


_FIND_ALL_CHECK = 1 << 16  # below this many bytes no limit is checked (limits are larger)


@standard_tool(pure=True)
def regex_replace(text: str, pattern: str, replacement: str, count: int = 0) -> str:
    r"""`text` with matches of RE2 regex `pattern` replaced by `replacement` (may use \1,
    \g<name>); the first `count` only (0: all). RE2 runs in linear time: no backreferences or
    lookaround; \w \d \s \b are ASCII-only. Bad pattern or replacement: ValueError."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    compiled = re2_program(pattern)
    import re2  # imported by re2_program already

    try:
        with native_call():
            size = _replaced_size(compiled, text, replacement, count)
            check_output_size("regex_replace", size)
            return str(compiled.sub(replacement, text, count=count))
    except (re.error, re2.error, IndexError) as exc:
        raise ValueError(f"invalid replacement {replacement!r}: {exc}") from None


# a group reference of a replacement, or an escape (which stays literal), as RE2's
# Python module reads them: a three-digit octal escape first, then \1 .. \99 and
# \g<name>, then a backslash and the character after it
_REPLACEMENT_TOKEN = re.compile(r"\\(?:[0-7]{3}|([1-9][0-9]?|g<\w+>)|.?)", re.DOTALL)


def _replaced_size(compiled: Any, text: str, replacement: str, count: int) -> int:
    """At least the characters (and two quotes) of ``compiled.sub(replacement, text,
    count)``, counted without building it: cheaply when that bound is small, else match
    by match (a group reference counts its group's length; the literal part of the
    replacement counts one character for each escape).  ``IndexError``
    for a reference to a group the pattern does not have."""
    groups: list[int | str] = []
    literal = len(replacement)  # an escape counts as the one character it stands for
    for token in _REPLACEMENT_TOKEN.finditer(replacement):
        reference = token.group(1)
        literal -= len(token.group(0))
        if reference is None:
            literal += 1
        else:
            name = reference[2:-1] if reference.startswith("g") else reference
            groups.append(int(name) if name.isdigit() else name)
    most = len(text) + 1 if count == 0 else min(count, len(text) + 1)
    bound = len(text) + most * len(replacement) + len(groups) * len(text) + 2
    if bound <= active_limits().max_output_bytes:
        return 2  # cannot pass the limit: not worth a pass over the matches
    limit = active_limits().max_output_bytes
    repeats = collections.Counter(groups).items()  # each group once, however often used
    size = len(text) + 2
    for found in compiled.finditer(text):
        size += literal - (found.end() - found.start())
        for group, times in repeats:
            size += times * len(found.group(group) or "")
        if size > limit:  # enough to refuse it
            break
        if count:
            count -= 1
            if count == 0:
                break
    return size


@standard_tool(pure=True)
def lower(text: str) -> str:
    """`text` in lower case."""
    return text.lower()


@standard_tool(pure=True)
def upper(text: str) -> str:
    """`text` in upper case."""
    return text.upper()


@standard_tool(pure=True)
def strip(text: str, chars: str | None = None) -> str:
    """`text` without leading and trailing `chars` (null: whitespace)."""
    return text.strip(chars)


@standard_tool(pure=True)
def length(value: str | list[Any] | dict[str, Any]) -> int:
    """Characters in a string, items in a list, or keys in an object."""
    return len(value)


@standard_tool(pure=True)
def contains(value: str | list[Any] | dict[str, Any], item: Any) -> bool:
    """Whether a string contains the substring `item`, a list contains an item equal to
    `item` (JSON equality), or an object has the key `item`."""
    if isinstance(value, list):
        return any(json_equal(element, item) for element in value)
    if not isinstance(item, str):
        what = "a string" if isinstance(value, str) else "an object"
        raise TypeError(f"contains: {what} can only contain a string, not a {json_type(item)}")
    return item in value


@standard_tool(pure=True)
def starts_with(text: str, prefix: str) -> bool:
    """Whether `text` begins with `prefix`."""
    return text.startswith(prefix)


@standard_tool(pure=True)
def ends_with(text: str, suffix: str) -> bool:
    """Whether `text` ends with `suffix`."""
    return text.endswith(suffix)


@standard_tool(pure=True)
def to_string(value: Any) -> str:
    """A string as is; any other value as compact JSON (3 -> "3", null -> "null")."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@standard_tool(pure=True)
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
