"""Every process-wide cache is bounded in entries and in bytes (issue 25, point 9;
docs/limits.md, "Caches").

Memory is measured with :mod:`tracemalloc` (Python's allocations) around a loop of
distinct inputs; before the bounds, 300 checks of distinct 1 MB ``††`` strings left
902 MB in the parser's expression cache.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import obelisk
from obelisk.caches import BoundedCache
from obelisk.grammar import Field, Reference, parse_reference, to_jsonpath
from obelisk.grammar.parser import EXPRESSION_CACHE, parse_expression

MiB = 1 << 20


@pytest.fixture(autouse=True)
def _empty_caches() -> Iterator[None]:
    EXPRESSION_CACHE.clear()
    yield
    EXPRESSION_CACHE.clear()


def _retained(action: Callable[[int], Any], times: int) -> float:
    """MiB still allocated after ``action(i)`` for each ``i`` in ``range(times)``."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for index in range(times):
            action(index)
        gc.collect()
        return (tracemalloc.get_traced_memory()[0] - before) / MiB
    finally:
        tracemalloc.stop()


def test_a_bounded_cache_keeps_its_entry_and_byte_bounds() -> None:
    cache: BoundedCache[int, str] = BoundedCache(max_entries=4, max_bytes=1000)
    for key in range(10):
        cache.put(key, str(key), 10)
    assert len(cache) == 4 and [cache.get(k) for k in range(6, 10)] == ["6", "7", "8", "9"]
    assert cache.get(5) is None  # the oldest went first
    cache.put(20, "big", 63)  # max_item_bytes is max_bytes // 16 = 62: not kept
    assert 20 not in cache
    small: BoundedCache[int, str] = BoundedCache(max_entries=100, max_bytes=100, max_item_bytes=50)
    for key in range(10):
        small.put(key, "x", 30)
    assert len(small) == 3 and small.bytes == 90
    small.put(9, "y", 40)  # a key put again replaces its entry
    assert small.get(9) == "y" and small.bytes <= 100
    small.clear()
    assert len(small) == 0 and small.bytes == 0


def test_checking_distinct_megabyte_literals_retains_almost_nothing() -> None:
    @obelisk.tool
    def note(text: str) -> str:
        return text

    registry = obelisk.Registry([note])

    def check(index: int) -> None:
        text = "††" + str(index) + "x" * 1_000_000
        assert obelisk.check([{"_tool": "note", "text": text}], registry).ok

    assert _retained(check, 300) < 8  # MiB; 902 before the bound


def test_the_expression_cache_is_bounded_in_bytes() -> None:
    """Expressions just under the per-entry bound are kept until the cache is full."""

    def parse(index: int) -> None:
        parse_expression("††" + str(index) + "x" * 15_000)  # UCS-2: about 60 KiB each

    retained = _retained(parse, 1500)
    assert EXPRESSION_CACHE.bytes <= EXPRESSION_CACHE.max_bytes
    assert retained < 40  # MiB: the 32 MiB bound and the cache's own structures
    assert len(EXPRESSION_CACHE) < 1500


def test_the_expression_cache_is_bounded_in_entries() -> None:
    for index in range(EXPRESSION_CACHE.max_entries + 1000):
        parse_expression(f"†state.k{index}")
    assert len(EXPRESSION_CACHE) == EXPRESSION_CACHE.max_entries
    assert parse_expression("†state.k1") == parse_reference("†state.k1")  # parsed again


def test_compiled_paths_are_bounded_in_bytes() -> None:
    def compile_one(index: int) -> None:
        to_jsonpath(Reference("state", (Field(f"{index}-" + "k" * 200_000),)))

    assert _retained(compile_one, 400) < 40  # MiB; 400 x 200 KB = 76 MiB unbounded


def test_checked_schemas_are_bounded_in_bytes() -> None:
    def define(index: int) -> None:
        schema = {
            "type": "object",
            "description": f"{index} " + "d" * 300_000,
            "properties": {"x": {"type": "string"}},
        }
        obelisk.Tool.from_schema({"name": f"t{index}", "parameters": schema})

    assert _retained(define, 200) < 40  # MiB: two 16 MiB sets; 2 x 200 x 300 KB unbounded


def test_compiled_regular_expressions_are_bounded() -> None:
    """RE2 programs live outside Python's allocator: the cache's own count and bytes
    are what bound them."""
    from obelisk.stdlib_tools import default_registry
    from obelisk.stdlib_tools._common import RE2_PROGRAMS as _PROGRAMS

    regex_match = default_registry()["regex_match"]
    for index in range(400):
        regex_match("x", f"{index}" + "y" * (index % 50) * 100)
    assert len(_PROGRAMS) <= _PROGRAMS.max_entries
    assert _PROGRAMS.bytes <= _PROGRAMS.max_bytes
    regex_match("x", "z" * 100_000)  # 100,000 instructions: too big to keep
    assert "z" * 100_000 not in _PROGRAMS


def test_schema_patterns_are_bounded() -> None:
    from obelisk.interpreter.tools.patterns import _PROGRAMS, pattern_matches

    for index in range(400):
        pattern_matches(f"^{index}" + "y" * (index % 50) * 100, "x")
    assert len(_PROGRAMS) <= _PROGRAMS.max_entries
    assert _PROGRAMS.bytes <= _PROGRAMS.max_bytes


def test_shared_argument_paths_are_bounded() -> None:
    from obelisk.interpreter.plan.plain import _MAX_TOP_PATHS, _TOP_PATHS

    @obelisk.tool
    def anything(**values: Any) -> None:
        return None

    plan = [{"_tool": "anything", f"a{i}": "†input.x"} for i in range(_MAX_TOP_PATHS + 500)]
    obelisk.check(plan, [anything], input={"x": 1})
    assert len(_TOP_PATHS) <= _MAX_TOP_PATHS
    assert all(len(name) <= 64 for (name,) in _TOP_PATHS.values())
