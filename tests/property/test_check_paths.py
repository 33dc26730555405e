"""The checker's shortcuts give what its general code gives (docs/diagnostics.md).

``ArgumentChecks.literals`` picks each call's literal arguments in one pass over
the arguments (a string is unescaped in place, a container copied); the oracle
below is the plain statement of what it must return: the arguments the tool may
take, less those that are one expression (not an escaped literal) and those whose
expressions did not parse, each unescaped by a recursive copy; in an object or array,
each expression is replaced by the value its place obviously admits, and an argument
with a place that has none is left out.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from tests.property.strategies import argument_values

import obelisk
from obelisk.diagnostics import Collector
from obelisk.grammar import Escaped
from obelisk.interpreter.analysis.arguments import ArgumentChecks
from obelisk.interpreter.analysis.schema_types import STAND_IN_UNKNOWN, stand_in_at
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.plan.parse import parse_partial
from obelisk.interpreter.tools.tool import Tool


@obelisk.tool
def typed(key: str, limit: int = 10, note: str = "") -> dict[str, int]:
    """A function tool: its arguments schema takes no other names."""
    return {"value": limit}


OPEN = Tool(
    name="open",
    parameters={"type": "object", "properties": {"key": {"type": "string"}, "": {}}},
)
CLOSED = Tool(
    name="closed",
    parameters={
        "type": "object",
        "properties": {"a": {}, "b": {"type": "integer"}},
        "additionalProperties": False,
    },
)


def _unescape(value: Any) -> Any:
    if isinstance(value, str):
        return value[1:] if value.startswith("††") else value
    if isinstance(value, list):
        return [_unescape(item) for item in value]
    if isinstance(value, dict):
        return {key: _unescape(item) for key, item in value.items()}
    return value


def _masked(tool: Tool, name: str, value: Any, places: list[tuple[str | int, ...]]) -> Any:
    """The value with each expression replaced by its place's stand-in (issue 24)."""
    schema = tool.parameter_schema(name)
    copy = _unescape(value)
    for place in places:
        mask = STAND_IN_UNKNOWN if schema is None else stand_in_at(schema, place, tool.parameters)
        if mask is STAND_IN_UNKNOWN:
            return STAND_IN_UNKNOWN
        holder = copy
        for step in place[:-1]:
            holder = holder[step]
        holder[place[-1]] = mask
    return copy


def oracle(call: Call, tool: Tool, unchecked: frozenset[str]) -> dict[str, Any]:
    expressions = [arg for arg in call.expressions if not isinstance(arg.expression, Escaped)]
    whole = {str(arg.path[0]) for arg in expressions if len(arg.path) == 1}
    places: dict[str, list[tuple[str | int, ...]]] = {}
    for arg in expressions:
        if len(arg.path) > 1:
            places.setdefault(str(arg.path[0]), []).append(arg.path[1:])
    found = {
        name: _masked(tool, name, value, places[name]) if name in places else _unescape(value)
        for name, value in call.arguments.items()
        if (tool.accepts_extra or name in tool.parameter_names)
        and name not in whole
        and name not in unchecked
    }
    return {name: value for name, value in found.items() if value is not STAND_IN_UNKNOWN}


_NAMES = st.sampled_from(["key", "limit", "note", "a", "b", "", "other"])
_VALUES = st.one_of(
    argument_values,
    st.text(max_size=4).map(lambda s: "††" + s),  # escaped literals, often
    st.sampled_from(["†state..a", "†", "†input[", "†a || "]),  # expressions that do not parse
)


@given(st.lists(st.dictionaries(_NAMES, _VALUES, max_size=5), max_size=4))
def test_literals_agree_with_the_oracle(arguments: list[dict[str, Any]]) -> None:
    partial = parse_partial([{"_tool": "t", **given} for given in arguments])
    assert partial.plan is not None
    checks = ArgumentChecks(Collector(), partial)
    for call in partial.plan.calls:
        unchecked = partial.unchecked.get(call.index, frozenset())
        for tool in (typed, OPEN, CLOSED):
            found = checks.literals(call, tool)
            expected = oracle(call, tool, unchecked)
            assert found == expected
            assert list(found) == list(expected)  # in the call's order
