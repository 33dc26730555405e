"""Wall time and CPU time, side by side: the medians every benchmark reports.

The machine the benchmarks run on may be shared with other jobs, so a wall time
alone can be inflated by work that is not ours.  Every figure is measured both as
wall time (``time.perf_counter``) and as CPU time of this process, every thread
included (``time.process_time``); each is the median of its own samples.

Before each timed run the parser's expression cache is emptied (:func:`fresh`), so
every run parses its plan as a plan it has never seen, which is what a model's new
plan costs; the cache would otherwise hold every expression of a plan of up to
about 30,000 calls from the run before and hide the parse.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any, TypedDict

from obelisk.grammar.parser import EXPRESSION_CACHE

__all__ = [
    "Samples",
    "Times",
    "cpu_wall",
    "fresh",
    "median_times",
    "paired_ratio",
    "per_call_us",
    "ratio",
]


def fresh() -> None:
    """Empty the parser's expression cache: the next plan parses as never seen."""
    EXPRESSION_CACHE.clear()


class Times(TypedDict):
    """Wall and CPU figures of one measurement (seconds, or µs per call, or a ratio)."""

    wall: float
    cpu: float


def median_times(
    action: Callable[[], Any],
    repeat: int,
    check: Callable[[Any], None] | None = None,
    collect: bool = True,
) -> Times:
    """Run ``action`` ``repeat`` times (a garbage collection and an empty expression
    cache before each, unless not ``collect``): the medians.

    ``check``, when given, is called with each run's result after the clock stops
    (it raises if the run went wrong)."""
    walls, cpus = [], []
    for _ in range(repeat):
        if collect:
            fresh()
            gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        result = action()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
        if check is not None:
            check(result)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}


Samples = list[tuple[float, float]]
"""``(wall, cpu)`` seconds of each run, in the order they ran."""


def cpu_wall(samples: Samples) -> Times:
    """The medians of ``(wall, cpu)`` samples measured elsewhere."""
    return {
        "wall": statistics.median(s[0] for s in samples),
        "cpu": statistics.median(s[1] for s in samples),
    }


def per_call_us(times: Times | None, n: int) -> Times | None:
    """Microseconds per call (``None`` stays ``None``)."""
    if times is None:
        return None
    return {"wall": times["wall"] / n * 1e6, "cpu": times["cpu"] / n * 1e6}


def ratio(value: Times | None, reference: Times | None) -> Times | None:
    """``value ÷ reference``, wall by wall and CPU by CPU (``None`` if either is missing)."""
    if value is None or reference is None or not reference["wall"] or not reference["cpu"]:
        return None
    return {
        "wall": value["wall"] / reference["wall"],
        "cpu": value["cpu"] / reference["cpu"],
    }


def paired_ratio(samples: Samples, reference: Samples) -> Times:
    """The median of ``samples[i] ÷ reference[i]``, wall by wall and CPU by CPU: for
    runs measured side by side (round ``i`` of each), a ratio that a slower or faster
    machine between rounds does not move, as a ratio of two medians taken from
    different rounds can."""
    return {
        "wall": statistics.median(s[0] / r[0] for s, r in zip(samples, reference, strict=True)),
        "cpu": statistics.median(s[1] / r[1] for s, r in zip(samples, reference, strict=True)),
    }
