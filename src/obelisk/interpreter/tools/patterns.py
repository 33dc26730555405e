r"""JSON Schema ``pattern`` and ``patternProperties`` matched in linear time
(docs/limits.md, "Patterns in schemas").

jsonschema matches these keywords with Python's ``re.search``, which backtracks: a
pattern such as ``^(\w+\s?)*$`` takes seconds on a 27-character string and twice as
long with every character more, holding the GIL, so no timeout can stop it.  Every
jsonschema validator obelisk builds (tool arguments and outputs, a loop's output and
state, ``json_validate``, dry-run samples, the OpenAI adapter) comes from
:func:`linear_validator_class`, which replaces the keywords that match patterns
(``pattern``, ``patternProperties``, ``additionalProperties`` beside
``patternProperties``, draft 2020-12's ``unevaluatedProperties``) by versions that
match with RE2 (``google-re2``), in time linear in the text whatever the pattern.
Draft 2019-09's ``unevaluatedProperties`` still matches ``patternProperties`` with
Python's ``re``.

RE2 syntax is Python's without the constructs that need backtracking: a pattern
with a backreference, a lookaround, ``\Z`` or a possessive quantifier does not
compile.  Such a pattern, when Python's ``re`` accepts it, is matched by ``re`` in a
worker process (a fresh ``python -I -S``, started on first need and kept) that is
killed after :data:`FALLBACK_SECONDS`; a value it could not match in time does not
match, and the message says why.

Patterns keep the meaning jsonschema (Python's ``re``) gave them, which is also what
``obelisk.testing`` generates from: before RE2 compiles a pattern, :func:`translate`
rewrites ``\d``, ``\D``, ``\w``, ``\W``, ``\s``, ``\S`` into the Unicode classes
Python means (RE2's are ASCII), ``$`` into "end, or before a final newline",
``\Z`` into ``\z`` and ``\uXXXX`` into ``\x{XXXX}``.  What stays different:
``\b`` and ``\B`` (ASCII word boundaries in RE2), and ``\W`` or ``\S`` inside a
bracketed class (ASCII there).
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from obelisk.caches import BoundedCache

__all__ = [
    "FALLBACK_SECONDS",
    "linear_validator_class",
    "pattern_matches",
    "translate",
]

FALLBACK_SECONDS = 0.5
"""How long Python's ``re`` may take to match one pattern RE2 cannot run, in seconds."""

_UNSUPPORTED = (
    (re.compile(r"\(\?[=!]"), "lookahead"),
    (re.compile(r"\(\?<[=!]"), "lookbehind"),
    (re.compile(r"\\[1-9]|\(\?P="), "backreferences"),
    (re.compile(r"\(\?>"), "atomic groups"),
    (re.compile(r"[*+?}]\+"), "possessive quantifiers"),
    (re.compile(r"\(\?\("), "conditionals"),
)
_UNPROBED: Any = object()
_UNANCHORED: Any = _UNPROBED  # re2's search anchor once probed (None: public search only)
_SPACE = r"\t\n\v\f\r\x1c-\x1f\x85\p{Z}"  # what str.isspace() is true for
_WORD = r"\p{L}\p{N}_"  # Python's \w: str.isalnum() or "_"
_OUTSIDE = {
    "d": r"\p{Nd}", "D": r"\P{Nd}", "w": f"[{_WORD}]", "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]", "Z": r"\z",
}  # fmt: skip
_INSIDE = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": _WORD, "s": _SPACE}
_MULTILINE = re.compile(r"\(\?[a-zA-Z]*m")
_HEX = re.compile(r"[0-9a-fA-F]+")
# Compiled programs by pattern, or for a pattern RE2 refuses, what it said (a str).
# The cost counted is the pattern and the program; the states RE2 caches while it
# matches are bounded by RE2 itself (its max_mem, 8 MiB a program).
_PROGRAMS: BoundedCache[str, Any] = BoundedCache(max_entries=256, max_bytes=32 << 20)


def translate(pattern: str) -> str:
    """``pattern`` (Python ``re`` syntax) in RE2 syntax with the meaning Python's
    ``re`` gives it, as far as RE2 can say it (module docstring)."""
    out: list[str] = []
    dollar = "$" if _MULTILINE.search(pattern) else r"(?:\n?\z)"
    inside, i, n = False, 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            i = _escape(pattern, i, inside, out)
            continue
        if inside:
            inside = char != "]"
        elif char == "[":
            inside = True
            start = i + 1 + (pattern.startswith("^", i + 1))
            if pattern.startswith("]", start):  # a literal "]" first in the class
                out.append(pattern[i : start + 1])
                i = start + 1
                continue
        elif char == "$":
            char = dollar
        out.append(char)
        i += 1
    return "".join(out)


def _escape(pattern: str, i: int, inside: bool, out: list[str]) -> int:
    """Append the escape at ``pattern[i]`` (a backslash) translated; the next index."""
    letter = pattern[i + 1]
    if letter in "uU":
        digits = 4 if letter == "u" else 8
        code = pattern[i + 2 : i + 2 + digits]
        if len(code) == digits and _HEX.fullmatch(code):
            out.append(f"\\x{{{code}}}")
            return i + 2 + digits
    table = _INSIDE if inside else _OUTSIDE
    out.append(table.get(letter, pattern[i : i + 2]))
    return i + 2


