"""The write log's entries (docs/semantics.md, "The write log").

:class:`WriteEntry` is one write, as the log keeps it;
:class:`~obelisk.interpreter.runtime.state.State` appends one per write.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pydantic_core import from_json

from obelisk.interpreter.plan.model import OutputMethod

__all__ = ["WriteEntry"]

_UNDECODED: Any = object()
_FIELDS = ("seq", "call", "instance", "path", "method", "value", "time")


class WriteEntry:
    """One entry of the write log.

    ``seq`` counts from 0 in commit order; ``call`` is the call index (``None`` for
    writes made outside a plan); ``path`` the reference text written, e.g.
    ``"†state.receipt"``; ``method`` the output method; ``value`` the value written
    (JSON data, never shared with the state); ``time`` seconds since the epoch.

    An entry made from a tool's result keeps it as compact JSON text (``json``,
    UTF-8 bytes) and decodes ``value`` when it is first read, then keeps that
    object: a run whose log is not read holds one compact copy of each result
    instead of a second tree of Python objects (docs/semantics.md, "Values are
    JSON data").  Entries are immutable and compare equal when every field does.
    """

    __slots__ = ("_json", "_value", "call", "instance", "method", "path", "seq", "time")

    seq: int
    call: int | None
    instance: str | None
    path: str
    method: OutputMethod
    time: float
    _value: Any
    _json: bytes | None

    def __init__(
        self,
        seq: int,
        call: int | None,
        instance: str | None,
        path: str,
        method: OutputMethod,
        value: Any = _UNDECODED,
        time: float = 0.0,
        *,
        json: bytes | None = None,
    ) -> None:
        if (value is _UNDECODED) == (json is None):
            raise TypeError("WriteEntry takes either a value or its JSON text, and not both")
        _set_seq(self, seq)
        _set_call(self, call)
        _set_instance(self, instance)
        _set_path(self, path)
        _set_method(self, method)
        _set_value(self, value)
        _set_time(self, time)
        _set_json(self, json)

    @property
    def value(self) -> Any:
        """The value written (decoded from its JSON text on first read)."""
        value = self._value
        if value is _UNDECODED:
            assert self._json is not None
            try:
                value = from_json(self._json)
            except ValueError:  # deeper than pydantic-core's parser goes: the stdlib does
                value = json.loads(self._json)
            object.__setattr__(self, "_value", value)
        return value

    @property
    def json(self) -> bytes | None:
        """The compact JSON text (UTF-8 bytes) the entry was made with, whether or not
        ``value`` has been decoded from it; ``None`` for an entry made from a value."""
        return self._json

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple[Any, ...]:
        return (self.seq, self.call, self.instance, self.path, self.method, self.value, self.time)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WriteEntry):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.to_dict().items())
        return f"WriteEntry({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (WriteEntry, self._fields())

    def to_dict(self) -> dict[str, Any]:
        """``{"seq", "call", "instance", "path", "method", "value", "time"}``."""
        return dict(zip(_FIELDS, self._fields(), strict=True))


# the slots' own setters (``__setattr__`` refuses): faster than ``object.__setattr__``,
# which looks each name up, and a run makes an entry per write
_set_seq, _set_call, _set_instance, _set_path, _set_method, _set_value, _set_time, _set_json = (
    vars(WriteEntry)[name].__set__
    for name in ("seq", "call", "instance", "path", "method", "_value", "time", "_json")
)
