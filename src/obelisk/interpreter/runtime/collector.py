"""Python's cyclic garbage collector while plans run (docs/semantics.md, "The garbage
collector").

A run allocates a few dozen small objects per call (its plan, graph and records, then
the tasks, arguments and results of its calls), and nearly all of them live until
the run ends.  With the collector's default first threshold (700 allocations) the
collector walks them many times over while they are young and moves them to older
generations, where it walks them again: about 13% of the CPU time of 10,000
zero-work calls (the layered plan of ``benchmarks/run_overhead.py``; the collector's
time read with ``gc.callbacks``).  While at least one run is in progress in the
process, :func:`run_collector` raises that threshold to :data:`RUN_THRESHOLD`, which
halved that time in the same measurement.  The collector still runs, less often;
reference counting frees everything that is not in a cycle, as always.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["RUN_THRESHOLD", "run_collector"]

RUN_THRESHOLD = 10_000
"""The collector's first threshold while a run is in progress (allocations of
tracked objects); Python's default is 700 (2,000 from 3.13)."""

_lock = threading.Lock()
_runs = 0  # runs in progress in the process
_found: tuple[int, ...] = ()  # the thresholds when the first of them started
_set: tuple[int, ...] = ()  # the thresholds set then


class run_collector:  # used as a function: ``with run_collector():``
    """Raise the collector's first threshold to :data:`RUN_THRESHOLD` for the block,
    process-wide.  Blocks may nest and overlap (runs in one event loop, or in
    threads): the first raises it, the last restores the thresholds it found, unless
    something else changed them meanwhile.  A threshold of 0 (automatic collection
    off) or above :data:`RUN_THRESHOLD` is left as it is.  (A class rather than a
    generator-based context manager: a run enters it more than once, and a
    generator's set-up cost several microseconds each time.)"""

    __slots__ = ()

    def __enter__(self) -> None:
        global _runs, _found, _set
        with _lock:
            if _runs == 0:
                _found = _set = gc.get_threshold()
                if 0 < _found[0] < RUN_THRESHOLD:
                    gc.set_threshold(RUN_THRESHOLD, *_found[1:])
                    _set = gc.get_threshold()
            _runs += 1

    def __exit__(self, *exc_info: object) -> None:
        global _runs
        with _lock:
            _runs -= 1
            if _runs == 0 and gc.get_threshold() == _set != _found:
                gc.set_threshold(*_found)
