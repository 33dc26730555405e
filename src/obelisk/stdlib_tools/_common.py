"""Helpers shared by the standard tools: relative paths, JSON equality, native work.

A *relative path* is the path part of a reference (docs/language.md) without the
``†kind``: ``"a.b[0]"``, ``"[2].name"``, ``'["a key"].x'``, ``"items[*].id"``,
or ``""`` for the whole value.  It is parsed by the reference grammar and
evaluated with the jsonpath-ng expression built from it, as state reads are.

Native work must not be running when the interpreter exits (docs/limits.md).  A sync
tool runs in a daemon worker thread, and one past its timeout (or the run's) is left
to finish on its own.  If that thread is inside C++ code that released the GIL (RE2's
matching, in ``google-re2``) when the interpreter finalizes, Python 3.10 to 3.13 end
the thread as it takes the GIL back, by unwinding its C++ frames, and the C++ runtime
aborts the process (``terminate called without an active exception``, exit code 134).
:func:`native_call` counts such work; at exit (``atexit``, which runs before
finalization) new work is refused and the work in flight is waited for, at most
:data:`EXIT_WAIT` seconds: RE2 runs in time linear in its text, so that is short.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import sys
import threading
from collections.abc import Hashable, Iterable, Iterator
from typing import Any

from obelisk.caches import BoundedCache
from obelisk.errors import ReferenceSyntaxError
from obelisk.grammar import (
    Field,
    Index,
    Reference,
    find,
    parse_reference,
)
from obelisk.interpreter.tools.tool import Tool
from obelisk.limits import active_limits

__all__ = [
    "EXIT_WAIT",
    "RE2_PROGRAMS",
    "check_output_size",
    "compile_path",
    "json_equal",
    "json_key",
    "json_type",
    "lookup",
    "native_call",
    "one_line",
    "path_text",
    "re2_program",
]

_KIND = "†v"


def compile_path(path: str) -> Reference:
    """The reference for a relative path; ``ValueError`` naming the bad spot.  Not
    cached here: the parser's bounded expression cache keeps the parsed path."""
    if path.startswith("†"):
        raise ValueError(
            f"invalid path {path!r}: write a relative path such as 'a.b[0]', without '†kind'"
        )
    prefix = _KIND if path == "" or path.startswith(("[", ".")) else _KIND + "."
    try:
        return parse_reference(prefix + path)
    except ReferenceSyntaxError as exc:
        at = max(0, exc.span[0] - len(prefix))
        raise ValueError(f"invalid path {path!r}: {exc.reason} (at character {at})") from None


def lookup(value: Any, path: str) -> tuple[bool, Any]:
    """``(True, found)`` or ``(False, None)`` when nothing is at ``path``.

    Evaluated exactly as a state read of the same path is (:func:`obelisk.grammar.find`):
    ``[*]`` yields the list of every match (possibly empty) once the container
    before it exists.
    """
    return find(value, compile_path(path))


def path_text(parts: Iterable[str | int]) -> str:
    """A relative path from keys and indexes: ``["a", 0, "b c"]`` -> ``'a[0]["b c"]'``."""
    text = "".join(str(Index(p)) if isinstance(p, int) else str(Field(p)) for p in parts)
    return text[1:] if text.startswith(".") else text


def json_type(value: Any) -> str:
    """The JSON type name of a value: null, boolean, number, string, array, object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_key(value: Any) -> Hashable:
    """A hashable key with JSON equality: ``1 == 1.0``, ``true != 1``, key order ignored."""
    kind = json_type(value)
    if kind == "array":
        return (kind, tuple(json_key(item) for item in value))
    if kind == "object":
        return (kind, frozenset((str(k), json_key(v)) for k, v in value.items()))
    if kind in ("null", "boolean", "number", "string"):
        return (kind, value)
    return (kind, repr(value))


def json_equal(left: Any, right: Any) -> bool:
    """JSON equality (see :func:`json_key`)."""
    return json_key(left) == json_key(right)


def check_output_size(tool: str, size: int) -> None:
    """Refuse, before it is built, a result of at least ``size`` bytes of compact JSON
    when that passes ``Limits.max_output_bytes`` of the run calling the tool (the
    default limits outside a run): ``ValueError``.  For the tools whose result can be
    far bigger than their arguments (docs/limits.md, "Work that cannot blow up")."""
    limit = active_limits().max_output_bytes
    if size > limit:
        raise ValueError(
            f"the output of {tool} would be at least {size:,} bytes of JSON; at most "
            f"{limit:,} are allowed (Limits.max_output_bytes), so it was not built"
        )


def one_line(*tools: Tool) -> tuple[Tool, ...]:
    """The tools, with the line breaks of their docstring descriptions turned into spaces
    (a description is one paragraph for the model)."""
    for item in tools:
        item.description = re.sub(r"\s*\n\s*", " ", item.description)
    return tools


EXIT_WAIT = 30.0
"""Seconds the interpreter's exit waits, at most, for native work still running."""


