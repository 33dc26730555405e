"""The collector while a plan is parsed, checked or set up (docs/semantics.md, "The
garbage collector"): a big stage ends by moving its objects to the oldest generation
without a walk; a small one, a collector that was off and frozen objects are left
as they are.

A young collection moves what it walks to the middle generation, so an object found
in the oldest generation right after a stage was moved there without a walk.  The
tests judge by that, not by counting collections: other threads of the test process
may start collections of their own at any time."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

import obelisk
from obelisk.interpreter.plan.collector import PROMOTE_AT, gc_paused


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    gc.collect()
    yield
    if not was_enabled:
        gc.disable()


def _in(generation: int, value: object) -> bool:
    """Whether ``value`` is in ``generation`` (0: the youngest, 2: the oldest)."""
    return any(item is value for item in gc.get_objects(generation=generation))


def _allocate(count: int) -> list[list[int]]:
    return [[i] for i in range(count)]


def test_a_big_stage_moves_its_objects_to_the_oldest_generation() -> None:
    with gc_paused():
        assert not gc.isenabled()
        made = _allocate(PROMOTE_AT)
        assert _in(0, made)
    assert gc.isenabled()
    assert _in(2, made) and _in(2, made[0])
    assert gc.get_freeze_count() == 0


def test_a_small_stage_leaves_its_objects_young() -> None:
    with gc_paused():
        made = _allocate(100)
    assert gc.isenabled()
    assert not _in(2, made)


def test_a_collector_that_was_off_stays_off_and_nothing_moves() -> None:
    gc.disable()
    with gc_paused():
        made = _allocate(PROMOTE_AT)
    assert not gc.isenabled()
    assert _in(0, made)
    assert gc.get_count()[0] >= PROMOTE_AT


def test_objects_the_program_froze_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            made = _allocate(PROMOTE_AT)
        # neither thawed (the count would be 0) nor frozen again (it would grow)
        assert gc.get_freeze_count() == frozen
        assert not _in(2, made)
    finally:
        gc.unfreeze()


def test_nested_stages_resume_the_collector_once_the_outermost_ends() -> None:
    with gc_paused():
        with gc_paused():
            made = _allocate(PROMOTE_AT)
        assert not gc.isenabled()
        assert _in(0, made)
    assert gc.isenabled() and _in(2, made)


def test_cyclic_garbage_moved_by_a_big_stage_is_freed_by_a_full_collection() -> None:
    class Node:
        other: Any = None

    freed: list[str] = []
    first, second = Node(), Node()
    first.other, second.other = second, first  # a cycle only the collector frees
    weakref.finalize(first, freed.append, "cycle")
    del first, second
    with gc_paused():
        _allocate(PROMOTE_AT)
    gc.collect()
    assert freed == ["cycle"]


def test_checking_a_big_plan_moves_its_objects_to_the_oldest_generation() -> None:
    @obelisk.tool
    def zero(a: int = 0) -> int:
        """Nothing."""
        return 0

    plan = [{"_tool": "zero", "_outputPath": "†state.v0"}] + [
        {"_tool": "zero", "a": f"†state.v{i - 1}", "_outputPath": f"†state.v{i}"}
        for i in range(1, 1_000)
    ]
    result = obelisk.check(plan, [zero])
    assert result.ok and result.plan is not None
    assert _in(2, result.plan.calls[500])
