"""JSON values as obelisk handles them: strict decoding, deep copies and deep merges.

Shared by the plan parser, the command line, the execution loop (decoding), the
state (copies on the way in and out, the ``merge`` output method) and the standard
tools.  A bottom layer: it imports nothing from the rest of obelisk.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
from typing import Any

__all__ = [
    "MAX_DECODE_DEPTH",
    "copy_json",
    "decimal_digits",
    "deep_merge",
    "int_digits_limit",
    "json_kind",
    "loads_strict",
    "memory_estimate",
    "merge_into",
    "nesting_depth",
    "preview",
    "repeated_key",
    "sorted_keys",
    "unreadable_digits",
]

MAX_DECODE_DEPTH = 512
"""How deeply :func:`loads_strict` lets JSON text nest arrays and objects (levels), on
every Python version: Python's own decoder stops at about a thousand levels before
3.13, and goes much deeper from 3.13 on."""

_SCALARS = (str, int, float, bool, type(None))


def json_kind(value: object) -> str:
    """What ``value`` is, in JSON's words, for messages: ``"null"``, ``"a boolean"``,
    ``"a number"``, ``"a string"``, ``"an array"``, ``"an object"``, or ``"a Python
    <type>"`` for anything JSON has no name for."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a Python {type(value).__name__}"


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-like value: dicts and lists are rebuilt, anything else
    is shared (dict and list subclasses go through :func:`copy.deepcopy`).  About
    5x faster than ``deepcopy`` on JSON documents (no memo bookkeeping).  Nesting
    too deep for Python's recursion limit is copied iteratively instead.

    >>> original = {"a": [1, {"b": 2}]}
    >>> copied = copy_json(original)
    >>> copied == original, copied["a"] is original["a"]
    (True, False)
    """
    try:
        return _copy(value)
    except RecursionError:
        return _copy_iteratively(value)


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _SCALARS else _copy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _SCALARS else _copy(item) for item in value]
    if isinstance(value, (dict, list)):  # subclasses: keep their type
        return copy.deepcopy(value)
    return value


def _copy_iteratively(value: Any, *, sort_keys: bool = False) -> Any:
    """:func:`copy_json` with an explicit stack: any depth (subclasses become plain);
    ``sort_keys`` puts the keys of every object in sorted order (by their text)."""
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, holder, 0)]
    while stack:
        item, parent, slot = stack.pop()
        if isinstance(item, dict):
            built: dict[Any, Any] = dict.fromkeys(sorted(item, key=str) if sort_keys else item)
            parent[slot] = built
            stack.extend((item[key], built, key) for key in built)
        elif isinstance(item, list):
            items: list[Any] = [None] * len(item)
            parent[slot] = items
            stack.extend((child, items, n) for n, child in enumerate(item))
        else:
            parent[slot] = item
    return holder[0]


def sorted_keys(value: Any) -> Any:
    """A copy of ``value`` with the keys of every object in sorted order (by their
    text; iterative: any nesting).  The command line prints a final state this way:
    its values never depend on timing, but the order in which keys were first written
    does; sorted, the same run prints the same bytes.

    >>> sorted_keys({"b": 1, "a": [{"d": 2, "c": 3}]})
    {'a': [{'c': 3, 'd': 2}], 'b': 1}
    """
    return _copy_iteratively(value, sort_keys=True)


def deep_merge(base: Any, update: Any) -> Any:
    """Merge ``update`` into a copy of ``base``: objects merge key by key, recursively;
    anything else is replaced by ``update``.  Neither argument is changed.  Iterative,
    so any nesting is safe.

    >>> deep_merge({"x": {"p": 1}, "y": 1}, {"x": {"q": 2}, "y": [2]})
    {'x': {'p': 1, 'q': 2}, 'y': [2]}
    """
    if not (isinstance(base, dict) and isinstance(update, dict)):
        return update
    merged = dict(base)
    stack: list[tuple[dict[Any, Any], dict[Any, Any]]] = [(merged, update)]
    while stack:
        target, changes = stack.pop()
        for key, value in changes.items():
            current = target.get(key) if key in target else None
            if key in target and isinstance(current, dict) and isinstance(value, dict):
                inner = dict(current)
                target[key] = inner
                stack.append((inner, value))
            else:
                target[key] = value
    return merged


def merge_into(target: dict[Any, Any], update: dict[Any, Any]) -> None:
    """Merge ``update`` into ``target`` itself, as :func:`deep_merge` would into a
    copy: objects merge key by key, recursively; anything else is replaced by
    ``update``'s value.  ``target`` and the objects nested in it change; the values
    taken from ``update`` are put in as they are (not copied).  Costs time in
    proportion to ``update``, whatever the size of ``target``.  Iterative.

    >>> target = {"x": {"p": 1}, "y": 1}
    >>> merge_into(target, {"x": {"q": 2}, "y": [2]})
    >>> target
    {'x': {'p': 1, 'q': 2}, 'y': [2]}
    """
    stack: list[tuple[dict[Any, Any], dict[Any, Any]]] = [(target, update)]
    while stack:
        into, changes = stack.pop()
        for key, value in changes.items():
            current = into.get(key)
            if isinstance(current, dict) and isinstance(value, dict):
                stack.append((current, value))
            else:
                into[key] = value


# -- strict decoding -------------------------------------------------------------------

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"?'  # a string (skipped; unterminated ones never get here)
    r"|(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?"  # a number
    r"|(NaN|-?Infinity)"  # the constants Python's json accepts but JSON does not
    r"|([\[{])|([\]}])",  # brackets
    re.DOTALL,
)


class _Rejected(Exception):
    """A number or constant the strict decoder refuses; ``text`` is its token."""

    def __init__(self, reason: str, text: str) -> None:
        self.reason, self.text = reason, text


def _constant(text: str) -> Any:
    raise _Rejected(f"{text} is not valid JSON", text)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Rejected(f"number {_clip(text)} is out of range", text)
    return value


def _clip(text: str, width: int = 24) -> str:
    return text if len(text) <= width else text[: width - 4] + "...(" + f"{len(text)} chars)"


def int_digits_limit() -> int:
    """How many decimal digits Python converts between an integer and text
    (``sys.get_int_max_str_digits()``; 0: no limit, as before Python 3.10.7)."""
    getter = getattr(sys, "get_int_max_str_digits", None)
    return int(getter()) if getter is not None else 0


def _error(message: str, text: str, position: int) -> json.JSONDecodeError:
    error = json.JSONDecodeError(message, text, position)
    return error


def _locate(text: str, wanted: str) -> tuple[int, int]:
    """Where the problem ``wanted`` (a token, or ``"int"``/``"depth"``) first occurs
    outside strings: ``(offset, detail)`` (the digit count, or the depth)."""
    depth = deepest = deepest_at = 0
    limit = int_digits_limit()
    for found in _TOKEN.finditer(text):
        integer, fraction, exponent, _constant, opening, closing = found.groups()
        if opening is not None:
            depth += 1
            if depth > deepest:
                deepest, deepest_at = depth, found.start()
        elif closing is not None:
            depth -= 1
        elif wanted == "int" and integer is not None and fraction is None and exponent is None:
            digits = len(integer.lstrip("-"))
            if limit and digits > limit:
                return found.start(), digits
        elif wanted not in ("int", "depth") and found.group(0) == wanted:
            return found.start(), 0
    if wanted == "depth":
        return deepest_at, deepest
    return 0, 0


def loads_strict(text: str) -> Any:
    """Decode JSON text, strictly: RFC 8259 JSON only, and nothing Python cannot handle.

    Returns the decoded value.  Raises :class:`json.JSONDecodeError` (``msg``,
    ``pos``, ``lineno``, ``colno``; a ``ValueError``) for bad syntax, and also, each
    located at its first character:

    * ``NaN``, ``Infinity`` and ``-Infinity`` (Python accepts them; JSON does not);
    * a number too large for a float (``1e999``);
    * an integer of more digits than Python converts (``sys.get_int_max_str_digits()``,
      4300 by default);
    * nesting deeper than :data:`MAX_DECODE_DEPTH` levels (512), whatever Python's own
      decoder allows: located at the opening bracket of the deepest level.

    Callers turn the error into their own: a ``json_syntax`` diagnostic, a
    ``SolutionError``, ``obelisk: error:`` on the command line.

    >>> loads_strict('{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> loads_strict('[1, NaN]')
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: NaN is not valid JSON: line 1 column 5 (char 4)
    """
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float)
    except json.JSONDecodeError:
        raise
    except _Rejected as exc:
        position, _ = _locate(text, exc.text)
        raise _error(exc.reason, text, position) from None
    except RecursionError:
        value = _TOO_DEEP
    except ValueError as exc:  # an integer beyond Python's int/str conversion limit
        if "integer string conversion" not in str(exc):
            raise
        position, digits = _locate(text, "int")
        raise _error(
            f"integer of {digits} digits is too long (Python converts at most "
            f"{int_digits_limit()} digits)",
            text,
            position,
        ) from None
    # a cheap bound first: a value nests no deeper than it has brackets
    if value is _TOO_DEEP or (
        text.count("[") + text.count("{") > MAX_DECODE_DEPTH
        and nesting_depth(value, MAX_DECODE_DEPTH) > MAX_DECODE_DEPTH
    ):
        position, depth = _locate(text, "depth")
        raise _error(f"nested too deeply to decode ({depth} levels)", text, position)
    return value


_TOO_DEEP = object()  # Python's decoder gave up: deeper than it can go


def repeated_key(text: str, value: Any) -> tuple[str, int, int] | None:
    """The first key that one object of JSON ``text`` names twice: ``(key, start,
    end)``, the offsets (characters, end exclusive) of its second occurrence in
    ``text``, quotes included; None when every object's keys are distinct.  ``value``
    is ``text`` decoded (Python's decoder keeps the last value of a repeated key).

    Costs about two ``str.count`` passes for text whose strings hold no ``{`` or
    ``:``: then every object and every key of ``text`` is in ``value``, and the keys
    are distinct when there are as many as colons.  Otherwise jiter reads the text
    again with ``catch_duplicate_keys``, and only a repeat found is located.

    >>> text = '[{"a": 1, "b": {"a": 2}, "a": 3}]'
    >>> repeated_key(text, json.loads(text))
    ('a', 25, 28)
    """
    braces = text.count("{")
    if not braces:
        return None
    objects, keys = _count_objects(value, braces)
    if objects == braces and text.count(":") == keys:
        return None  # every key of the text is one of the value's, and none repeats
    from jiter import from_json  # (only here: most plans never get this far)

    try:
        from_json(text.encode("utf-8", "surrogatepass"), catch_duplicate_keys=True)
    except ValueError:  # a repeated key, or text jiter does not read (too deep for it)
        return _locate_repeated(text)
    return None


def _count_objects(value: Any, braces: int) -> tuple[int, int]:
    """``(objects, keys)``: how many objects ``value`` holds and how many keys they
    have, counted level by level, stopping once ``braces`` objects are found."""
    objects = keys = 0
    level: list[Any] = value if type(value) is list else [value]  # a plan: its calls
    while level:
        if set(map(type, level)) == {dict}:  # (a list of calls: no copy made)
            found: list[Any] = level
        else:
            found = [item for item in level if type(item) is dict]
        objects += len(found)
        keys += sum(map(len, found))
        if objects >= braces:
            break
        level = _containers_inside(level)
    return objects, keys


def _containers_inside(level: list[Any]) -> list[Any]:
    """The objects and arrays directly inside the objects and arrays of ``level``."""
    return [
        inner
        for item in level
        for inner in (item.values() if type(item) is dict else item if type(item) is list else ())
        if type(inner) is dict or type(inner) is list
    ]


_KEY_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]', re.DOTALL)


def _locate_repeated(text: str) -> tuple[str, int, int] | None:
    """:func:`repeated_key`'s exact search: a walk over the strings and brackets of
    ``text`` with the keys met so far in each open object."""
    open_objects: list[set[str] | None] = []  # one per open bracket; None for an array
    last: re.Match[str] | None = None  # the string just read: a key if a colon follows
    for token in _KEY_TOKEN.finditer(text):
        first = token.group()[0]
        if first == '"':
            last = token
            continue
        if first == ":" and last is not None and open_objects:
            names = open_objects[-1]
            if names is not None:
                key = json.loads(last.group())
                if key in names:
                    return key, last.start(), last.end()
                names.add(key)
        elif first == "{":
            open_objects.append(set())
        elif first == "[":
            open_objects.append(None)
        elif first != ":" and open_objects:
            open_objects.pop()
        last = None
    return None


def nesting_depth(value: Any, stop_after: int | None = None) -> int:
    """How deeply JSON data ``value`` nests arrays and objects (levels; a scalar: 0),
    counted one level at a time over containers only, so any depth is safe.  With
    ``stop_after``, counting stops at ``stop_after + 1`` once the value is deeper.

    >>> nesting_depth({"a": [1, [2]]}), nesting_depth([[[[]]]], stop_after=2)
    (3, 3)
    """
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if stop_after is not None and depth > stop_after:
            break
        below: list[Any] = []
        for item in level:
            children = item.values() if type(item) is dict else item
            # most items hold scalars only: test their types at C speed first
            if not _CONTAINER_TYPES.isdisjoint(map(type, children)):
                below += [child for child in children if type(child) in _CONTAINERS]
        level = below
    return depth


_CONTAINERS = (dict, list)
_CONTAINER_TYPES = frozenset(_CONTAINERS)

# the estimate's constants (bytes), fitted on CPython 3.11 with tracemalloc over values
# parsed from JSON by pydantic-core (docs/limits.md, "What a run can exceed")
_PER_TEXT_BYTE = 2
_PER_CONTAINER = 100
_PER_ITEM = 12
_PER_MEMBER = 48


def memory_estimate(value: Any, text_bytes: int) -> int:
    """About how many bytes of memory the Python objects of JSON data ``value`` take,
    given ``text_bytes``, the size of its compact JSON text: 2 bytes a byte of text,
    100 an array or object, 12 an array item, 48 an object member.  Within a factor of
    2.5 of what ``tracemalloc`` measures for values parsed from JSON: lists of small
    numbers, floats, long or non-ASCII strings and empty objects are overestimated;
    short strings and objects of many distinct keys underestimated.  Only arrays and
    objects are visited (their scalars are counted by the text), so the cost is one
    step per container.

    >>> memory_estimate([1, 2, 3], len("[1,2,3]"))
    150
    """
    size = _PER_TEXT_BYTE * text_bytes
    if type(value) not in _CONTAINERS:  # most results: nothing more to count
        return size
    level = [value]
    while level:
        below: list[Any] = []
        for item in level:
            if type(item) is dict:
                size += _PER_CONTAINER + _PER_MEMBER * len(item)
                children: Any = item.values()
            else:
                size += _PER_CONTAINER + _PER_ITEM * len(item)
                children = item
            if not _CONTAINER_TYPES.isdisjoint(map(type, children)):
                below += [child for child in children if type(child) in _CONTAINERS]
        level = below
    return size


# -- safe previews ---------------------------------------------------------------------


def preview(value: Any, width: int = 60) -> str:
    """``value`` as short JSON-like text for a message; never raises.

    Integers too long to print are ``<integer of N digits>``, values nested too
    deeply or not JSON show their type, and the text is cut to about ``width``
    characters (``...`` marks the cut).

    >>> preview({"a": [1, 2]})
    '{"a": [1, 2]}'
    >>> preview(10**5000)
    '<integer of 5001 digits>'
    """
    if isinstance(value, int) and not isinstance(value, bool):
        limit = int_digits_limit()
        if limit and value.bit_length() > limit * 3.3 and decimal_digits(value) > limit:
            return f"<integer of {decimal_digits(value)} digits>"
    try:
        text = json.dumps(
            value, ensure_ascii=False, default=lambda item: f"<{type(item).__name__}>"
        )
    except (ValueError, RecursionError, TypeError):
        text = (
            f"<{type(value).__name__}>"
            if not isinstance(value, (list, dict))
            else ("[...]" if isinstance(value, list) else "{...}")
        )
    if len(text) > width:
        text = text[: max(width - 3, 1)] + "..."
    return text


def unreadable_digits(value: int) -> int | None:
    """The number of decimal digits of ``value`` when it has more than Python reads
    back from JSON text (``sys.get_int_max_str_digits()``, 4,300 by default; 0 means
    no limit), else ``None``.  Cheap for every integer of a sane size: one
    ``bit_length`` (docs/semantics.md, "Values are JSON data").

    >>> unreadable_digits(10**4299), unreadable_digits(10**4300)
    (None, 4301)
    """
    limit = int_digits_limit()
    if not limit or value.bit_length() <= 3 * limit:  # 2**(3n) < 10**n: n digits at most
        return None
    digits = decimal_digits(value)
    return digits if digits > limit else None


def decimal_digits(value: int) -> int:
    """The number of decimal digits of an integer, however long, without ``str()``.

    >>> decimal_digits(-1200), decimal_digits(10**5000)
    (4, 5001)
    """
    value = abs(value)
    if value == 0:
        return 1
    estimate = int(value.bit_length() * math.log10(2))
    return estimate + 1 if value >= 10**estimate else estimate
