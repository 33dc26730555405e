"""Reference patterns a llama.cpp server can compile (issue 29, points 1 and 6).

llama-cpp-python's JSON-schema converter copies an escaped dot, ``\\.``, into the
grammar as ``"\\."``, and llama.cpp's grammar parser refuses that escape ("unknown
escape"): the server then logs "failed to parse grammar" and decodes without any
constraint.  The real-model benchmark found it.  So a literal dot is written ``[.]``,
which every engine reads alike.
"""

from __future__ import annotations

import re

import obelisk
from obelisk.interpreter.loop import reference_patterns


@obelisk.tool
def lookup(key: str) -> dict[str, int]:
    """A record."""
    return {"n": len(key)}


def patterns(schema: object) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        found.extend(v for k, v in schema.items() if k == "pattern" and isinstance(v, str))
        for value in schema.values():
            found.extend(patterns(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(patterns(value))
    return found


def test_no_pattern_escapes_a_dot() -> None:
    for mode in ("eager", "lazy"):
        schema = obelisk.solution_schema(obelisk.Registry([lookup]), {"type": "integer"}, mode=mode)
        found = patterns(schema)
        assert found
        assert not [p for p in found if "\\." in p]


def test_the_patterns_still_read_dotted_references() -> None:
    reference = re.compile(reference_patterns.REFERENCE_PATTERN)
    assert reference.fullmatch("†state.a.b.0[1]['x y']")
    assert reference.fullmatch("†state.a || †state.b")
    assert not reference.fullmatch("†state,a")
    assert not reference.fullmatch("†state.")
