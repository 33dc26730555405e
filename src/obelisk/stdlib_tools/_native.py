"""Native work that must not be running when the interpreter exits (docs/limits.md).

A sync tool runs in a daemon worker thread, and one past its timeout (or the run's)
is left to finish on its own.  If that thread is inside C++ code that released the
GIL (RE2's matching, in ``google-re2``) when the interpreter finalizes, Python 3.10 to
3.13 end the thread as it takes the GIL back, by unwinding its C++ frames, and the
C++ runtime aborts the process (``terminate called without an active exception``,
exit code 134).  :func:`native_call` counts such work; at exit (``atexit``, which runs
before finalization) new work is refused and the work in flight is waited for, at
most :data:`EXIT_WAIT` seconds: RE2 runs in time linear in its text, so that is short.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Iterator

__all__ = ["EXIT_WAIT", "native_call"]

EXIT_WAIT = 30.0
"""Seconds the interpreter's exit waits, at most, for native work still running."""


class _InFlight:
    def __init__(self) -> None:
        self.condition = threading.Condition()
        self.running = 0
        self.exiting = False
        self.registered = False

    def enter(self) -> None:
        with self.condition:
            if self.exiting:
                raise RuntimeError("not run: the interpreter is exiting")
            self.running += 1
            if not self.registered:
                self.registered = True
                atexit.register(self.wait)

    def leave(self) -> None:
        with self.condition:
            self.running -= 1
            if not self.running:
                self.condition.notify_all()

    def wait(self) -> None:
        with self.condition:
            self.exiting = True
            self.condition.wait_for(lambda: not self.running, timeout=EXIT_WAIT)


_IN_FLIGHT = _InFlight()


@contextlib.contextmanager
def native_call() -> Iterator[None]:
    """Around native work that releases the GIL: the interpreter's exit waits for it,
    and refuses it (``RuntimeError``) once exiting."""
    _IN_FLIGHT.enter()
    try:
        yield
    finally:
        _IN_FLIGHT.leave()
