"""Tools that run in a worker process, so that a timeout can stop them for good
(``isolation="process"``, docs/tools.md).

A thread cannot be stopped in Python; a process can.  The pool is pebble's
``ProcessPool``, whose ``submit(function, timeout, ...)`` terminates the worker that runs
past its timeout and starts a fresh one.  Workers are made by the ``forkserver``
start method where the platform has it (``spawn`` elsewhere): a clean process that
has not inherited the run's threads.  The tool's function reaches a worker as a
:class:`FunctionRef`, its module and qualified name (and the file it was loaded from),
because a function decorated with ``@obelisk.tool`` is no longer reachable by its own
name: the module holds the :class:`~obelisk.interpreter.tools.tool.Tool`.  Its
arguments and its result travel by pickle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import importlib.util
import multiprocessing
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when the first process tool runs: most runs have none
    import pebble

__all__ = ["FunctionRef", "ProcessWorkers"]


@dataclass(frozen=True, slots=True)
class FunctionRef:
    """Where a worker process finds a tool's function: ``module`` (its name),
    ``qualname`` and ``file`` (the source path, for modules loaded from a file)."""

    module: str
    qualname: str
    file: str | None

    @classmethod
    def of(cls, function: Any) -> FunctionRef:
        module = sys.modules.get(function.__module__)
        file = getattr(module, "__file__", None) if module is not None else None
        return cls(function.__module__, function.__qualname__, file)

    def resolve(self) -> Any:
        """The function, in this process (a ``Tool`` found there gives its function)."""
        module = sys.modules.get(self.module)
        if module is None:
            try:
                module = importlib.import_module(self.module)
            except ImportError:
                if self.file is None:
                    raise
                spec = importlib.util.spec_from_file_location(self.module, self.file)
                if spec is None or spec.loader is None:
                    raise
                module = sys.modules[self.module] = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
        found: Any = module
        for part in self.qualname.split("."):
            found = getattr(found, part)
        return getattr(found, "function", None) or found


def _call(reference: FunctionRef, arguments: dict[str, Any]) -> Any:
    try:
        return reference.resolve()(**arguments)
    except StopIteration as exc:  # an asyncio future refuses it: a RuntimeError instead
        raise RuntimeError("the tool raised StopIteration") from exc


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


class ProcessWorkers:
    """Up to ``size`` worker processes, started on first use and stopped by
    :meth:`close` (without waiting for calls still running)."""

    def __init__(self, size: int) -> None:
        self.size = max(1, min(size, os.cpu_count() or 1))
        self._pool: pebble.ProcessPool | None = None

    async def call(self, function: Any, arguments: dict[str, Any], timeout: float | None) -> Any:
        """``function(**arguments)`` in a worker; raises ``TimeoutError`` after
        ``timeout`` seconds of running (the worker is stopped) and ``RuntimeError``
        when the worker died (its exit code) or the function cannot be found there."""
        import pebble

        if self._pool is None:
            self._pool = pebble.ProcessPool(max_workers=self.size, context=_context())
        reference = FunctionRef.of(function)
        future = self._pool.submit(_call, timeout, reference, arguments)
        try:
            return await asyncio.wrap_future(future)
        except (concurrent.futures.TimeoutError, asyncio.TimeoutError, TimeoutError):  # 3.10: three
            raise TimeoutError(f"timed out after {timeout:g} s (its process was stopped)") from None
        except pebble.ProcessExpired as exc:
            raise RuntimeError(f"its worker process died (exit code {exc.exitcode})") from None
        except asyncio.CancelledError:
            future.cancel()  # type: ignore[no-untyped-call]  # pebble stops its worker
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.stop()  # type: ignore[no-untyped-call]
            self._pool.join(timeout=1)
            self._pool = None
