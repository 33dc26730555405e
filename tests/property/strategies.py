"""Hypothesis strategies of the property suite, on top of :mod:`obelisk.testing`.

Test modules in ``tests/property`` import this file as ``import strategies``
(pytest puts the directory of a test module without ``__init__.py`` on
``sys.path``).

Expressions
    :func:`expressions` parses the texts of :func:`obelisk.testing.expressions`
    into nodes; :func:`spellings` (:func:`obelisk.testing.spellings`) writes a
    node in every way the grammar allows, so that parsing the text must give the
    node back; :func:`plain_expressions` are the nodes the regex fast path
    handles; :func:`near_misses` mutates valid texts one character at a time.

Plans
    :func:`plan_documents` builds decoded JSON values of plans that parse, in all
    three shapes, with every kind of key (the syntax; :func:`obelisk.testing.plans`
    draws plans that also check); :data:`json_values` is random JSON with
    plan-like keys and ``†`` strings, for robustness tests.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import obelisk.testing as testing
from obelisk.grammar import Expression, parse_expression
from obelisk.interpreter.plan.model import META_KEYS

__all__ = [
    "KINDS",
    "MUTATION_CHARS",
    "OUTPUT_METHODS",
    "argument_values",
    "expression_texts",
    "expressions",
    "json_literals",
    "json_values",
    "near_misses",
    "plain_expressions",
    "plan_documents",
    "quoted_keys_with_a_bad_escape",
    "small_expression_texts",
    "spellings",
    "target_texts",
]

KINDS = ("state", "input", "data", "search-results", "doc_2")
OUTPUT_METHODS = ("set", "merge", "assign", "push", "concat", "erase")
# Characters the near-miss mutations insert or substitute.
MUTATION_CHARS = (*".[]*|&'\"† \t\\-_", "0", "1", "7", "a", "Z", "é")


def expressions(**options: Any) -> st.SearchStrategy[Expression]:
    """Expression nodes: :func:`obelisk.testing.expressions`, parsed."""
    return testing.expressions(**options).map(parse_expression)  # type: ignore[arg-type]


def plain_expressions() -> st.SearchStrategy[Expression]:
    """Expressions the regex fast path recognises (no quoted keys, no wildcard)."""
    return expressions(quoted=False, wildcards=False)


spellings = testing.spellings

#: Valid expression texts in input position (wildcards allowed).
expression_texts = testing.expressions()
#: Smaller expression texts, for use inside plans.
small_expression_texts = testing.expressions(max_segments=3, max_parts=3)
#: Valid output-path texts (no wildcards).
target_texts = testing.expressions(wildcards=False, max_segments=3, max_parts=3)


@st.composite
def near_misses(draw: st.DrawFn, texts: st.SearchStrategy[str] = expression_texts) -> str:
    """A valid text with one to three characters deleted, inserted or replaced."""
    text = draw(texts)
    for _ in range(draw(st.integers(1, 3))):
        operation = draw(st.sampled_from(["delete", "insert", "replace"]))
        if operation == "insert" or not text:
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(MUTATION_CHARS)) + text[at:]
        else:
            at = draw(st.integers(0, len(text) - 1))
            new = "" if operation == "delete" else draw(st.sampled_from(MUTATION_CHARS))
            text = text[:at] + new + text[at + 1 :]
    return text


_KEY_CHARS = st.characters(codec="utf-8", min_codepoint=0x20).filter(lambda c: c not in "\"'\\")


@st.composite
def quoted_keys_with_a_bad_escape(draw: st.DrawFn, quote: str) -> tuple[str, int]:
    r"""``(text, offset)``: ``†k[<quoted key>]`` whose key holds one invalid escape
    ``\q``; ``offset`` is where its backslash sits in ``text``."""
    other = "'" if quote == '"' else '"'
    units = draw(
        st.lists(
            st.one_of(_KEY_CHARS, st.sampled_from([other, "\\" + quote, "\\\\", "\\n"])),
            max_size=6,
        )
    )
    at = draw(st.integers(0, len(units)))
    prefix = "†k[" + quote + "".join(units[:at])
    return prefix + "\\q" + "".join(units[at:]) + quote + "]", len(prefix)


# ---------------------------------------------------------------------------
# JSON and plans

_numbers = st.one_of(
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
)
_literal_strings = st.one_of(
    st.text(max_size=10).filter(lambda s: not s.startswith("†")),
    st.text(max_size=8).map(lambda s: "††" + s),
)
#: Literal JSON values (no expression strings; ``††`` escapes allowed).
json_literals = st.recursive(
    st.one_of(st.none(), st.booleans(), _numbers, _literal_strings),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
#: Argument values: literals and valid expression strings, nested at any depth.
argument_values = st.recursive(
    st.one_of(st.none(), st.booleans(), _numbers, _literal_strings, small_expression_texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_argument_keys = st.text(max_size=8).filter(lambda k: not k.startswith("_"))
_unknown_meta_keys = st.text(max_size=6).map(lambda s: "_" + s).filter(lambda k: k not in META_KEYS)
_tools = st.one_of(
    st.sampled_from(["fetch", "issueRefund", "search.web", "lookup_customer", "?", " "]),
    st.text(min_size=1, max_size=12),
)


@st.composite
def _call(draw: st.DrawFn, used_ids: set[Any]) -> dict[str, Any]:
    call: dict[str, Any] = {"_tool": draw(_tools)}
    call.update(draw(st.dictionaries(_argument_keys, argument_values, max_size=3)))
    if draw(st.booleans()):
        call["_outputPath"] = draw(target_texts)
    if draw(st.booleans()):
        # "set" is the default and is not written back, so only the others.
        call["_outputMethod"] = draw(st.sampled_from(OUTPUT_METHODS[1:]))
    if draw(st.booleans()):
        call["_output"] = draw(json_literals)
    if draw(st.booleans()):
        call["_instance"] = draw(st.text(max_size=6))
    if draw(st.booleans()):
        candidate = draw(st.one_of(st.text(max_size=6), st.integers(-5, 50)))
        if candidate not in used_ids:
            used_ids.add(candidate)
            call["_id"] = candidate
    if draw(st.booleans()):
        call["_reasoningForCall"] = draw(st.text(max_size=20))
    call.update(draw(st.dictionaries(_unknown_meta_keys, json_literals, max_size=2)))
    items = list(call.items())
    order = draw(st.permutations(range(len(items))))
    return dict(items[i] for i in order)


@st.composite
def plan_documents(draw: st.DrawFn) -> list[Any] | dict[str, Any]:
    """A plan that parses, as a decoded JSON value, in one of the three shapes:
    random tool names, arguments, meta-properties and unknown ``_`` keys (the
    syntax; :func:`obelisk.testing.plans` draws plans that also check).

    Meta-properties hold no ``null`` (except ``_output``) and ``_outputMethod``
    is never the default ``"set"``: both are dropped by ``to_json``, so every
    plan drawn here survives a JSON-level round trip.
    """
    used_ids: set[Any] = set()
    calls = [draw(_call(used_ids)) for _ in range(draw(st.integers(0, 3)))]
    shape = draw(st.sampled_from(["list", "object", "message"]))
    if shape == "list":
        return calls
    data: dict[str, Any] = (
        {"calls": calls} if shape == "object" else {"type": "plan", "plan": calls}
    )
    if draw(st.booleans()):
        data["mode"] = draw(st.sampled_from(["eager", "lazy"]))
    items = list(data.items())
    order = draw(st.permutations(range(len(items))))
    return dict(items[i] for i in order)


_json_keys = st.one_of(
    st.sampled_from([*META_KEYS, "calls", "plan", "type", "mode", "_x", "x", "a b"]),
    st.text(max_size=5),
)
_json_strings = st.one_of(
    st.text(max_size=8),
    st.text(max_size=8).map(lambda s: "†" + s),
    st.sampled_from(
        ["†state.x", "†", "††", "†state..x", "†state[*]", "plan", "eager", "lazy", "set", "merge"]
    ),
    small_expression_texts,
    near_misses(small_expression_texts),
)
#: Random JSON with plan-like keys and many ``†`` strings (NaN included).
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _json_strings),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_json_keys, inner, max_size=5)
    ),
    max_leaves=20,
)
