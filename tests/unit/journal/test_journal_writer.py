"""The journal writer (docs/durable.md): a write log entry that keeps its value as
JSON text is journaled from that text, byte for byte what its decoded value gives,
without decoding it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_json

from obelisk.interpreter.runtime import write_log
from obelisk.interpreter.runtime.durable.data import dump
from obelisk.interpreter.runtime.durable.store import Store
from obelisk.interpreter.runtime.durable.writer import RunWriter
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.write_log import WriteEntry


def _nested(depth: int) -> Any:
    value: Any = {"bottom": [1.5, "é"]}
    for _ in range(depth):
        value = [value]
    return value


VALUES = [
    {
        "text": 'é ☃ 𝄞 \u2028 \x00 \n " \\ </script>',
        "numbers": [0, -1, 10**30, -(10**25), 0.1, 1e-7, 1.5e300, -0.0, 2.5],
        "flags": [True, False, None],
        "empty": [{}, [], ""],
        "keys": {"": 1, "ü": 2, "a b": 3},
    },
    ["a", 1, [2, [3, {"x": None}]]],
    "just text",
    _nested(230),  # deeper than pydantic-core decodes: the stdlib decodes it
]


def _journaled(path: Path, entry: WriteEntry) -> list[tuple[Any, ...]]:
    with Store(path) as store:
        writer = RunWriter(store, "r")
        writer.committed(CallRecord(0, None, "fetch", status="succeeded"), [entry])
        writer.close()
        return store.db.execute("SELECT * FROM writes").fetchall()


@pytest.mark.parametrize("value", VALUES, ids=["object", "list", "string", "deep"])
def test_an_entry_kept_as_json_is_journaled_as_a_decoded_one_without_decoding(
    tmp_path: Path, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded = WriteEntry(0, 0, None, "†state.v", "set", value, 1.0)
    decoded_rows = _journaled(tmp_path / "decoded.db", decoded)

    lazy = WriteEntry(0, 0, None, "†state.v", "set", time=1.0, json=to_json(value))

    def refuse(*args: Any) -> Any:
        raise AssertionError("the entry was decoded")

    with monkeypatch.context() as patch:
        patch.setattr(write_log, "from_json", refuse)
        patch.setattr(write_log.json, "loads", refuse)
        lazy_rows = _journaled(tmp_path / "lazy.db", lazy)

    assert lazy_rows == decoded_rows
    assert decoded_rows[0][7] == dump(value)
    assert lazy.value == value  # decoded now, and the same text journaled again
    assert _journaled(tmp_path / "read.db", lazy) == decoded_rows


def test_json_is_the_text_an_entry_was_made_with() -> None:
    text = to_json({"a": [1, 2]})
    lazy = WriteEntry(0, 0, None, "†state.v", "set", time=1.0, json=text)
    assert lazy.json is text
    assert lazy.value == {"a": [1, 2]}
    assert lazy.json is text  # still kept once decoded
    assert WriteEntry(0, 0, None, "†state.v", "set", {"a": [1, 2]}, 1.0).json is None
