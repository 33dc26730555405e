"""How big a plan, its values and its report may grow: one :class:`Limits` object.

A bottom layer (it imports only :mod:`obelisk.errors`).  Every limit has a safe
default; pass ``obelisk.Limits(...)`` to :func:`obelisk.check` or
:func:`obelisk.parse_plan` to change one.  What a plan exceeds at check time is a
``limit`` diagnostic with the call, the argument path and a caret (docs/limits.md).
"""

from __future__ import annotations

import sys
from contextvars import ContextVar
from dataclasses import dataclass, fields

from obelisk.errors import UsageError
from obelisk.json_values import preview

__all__ = [
    "DEFAULT_LIMITS",
    "Limits",
    "active_limits",
    "int_digits_limit",
    "limits_in_effect",
]


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits obelisk enforces (docs/limits.md).  Every field is a positive integer.

    Checked when a plan is parsed and checked (a ``limit`` diagnostic, located):

    * ``max_path_depth`` (segments, default 64): how many segments one reference
      may have after its kind, in an argument or an output path; ``†state.a.b[0]``
      has 3.
    * ``max_argument_depth`` (nesting levels, default 256): how deeply an argument
      value, or a call's ``_output``, may nest arrays and objects; ``[[1]]`` is 2
      levels deep.
    * ``max_diagnostics_per_code`` (diagnostics, default 100): how many diagnostics
      of one code a check reports; the rest are summed up in one more diagnostic of
      that code, ``... and N more``.

    Runtime limits, for values a run produces (enforced by the runtime, not by the
    checker):

    * ``max_output_bytes`` (bytes, default 16 MiB): the size of one tool result,
      as compact UTF-8 JSON.
    * ``max_state_bytes`` (bytes, default 1 GiB): the memory the state's values
      take, estimated from their JSON size and their arrays and objects
      (:func:`obelisk.json_values.memory_estimate`, within a factor of 2.5).
    * ``max_output_depth`` (nesting levels, default 256): how deeply one tool result
      may nest arrays and objects.

    Raises :class:`~obelisk.errors.UsageError` for a field that is not a positive
    integer.

    >>> Limits(max_path_depth=8).max_path_depth
    8
    """

    max_path_depth: int = 64
    max_argument_depth: int = 256
    max_diagnostics_per_code: int = 100
    max_output_bytes: int = 16 * 1024 * 1024
    max_state_bytes: int = 1024 * 1024 * 1024
    max_output_depth: int = 256

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if type(value) is not int or value < 1:
                raise UsageError(
                    f"Limits.{item.name} must be a positive integer, got {preview(value)}"
                )


DEFAULT_LIMITS = Limits()
"""The limits used when none are given."""


_ACTIVE: ContextVar[Limits | None] = ContextVar("obelisk_limits", default=None)


def active_limits() -> Limits:
    """The :class:`Limits` of the run the caller is part of (a tool that a run calls,
    in the event loop or in its worker thread), else :data:`DEFAULT_LIMITS`.  The
    standard tools read ``max_output_bytes`` here to refuse a result before they
    build it (docs/limits.md, "Work that cannot blow up")."""
    return _ACTIVE.get() or DEFAULT_LIMITS


class limits_in_effect:  # used as a function: ``with limits_in_effect(limits):``
    """Within the block, :func:`active_limits` returns ``limits`` (``None``: the
    defaults) in this context and the tasks and worker threads it starts; a run
    does it while it runs.  (A class: cheaper to enter than a generator.)"""

    __slots__ = ("_limits", "_token")

    def __init__(self, limits: Limits | None) -> None:
        self._limits = limits

    def __enter__(self) -> None:
        self._token = _ACTIVE.set(self._limits)

    def __exit__(self, *exc_info: object) -> None:
        _ACTIVE.reset(self._token)


def int_digits_limit() -> int:
    """How many decimal digits Python converts between ``int`` and ``str``
    (``sys.get_int_max_str_digits()``, 4300 by default); 0 means no limit."""
    getter = getattr(sys, "get_int_max_str_digits", None)
    return int(getter()) if getter is not None else 0