class _InFlight:
    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.running = 0
        self.exiting = False
        self.registered = False

    def enter(self) -> None:
        with self.condition:
            if self.exiting:
                raise RuntimeError("not run: the interpreter is exiting")
            self.running += 1
            if not self.registered:
                self.registered = True
                atexit.register(self.wait)

    def leave(self) -> None:
        with self.condition:
            self.running -= 1
            if not self.running:
                self.condition.notify_all()

    def wait(self) -> None:
        with self.condition:
            self.exiting = True
            self.condition.wait_for(lambda: not self.running, timeout=EXIT_WAIT)


_IN_FLIGHT = _InFlight()


@contextlib.contextmanager
def native_call() -> Iterator[None]:
    """Around native work that releases the GIL: the interpreter's exit waits for it,
    and refuses it (``RuntimeError``) once exiting."""
    _IN_FLIGHT.enter()
    try:
        yield
    finally:
        _IN_FLIGHT.leave()


# -- RE2 programs, for the regular-expression tools (text.py) --------------------------

_UNSUPPORTED = (
    (re.compile(r"invalid escape sequence: \\[1-9]"), "backreferences such as \\1"),
    (re.compile(r"invalid perl operator: \(\?P$"), "named backreferences (?P=name)"),
    (re.compile(r"\(\?<?=$"), "lookaround (?=...) / (?<=...)"),
    (re.compile(r"\(\?<?!$"), "negative lookaround (?!...) / (?<!...)"),
    (re.compile(r"\(\?>$"), "atomic groups (?>...)"),
    (re.compile(r"bad repetition operator: [*+?}]\+"), "possessive quantifiers such as a*+"),
    (re.compile(r"invalid escape sequence: \\Z"), "\\Z (write \\z)"),
)


def _shown(pattern: str) -> str:
    """``pattern`` quoted for a message, cut after 60 characters."""
    return (
        repr(pattern) if len(pattern) <= 60 else repr(pattern[:57]) + f"... ({len(pattern)} chars)"
    )


def _options(re2: Any) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    return options


# RE2 programs by pattern: 256 at most, 32 MiB counting the pattern and the program
# (RE2 bounds the states it caches while matching itself: max_mem, 8 MiB a program).
RE2_PROGRAMS: BoundedCache[str, Any] = BoundedCache(max_entries=256, max_bytes=32 << 20)


def re2_program(pattern: str) -> Any:
    """The RE2 program for ``pattern``; ``ValueError`` naming what RE2 refused."""
    found = RE2_PROGRAMS.get(pattern)
    if found is None:
        found = _new_program(pattern)
        RE2_PROGRAMS.put(pattern, found, sys.getsizeof(pattern) + 64 * found.programsize)
    return found


def _new_program(pattern: str) -> Any:
    import re2

    try:
        return re2.compile(pattern, _options(re2))
    except re2.error as exc:
        raw = exc.args[0] if exc.args else ""
        reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        if len(reason) > 120:  # RE2 quotes the pattern, which may be long
            reason = reason[:117] + "..."
        for found, construct in _UNSUPPORTED:
            if found.search(reason):
                raise ValueError(
                    f"invalid regular expression {_shown(pattern)}: RE2 does not support "
                    f"{construct} ({reason})"
                ) from None
        raise ValueError(f"invalid regular expression {_shown(pattern)}: {reason}") from None
