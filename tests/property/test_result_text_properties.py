"""The engine hands the write log the JSON text it made measuring a result's size
(``json_result_text``) instead of letting the state make it again: that text must be
what the state would have made, for every value a tool may return, adversarial ones
included (NaN and infinities, huge ints, tuples, bytes, sets, non-string keys, dict,
list and str subclasses, lone surrogates, deep nesting, cycles)."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic_core import to_json, to_jsonable_python

import obelisk
from obelisk.errors import OutputValidationError
from obelisk.grammar import parse_reference
from obelisk.interpreter.runtime.outcome import json_result_text, sized_json_result
from obelisk.interpreter.runtime.state import State
from obelisk.limits import Limits


class Mapping(dict[Any, Any]):
    """A dict subclass."""


class Items(list[Any]):
    """A list subclass."""


class Text(str):
    """A str subclass."""


def cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"a": [1]}
    value["a"].append(value)
    return value


COLLIDING_KEYS = {1: "int", "1": "str", "k": {True: 1, "true": 2}}


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**30, max_value=10**60),
    st.floats(),  # NaN and infinities included
    st.text(max_size=6),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "\ud800", "[{", "é†"]),
    st.binary(max_size=4),
    st.builds(Text, st.text(max_size=4)),
)
_keys = st.one_of(st.text(max_size=4), st.integers(-3, 3), st.booleans(), st.none())
values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.lists(inner, max_size=3).map(Items),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
        st.dictionaries(_keys, inner, max_size=3),
        st.dictionaries(st.text(max_size=4), inner, max_size=3).map(Mapping),
    ),
    max_leaves=16,
) | st.sampled_from(
    [
        cyclic(),
        nested(300),
        nested(230),  # deeper than jiter parses: converted by to_jsonable_python
        nested(40),
        [math.nan],
        {"x": [math.inf]},
        COLLIDING_KEYS,  # keys that become one string
    ]
)

TOOL = obelisk.Tool.from_function(lambda: None, name="produce", description="Returns a value.")
LIMITS = (Limits(), Limits(max_output_bytes=40, max_output_depth=3))


def outcome(value: Any, limits: Limits) -> tuple[Any, int, bytes | None] | str:
    try:
        return json_result_text(TOOL, value, limits)
    except OutputValidationError as exc:
        return str(exc)


@given(values, st.sampled_from(LIMITS))
@example(COLLIDING_KEYS, Limits())  # the data keeps the last value, and so does the text
@example(nested(230), Limits())  # deeper than jiter parses
def test_the_text_made_measuring_is_the_text_the_log_makes(value: Any, limits: Limits) -> None:
    first, again = outcome(value, limits), outcome(value, limits)
    if isinstance(first, str):  # refused: the same error as the data-and-size form
        assert again == first
        try:
            sized_json_result(TOOL, value, limits)
        except OutputValidationError as exc:
            assert str(exc) == first
        else:
            raise AssertionError("sized_json_result accepted what json_result_text refused")
        return
    assert not isinstance(again, str)
    data, size, text = first
    assert sized_json_result(TOOL, value, limits) == (data, size)
    assert data == to_jsonable_python(value)  # what the conversion has always made
    if text is not None:
        assert size == len(text)
        assert text == to_json(data)
    target = parse_reference("†state.out")
    given_text, made = State(), State()
    fanned_text, fanned = State(), State()
    targets = [target, parse_reference("†state.copy")]
    logged = given_text.write_many([(target, data)], owned=True, json=text)
    expected = made.write_many([(target, again[0])], owned=True)
    assert [e.json for e in logged] == [e.json for e in expected]
    assert [e.value for e in logged] == [e.value for e in expected]
    assert given_text.document("state") == made.document("state")
    data_twice = json_result_text(TOOL, value, limits)[0]
    logged = fanned_text.write_many([(t, data_twice) for t in targets], owned=True, json=text)
    data_thrice = json_result_text(TOOL, value, limits)[0]
    expected = fanned.write_many([(t, data_thrice) for t in targets], owned=True)
    assert [e.json for e in logged] == [e.json for e in expected]
    assert [e.value for e in logged] == [e.value for e in expected]
    assert fanned_text.document("state") == fanned.document("state")


@given(values)
def test_a_run_logs_what_its_state_holds_and_shares_nothing_with_the_tool(value: Any) -> None:
    returned: list[Any] = []

    async def produce() -> Any:
        returned.append(value)
        return value

    tool = obelisk.Tool.from_function(produce, name="produce", description="Returns a value.")
    plan = [{"_tool": "produce", "_outputPath": "†state.a && †state.b"}]
    result = obelisk.run_sync(plan, [tool])
    converted = outcome(value, Limits())
    record = result.calls[0]
    if isinstance(converted, str):
        assert record.status == "failed"
        assert record.error == {"type": "OutputValidationError", "message": converted}
        assert result.log == ()
        return
    assert record.status == "succeeded"
    data, _, text = converted
    assert [entry.path for entry in result.log] == ["†state.a", "†state.b"]
    for entry, name in zip(result.log, ("a", "b"), strict=True):
        assert entry.value == data
        if text is not None and type(data) in (dict, list):
            assert entry.json == text
        assert result.state[name] == data
        held = result.state[name]
        if isinstance(held, (dict, list)) and held:
            held.clear()  # the state's copy: neither the log nor the tool's value changes
            assert entry.value == data
