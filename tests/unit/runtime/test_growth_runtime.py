"""Issue 25 point 8, the runtime's part: nothing a run does grows worse than linearly.

* N ``merge``, ``assign``, ``push`` or ``concat`` writes to one path never copy the
  value they build (docs/semantics.md, "Output methods").
* ``Limits.max_state_bytes`` counts an estimate of the memory the state takes, not
  its JSON text (docs/limits.md).
* Standard tools whose result can be far bigger than their arguments refuse before
  they build it (docs/limits.md, "Work that cannot blow up").

No test here times anything: they measure allocations with ``tracemalloc``.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import obelisk
from obelisk import limits as limits_module
from obelisk.errors import StateWriteError
from obelisk.grammar import parse_reference
from obelisk.interpreter.runtime.state import State
from obelisk.stdlib_tools import default_registry

BIG = 50_000  # keys or items of the value the writes accumulate into


@contextmanager
def peak() -> Iterator[list[int]]:
    """``[bytes]``: the peak of what was allocated inside the block, beyond its start."""
    measured = [0]
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        yield measured
        measured[0] = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def accumulated(method: str) -> Any:
    if method in ("merge", "assign"):
        return {f"k{n}": {"n": n} for n in range(BIG)}
    return list(range(BIG))


def small(method: str) -> Any:
    if method in ("merge", "assign"):
        return {"extra": {"n": 1}}
    return [1] if method == "concat" else 1


# -- writes to one path -------------------------------------------------------------------


@pytest.mark.parametrize("method", ["merge", "assign", "push", "concat"])
def test_a_write_onto_a_big_value_does_not_copy_it(method: str) -> None:
    state = State({"m": accumulated(method)})
    target = parse_reference("†state.m")
    held = state.peek()["m"]
    with peak() as used:
        state.write(target, small(method), method)  # type: ignore[arg-type]
    # copying the 50,000-entry value would take over 400 kB (a list) or 2 MB (a dict)
    assert used[0] < 64 * 1024, used[0]
    assert state.peek()["m"] is held  # changed in place
    assert state.log[-1].value == small(method)  # the log keeps the write's own value
    assert state.log[-1].value is not state.peek()["m"]


def test_in_place_writes_give_the_values_copies_would() -> None:
    state = State({"m": {"a": {"x": 1, "y": {"p": 1}}, "b": 2}, "l": [1]})
    state.write(parse_reference("†state.m"), {"a": {"y": {"q": 2}}, "c": 3}, "merge")
    state.write(parse_reference("†state.m"), {"b": {"z": 1}}, "assign")
    state.write(parse_reference("†state.l"), [2, 3], "concat")
    state.write(parse_reference("†state.l"), [4], "push")
    assert state.document() == {
        "m": {"a": {"x": 1, "y": {"p": 1, "q": 2}}, "b": {"z": 1}, "c": 3},
        "l": [1, 2, 3, [4]],
    }
    # what check() says a write would give is a new value; the state is left alone
    would = state.check(parse_reference("†state.m"), {"d": 4}, "assign", None)
    assert would["d"] == 4 and "d" not in state.peek()["m"]
    # the log never shares objects with the state, even after later in-place writes
    state.write(parse_reference("†state.m"), {"a": {"y": {"r": 3}}}, "merge")
    assert state.log[0].value == {"a": {"y": {"q": 2}}, "c": 3}


def test_a_failed_call_writes_nothing_even_in_place() -> None:
    state = State({"m": {"a": 1}, "l": [1]})
    targets = [
        (parse_reference("†state.m"), {"b": 2}),
        (parse_reference("†state.l.x"), {"c": 3}),  # a list has no field x
    ]
    with pytest.raises(StateWriteError):
        state.write_many(targets, "merge")
    assert state.document() == {"m": {"a": 1}, "l": [1]}


@obelisk.tool
def reset_peak() -> None:
    """Start measuring here: what the run allocated before (its set-up) is left out."""
    tracemalloc.reset_peak()


@obelisk.tool
def piece(n: int) -> dict[str, Any]:
    """A small object."""
    return {f"new{n}": n}


@obelisk.tool
def item(n: int) -> int:
    """A number."""
    return n


@pytest.mark.parametrize("method", ["merge", "assign", "push"])
def test_a_run_of_small_writes_onto_a_big_value_allocates_little(method: str) -> None:
    tool = "item" if method == "push" else "piece"
    plan: list[dict[str, Any]] = [{"_tool": "reset_peak"}]
    plan += [
        {"_tool": tool, "n": n, "_outputPath": "†state.m", "_outputMethod": method}
        for n in range(20)
    ]
    start = {"m": accumulated(method)}
    tracemalloc.start()
    try:
        result = obelisk.run_sync(plan, [reset_peak, piece, item], state=start)
        used = tracemalloc.get_traced_memory()[1] - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert result.status == "completed", result.calls
    # before: each of the 20 writes copied the 50,000-entry value (2 MB for a dict)
    assert used < 256 * 1024, used
    assert len(result.state["m"]) == BIG + 20


# -- standard tools that amplify ----------------------------------------------------------

DEFAULT = obelisk.Limits().max_output_bytes  # what a tool called outside a run is held to


def refused_cheaply(call: Callable[[], Any], limit: int | None = 1_000_000) -> str:
    """The message of the ValueError ``call`` raises, having allocated little, with
    ``limit`` as the active output limit (``None``: the default one, outside a run)."""
    active = None if limit is None else obelisk.Limits(max_output_bytes=limit)
    with (
        limits_module.limits_in_effect(active),
        peak() as used,
        pytest.raises(ValueError, match=r"Limits\.max_output_bytes") as caught,
    ):
        call()
    # the input may be copied once (RE2 works on UTF-8), the result never is built
    assert used[0] < (limit or DEFAULT) // 2, f"{used[0]:,} bytes allocated before the refusal"
    return str(caught.value)


def test_replace_is_refused_before_it_builds_its_result() -> None:
    tools = default_tools()
    text = "a" * 1_000_000
    message = refused_cheaply(lambda: tools["replace"].function(text, "a", "b" * 100), None)
    assert "the output of replace would be at least 100,000,002 bytes of JSON" in message
    assert f"at most {DEFAULT:,} are allowed" in message
    assert tools["replace"].function("abc", "b", "xyz") == "axyzc"  # small ones still work


def test_json_dump_with_a_huge_indent_is_refused_before_it_builds_its_text() -> None:
    dump = default_tools()["json_dump"].function
    refused_cheaply(lambda: dump([[1, 2]] * 100, indent=10**6))
    assert dump({"a": [1]}, indent=2) == '{\n  "a": [\n    1\n  ]\n}'


def test_format_join_and_regex_replace_are_refused_before_they_build() -> None:
    tools = default_tools()
    long = "x" * 100_000
    refused_cheaply(lambda: tools["format"].function("{a}" * 1000, {"a": long}))
    refused_cheaply(lambda: tools["join"].function([""] * 1000, long))
    refused_cheaply(lambda: tools["concat"].function([long] * 1000))
    text = "a" * 100_000
    refused_cheaply(lambda: tools["regex_replace"].function(text, "a", "b" * 200))
    refused_cheaply(lambda: tools["regex_replace"].function(text, "(a)", "\\1" * 200))
    refused_cheaply(lambda: tools["regex_replace"].function(text, "a", "\\n" * 200))
    assert tools["format"].function("{a}-{b:>4}", {"a": 1, "b": "x"}) == "1-   x"
    assert tools["regex_replace"].function("abc", "(b)", "[\\1\\g<0>]") == "a[bb]c"


def default_tools() -> dict[str, Any]:
    registry = default_registry()
    return {name: registry[name] for name in registry.names()}


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        ({"_tool": "replace", "text": "a" * 100_000, "old": "a", "new": "bb"}, "replace"),
        ({"_tool": "range", "start": 500_000}, "range"),
        ({"_tool": "regex_find_all", "text": "a" * 300_000, "pattern": ""}, "regex_find_all"),
        ({"_tool": "split", "text": "ab," * 300_000, "separator": ","}, "split"),
    ],
)
def test_a_run_holds_the_standard_tools_to_its_own_output_limit(
    call: dict[str, Any], fragment: str
) -> None:
    limits = obelisk.Limits(max_output_bytes=100_000)
    plan = [{**call, "_outputPath": "†state.out"}]
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        result = obelisk.run_sync(plan, default_registry(), limits=limits)
        used = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    error = result.calls[0].error
    assert error is not None
    # refused in the tool (its worker thread sees the run's limits), not after it built it
    assert f"the output of {fragment} would be at least" in error["message"]
    assert "at most 100,000 are allowed (Limits.max_output_bytes)" in error["message"]
    assert used < 3_000_000, f"{used:,} bytes allocated"


# -- the state's budget counts memory ------------------------------------------------------


def test_the_state_budget_counts_memory_not_json_text() -> None:
    # 2,000 empty objects: 6 kB of JSON, but about 140 kB of memory
    @obelisk.tool
    def empties(n: int) -> list[dict[str, Any]]:
        """n empty objects."""
        return [{} for _ in range(n)]

    plan = [{"_tool": "empties", "n": 2_000, "_outputPath": "†state.e"}]
    result = obelisk.run_sync(plan, [empties], limits=obelisk.Limits(max_state_bytes=50_000))
    error = result.calls[0].error
    assert error is not None and error["type"] == "StateWriteError", result.calls[0]
    assert "bytes of memory (Limits.max_state_bytes, estimated)" in error["message"]


def test_the_memory_estimate_is_within_its_documented_factor() -> None:
    from pydantic_core import from_json, to_json

    from obelisk.json_values import memory_estimate

    shapes = [
        [n % 100 for n in range(20_000)],
        [n / 7 for n in range(20_000)],
        [f"s{n}" for n in range(20_000)],
        ["x" * 200 + str(n) for n in range(5_000)],
        [{"id": n, "name": f"n{n}", "tags": ["a", "b"]} for n in range(5_000)],
        [{} for _ in range(20_000)],
        {f"k{n}": {"n": n} for n in range(10_000)},
    ]
    for shape in shapes:
        text = to_json(shape)
        tracemalloc.start()
        value = from_json(text)
        used = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        estimate = memory_estimate(value, len(text))
        assert used / 2.5 <= estimate <= used * 2.5, (str(shape)[:40], estimate, used)
        assert estimate > len(text)  # never below the JSON text, as the old count was


def test_file_tools_refuse_a_file_bigger_than_the_output_limit(tmp_path: Any) -> None:
    (tmp_path / "big.txt").write_text("x" * 5_000, encoding="utf-8")
    plan = [
        {"_tool": "read_text", "path": "big.txt", "_outputPath": "†state.text"},
        {"_tool": "write_json", "path": "out.json", "value": [[1]], "indent": 10**6},
    ]
    limits = obelisk.Limits(max_output_bytes=1_000)
    result = obelisk.run_sync(plan, default_registry(tmp_path), limits=limits)
    messages = [call.error["message"] if call.error else "" for call in result.calls]
    assert "the output of read_text would be at least 5,002 bytes of JSON" in messages[0]
    assert "the output of write_json would be at least" in messages[1]
    assert not (tmp_path / "out.json").exists()
