"""Python's cyclic garbage collector while a plan is parsed, checked or set up to run
(docs/semantics.md, "The garbage collector").

Parsing, checking and setting up a plan allocate many small objects (about 17
tracked objects per call) and no reference cycles, and most of them live as long
as the plan.  :func:`gc_paused` pauses the collector for such a stage.  Python
still counts the allocations while it is paused, so the first allocation after it
resumes would start a young collection that walks every object the stage made,
and later collections would walk them again in the middle generation and in the
oldest: three walks of objects that are not garbage.  On a 100,000-call plan each
walk took over a second, together about 40% of the run
(``benchmarks/run_overhead.py``, the collector's time read with ``gc.callbacks``).

So a stage that allocated at least :data:`PROMOTE_AT` tracked objects ends by
moving every tracked object to the oldest generation without a walk
(``gc.freeze()`` then ``gc.unfreeze()``, which also resets the young count): the
next full collection is the first to walk them, as for any other long-lived
object.  Two things are left as they are: a collector that was off (``gc.disable()``)
and a program that froze objects itself, whose frozen objects must stay frozen
(``gc.unfreeze()`` would thaw them).  That is told by the number of frozen objects:
more than when this module was imported, or 1,000 or more then.  The interpreter may
freeze a few of its own (Python 3.12 keeps a few hundred immortal tuples frozen);
those are thawed with the rest and stay in the oldest generation, as
``gc.unfreeze()`` would leave them.  Cyclic garbage that the program left young
when such a stage ends moves to the oldest generation too, and is freed by the next
full collection instead of the next young one.
"""

from __future__ import annotations

import gc

__all__ = ["PROMOTE_AT", "gc_paused"]

PROMOTE_AT = 10_000
"""The young count (tracked objects allocated since the last collection, net of
those freed) from which a paused stage ends by moving every tracked object to the
oldest generation."""

_FROZEN_AT_IMPORT = gc.get_freeze_count()
_MAY_THAW = _FROZEN_AT_IMPORT if _FROZEN_AT_IMPORT < 1_000 else -1
"""The most frozen objects a big stage may thaw: the interpreter's own, counted when
this module was imported; -1 (never) when a program had frozen its objects by then."""


class gc_paused:  # used as a function: ``with gc_paused():``
    """Pause the cyclic garbage collector for the block; on exit it resumes in its
    previous state, having first moved every tracked object to the oldest
    generation when the block allocated at least :data:`PROMOTE_AT` of them and the
    program froze no objects itself (see the module's docstring).  Reference
    counting frees everything that is not in a cycle, as always.  Blocks may nest:
    the outermost one resumes the collector.  (A class rather than a generator-based
    context manager, which cost several microseconds more per block.)"""

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._was_enabled:
            if gc.get_count()[0] >= PROMOTE_AT and gc.get_freeze_count() <= _MAY_THAW:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
