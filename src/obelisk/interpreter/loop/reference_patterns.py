"""The patterns of references in the answer schema (docs/loop.md, "Schemas for
constrained decoders").

A constrained decoder (llama.cpp, xgrammar, outlines) turns the answer schema into a
grammar and applies each string ``pattern`` to the JSON text it writes.  So the
patterns here are anchored (``^...$``: llama.cpp's converter refuses others), and
follow the reference language of docs/language.md closely enough that every string
they admit parses as a reference, with no ``"``, backslash or control character (which
would let a decoder end the string early or write text that is not JSON).
"""

from __future__ import annotations

import re
import string
from typing import Any

from obelisk.interpreter.tools.tool import Tool

__all__ = [
    "OUTPUT_PATH_PATTERN",
    "REFERENCE_PATTERN",
    "REFERENCE_SCHEMA",
    "SHARED",
    "output_path_schema",
    "reference_pattern",
    "shared_definitions",
]

_NAME = "[A-Za-z_][A-Za-z0-9_-]*"
_INT = "-?(0|[1-9][0-9]*)"
_KEY = r"""\['[^'"\\\x00-\x1f]*'\]"""
_STEP = rf"([.]{_NAME}|[.]{_INT}|\[{_INT}\]|{_KEY})"
_REFERENCE = rf"†{_NAME}({_STEP}|\[\*\])*"


def _char_class(chars: str) -> str:
    """A regex character class of ``chars`` (ASCII), runs written as ranges."""
    codes = sorted({ord(c) for c in chars if c != "-"})
    parts: list[str] = []
    run_start = 0
    for n in range(1, len(codes) + 1):
        if n == len(codes) or codes[n] != codes[n - 1] + 1:
            low, high = chr(codes[run_start]), chr(codes[n - 1])
            parts.append(low if low == high else f"{low}-{high}")
            run_start = n
    return "[" + "".join(parts) + ("\\-" if "-" in chars else "") + "]"


_FIRST = string.ascii_letters + "_"
_LATER = _FIRST + string.digits + "-"


def _name_except(word: str) -> str:
    """A regex of every :data:`_NAME` but ``word`` (grammar engines have no
    lookahead): a name that leaves ``word`` at some letter, stops inside it, or goes
    on after it."""
    rest = "[A-Za-z0-9_-]*"
    options = [
        word[:n] + _char_class((_FIRST if n == 0 else _LATER).replace(word[n], "")) + rest
        for n in range(len(word))
    ]
    options += [word[:n] for n in range(1, len(word))]
    options.append(word + "[A-Za-z0-9_-]+")
    return "(" + "|".join(options) + ")"


_PLAIN_NAME = re.compile(_NAME)
_TARGET = rf"†{_name_except('input')}{_STEP}*"  # the input is read-only
REFERENCE_PATTERN = rf"^{_REFERENCE}( *(\|\||&&) *{_REFERENCE})*$"
"""The pattern of a reference string in the answer schema: the reference language
of docs/language.md (``†state.a.b[0]``, ``['a b']``, ``[*]``, ``||``, ``&&``) with
ASCII names, and no ``"``, backslash or control character, so that a constrained
decoder, which applies the pattern to the JSON text, writes only references that
parse and cannot end the string early (with ``^†.*$``, xgrammar and llama.cpp accept
``"†a"a"``).  Anchored at both ends, since llama.cpp's grammar converter refuses a
pattern without ``^...$`` (its server then falls back to unconstrained JSON).  A
reference it does not admit (a name outside ASCII, a ``["key"]`` in double quotes)
is still read by the loop when a model writes it unconstrained."""


def reference_pattern(input_keys: list[str], roots: tuple[str, ...] = ("state",)) -> str:
    """:data:`REFERENCE_PATTERN` for one request: a reference starts at one of
    ``roots`` (the documents the request shows: ``state`` and any data kind) or at
    the input, where it names one of ``input_keys`` (``†input.order_id``) or the
    whole input (``†input``).  A constrained decoder then writes no read of an
    input field that does not exist (docs/loop.md, "Schemas for constrained
    decoders"); keys that are not plain names are read as ``†input['a b']``."""
    plain = sorted({key for key in input_keys if _PLAIN_NAME.fullmatch(key)})
    steps = [f"[.]({'|'.join(plain)})"] if plain else []
    if len(plain) < len(set(input_keys)):
        steps.append(_KEY)
    into = f"({'|'.join(steps)})({_STEP}|\\[\\*\\])*" if steps else ""
    names = "|".join(sorted({root for root in roots if _PLAIN_NAME.fullmatch(root)} - {"input"}))
    others = [f"({names})({_STEP}|\\[\\*\\])*"] if names else []
    root = "†(" + "|".join([*others, f"input({into})?"]) + ")"
    return rf"^{root}( *(\|\||&&) *{root})*$"


OUTPUT_PATH_PATTERN = rf"^{_TARGET}( *\|\| *{_TARGET})*$"
"""The pattern of ``_outputPath``: a path without wildcard, or alternatives joined
by ``||`` (docs/language.md), constrained as :data:`REFERENCE_PATTERN` is."""
REFERENCE_SCHEMA = {
    "type": "string",
    "pattern": REFERENCE_PATTERN,
    "description": "a reference, e.g. †state.x",
}
_OUTPUT_PATH = {
    "type": "string",
    "pattern": OUTPUT_PATH_PATTERN,
    "description": "where the result is written, e.g. †state.x or †state.ok || †state.error",
}
SHARED = {"reference": REFERENCE_SCHEMA, "outputPath": _OUTPUT_PATH}
"""The schemas a solution schema holds once, in ``$defs`` under these names (no
dot, so no tool's or output's hoisted definition can take them), and points at with
``$ref`` wherever they appear: the patterns are long, and a JSON-mode request carries
the schema in its text."""


def shared_definitions(schema: Any, used: set[str]) -> Any:
    """``schema`` with each value equal to a :data:`SHARED` schema replaced by a
    ``$ref`` to it; the names used are added to ``used``."""
    if isinstance(schema, list):
        return [shared_definitions(item, used) for item in schema]
    if not isinstance(schema, dict):
        return schema
    for name, shared in SHARED.items():
        if schema == shared:
            used.add(name)
            return {"$ref": f"#/$defs/{name}"}
    return {key: shared_definitions(value, used) for key, value in schema.items()}


def output_path_schema(tool: Tool, mode: str) -> dict[str, Any]:
    """The schema of a call's ``_outputPath``: one alternative per declared outcome,
    in order (``outcome_mismatch``); one path for a latent call that carries
    ``_output`` (``ambiguous_output``); else any path or alternatives."""
    if tool.outcomes:
        count = len(tool.outcomes)
        pattern = rf"^{_TARGET}( *\|\| *{_TARGET}){{{count - 1}}}$"
        names = ", ".join(tool.outcomes)
        described = f"one path per outcome ({names}), in that order, joined by ||"
        return {"type": "string", "pattern": pattern, "description": described}
    if tool.latent and not tool.delegate and mode == "eager":
        described = "the one path you write _output to, e.g. †state.x"
        return {"type": "string", "pattern": f"^{_TARGET}$", "description": described}
    return dict(_OUTPUT_PATH)