def _unanchored() -> Any:
    """``re2``'s anchor for a search, when its compiled objects can be asked directly."""
    import re2

    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    probe = re2.compile("b")
    try:
        if anchor is not None and probe._regexp.Match(anchor, b"ab", 0, 2)[0] == (1, 2):
            return anchor
    except Exception:  # another google-re2: its public search only
        return None
    return None


def _program(pattern: str) -> Any:
    """The RE2 program of ``pattern``, or what RE2 said (a ``str``) when it refuses it."""
    found = _PROGRAMS.get(pattern)
    if found is not None:
        return found
    import re2  # a few MiB of native code, imported for the first pattern

    global _UNANCHORED
    if _UNANCHORED is _UNPROBED:
        _UNANCHORED = _unanchored()
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.never_capture = True  # only whether it matches: half the time of groups
    try:
        program: Any = re2.compile(translate(pattern), options)
        cost = sys.getsizeof(pattern) + 64 * program.programsize
    except re2.error as exc:
        raw = exc.args[0] if exc.args else ""
        program = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        if len(program) > 120:  # RE2 quotes the pattern, which may be long
            program = program[:117] + "..."
        cost = sys.getsizeof(pattern) + sys.getsizeof(program)
    _PROGRAMS.put(pattern, program, cost)
    return program


def _refusal(pattern: str, reason: str) -> str:
    """Why RE2 cannot run ``pattern``, in words: the construct, and what RE2 said."""
    for found, construct in _UNSUPPORTED:
        if found.search(pattern):
            return f"RE2 cannot run {pattern!r}, which uses {construct} ({reason})"
    return f"RE2 cannot run {pattern!r} ({reason})"


# The worker: a fresh interpreter (isolated mode: no site, no user's main module)
# that answers one JSON line [pattern, text] with "1" (a match) or "0" per line.
_WORKER = (
    "import json, re, sys\n"
    "print('ready', flush=True)\n"
    "for line in sys.stdin:\n"
    "    pattern, text = json.loads(line)\n"
    "    print('1' if re.search(pattern, text) else '0', flush=True)\n"
)


class _Worker:
    """A Python process that runs ``re.search`` for patterns RE2 cannot run; a search
    that takes longer than :data:`FALLBACK_SECONDS` kills it (the next one starts a
    new process).  One search at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()

    def _start(self) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        threading.Thread(target=_read, args=(process, lines), daemon=True).start()
        self._lines = lines
        if lines.get(timeout=30) != "ready":  # startup is not part of the bound
            raise OSError("the pattern worker did not start")
        return process

    def search(self, pattern: str, text: str) -> bool:
        """``re.search(pattern, text)``; ``TimeoutError`` past FALLBACK_SECONDS,
        ``OSError`` when the worker cannot be started or dies."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            process = self._process
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps([pattern, text]) + "\n")
                process.stdin.flush()
                answer = self._lines.get(timeout=FALLBACK_SECONDS)
            except queue.Empty:
                process.kill()
                process.wait()
                self._process = None
                raise TimeoutError(pattern) from None
            if answer not in ("0", "1"):  # the worker died (EOF) or refused the pattern
                self._process = None
                raise OSError("the pattern worker failed")
            return answer == "1"


def _read(process: subprocess.Popen[str], lines: queue.SimpleQueue[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        lines.put(line.strip())
    lines.put("")  # end of file: the worker is gone


_WORKER_PROCESS = _Worker()


def pattern_matches(pattern: str, text: str) -> bool | str:
    """Whether ``pattern`` matches somewhere in ``text`` (``re.search``'s meaning):
    ``True``, ``False``, or, for a pattern RE2 cannot run that Python's ``re`` did
    not match within :data:`FALLBACK_SECONDS`, the reason as text.  A text RE2
    cannot read (a lone surrogate: not UTF-8) goes to Python's ``re`` too."""
    program = _program(pattern)
    if not isinstance(program, str):
        try:
            return _search(program, text)
        except UnicodeEncodeError:
            program = "the text has a lone surrogate, which is not UTF-8"
    try:
        return _WORKER_PROCESS.search(pattern, text)
    except TimeoutError:
        return (
            f"{_refusal(pattern, program)}, and Python's re did not finish matching it "
            f"within {FALLBACK_SECONDS:g} s"
        )
    except OSError:  # no process could be started, or the pattern is not Python's either
        return f"{_refusal(pattern, program)}, and Python's re could not match it"


def _search(program: Any, text: str) -> bool:
    """Whether RE2 ``program`` matches in ``text``.  ``re2``'s public ``search`` builds
    a match object and maps byte offsets back to characters (about 6 us); its compiled
    ``RE2`` object answers from the UTF-8 bytes in about 1.5 us, and is used when this
    version of ``google-re2`` has it (1.1 does)."""
    if _UNANCHORED is None:
        return program.search(text) is not None
    data = text.encode("utf-8")
    return bool(program._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0] != -1)


def _matched(pattern: str, text: str) -> bool:
    return pattern_matches(pattern, text) is True


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    found = pattern_matches(pattern, instance)
    if found is True:
        return
    if found is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")
    else:
        yield ValidationError(f"{instance!r} does not match {pattern!r}: {found}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matched(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _extras(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """The keys of ``instance`` that ``properties`` and ``patternProperties`` leave."""
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(_matched(p, key) for p in patterns)
    ]


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    """jsonschema's ``additionalProperties``, its ``patternProperties`` matched with
    :func:`pattern_matches`."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = set(_extras(instance, schema))
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            keys, verb = _extras_message(sorted(extras, key=str))
            yield ValidationError(
                f"Additional properties are not allowed ({keys} {verb} unexpected)"
            )


def _extras_message(extras: list[Any]) -> tuple[str, str]:
    """jsonschema's wording of unexpected keys: their reprs and "was" or "were"."""
    return ", ".join(repr(extra) for extra in extras), "was" if len(extras) == 1 else "were"


def _evaluated_keys(validator: Any, instance: Any, schema: Any) -> list[Any]:
    """jsonschema's ``find_evaluated_property_keys_by_schema`` (draft 2020-12), its
    ``patternProperties`` matched with :func:`pattern_matches`."""
    if validator.is_type(schema, "boolean"):
        return []
    return [
        *_referenced_keys(validator, instance, schema),
        *_property_keys(validator, instance, schema),
        *_applicator_keys(validator, instance, schema),
        *_conditional_keys(validator, instance, schema),
    ]


def _referenced_keys(validator: Any, instance: Any, schema: Any) -> list[Any]:
    """The keys the schemas of ``$ref`` and ``$dynamicRef`` evaluate."""
    keys: list[Any] = []
    for keyword in ("$ref", "$dynamicRef"):
        if (ref := schema.get(keyword)) is not None:
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys += _evaluated_keys(inner, instance, resolved.contents)
    return keys


def _property_keys(validator: Any, instance: Any, schema: Any) -> list[Any]:
    """The keys ``properties``, ``additionalProperties``, ``unevaluatedProperties``
    and ``patternProperties`` evaluate."""
    keys: list[Any] = []
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys += properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            keys += (k for k, v in instance.items() if _valid(validator.descend(v, subschema)))
    for pattern in schema.get("patternProperties", ()):
        keys += (key for key in instance if _matched(pattern, key))
    return keys


def _applicator_keys(validator: Any, instance: Any, schema: Any) -> list[Any]:
    """The keys the ``dependentSchemas`` that apply and the valid subschemas of
    ``allOf``, ``oneOf`` and ``anyOf`` evaluate."""
    keys: list[Any] = []
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys += _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _valid(validator.descend(instance, subschema)):
                keys += _evaluated_keys(validator, instance, subschema)
    return keys


def _conditional_keys(validator: Any, instance: Any, schema: Any) -> list[Any]:
    """The keys ``if`` and ``then``, or ``else``, evaluate."""
    if "if" not in schema:
        return []
    if validator.evolve(schema=schema["if"]).is_valid(instance):
        keys = _evaluated_keys(validator, instance, schema["if"])
        if "then" in schema:
            keys += _evaluated_keys(validator, instance, schema["then"])
        return keys
    if "else" in schema:
        return _evaluated_keys(validator, instance, schema["else"])
    return []


def _valid(errors: Iterator[Any]) -> bool:
    return next(errors, None) is None


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    """jsonschema's ``unevaluatedProperties`` (draft 2020-12) with
    :func:`_evaluated_keys`."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys(validator, instance, schema)
    bad = [  # a key once per error, as jsonschema lists them
        key
        for key in instance
        if key not in evaluated
        for _ in validator.descend(instance[key], unevaluated, path=key, schema_path=key)
    ]
    if not bad:
        return
    if unevaluated is False:
        message = "Unevaluated properties are not allowed (%s %s unexpected)"
        yield ValidationError(message % _extras_message(sorted(bad, key=str)))
    else:
        message = (
            "Unevaluated properties are not valid under the given schema "
            "(%s %s unevaluated and invalid)"
        )
        yield ValidationError(message % _extras_message(bad))


_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_CLASSES: dict[Any, Any] = {}  # one extended class per jsonschema class (a dozen at most)
_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


def linear_validator_class(cls: Any) -> Any:
    """``cls`` (a jsonschema validator class) with ``pattern``, ``patternProperties``,
    ``additionalProperties`` and (draft 2020-12) ``unevaluatedProperties`` matching
    patterns with RE2 (module docstring)."""
    found = _CLASSES.get(cls)
    if found is None:
        from jsonschema.validators import extend

        keywords = {k: v for k, v in _KEYWORDS.items() if k in cls.VALIDATORS}
        if cls.META_SCHEMA.get("$schema") == _DRAFT_2020_12:
            keywords["unevaluatedProperties"] = _unevaluated_properties
        found = _CLASSES[cls] = extend(cls, keywords)
    return found
