"""A plan cannot poison its journal (docs/durable.md, "When the journal itself fails"):
whatever a run could produce it journals and reads back, or it refuses the value when
the call settles; a damaged byte is :class:`JournalCorrupted`, never a foreign error;
a full disk stops the run with one :class:`JournalError` and nothing else printed."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.errors import JournalCorrupted, JournalError, ObeliskError
from obelisk.interpreter.runtime.durable import store as journal_store


@obelisk.tool
def multiply(a: int, b: int) -> int:
    return a * b


@obelisk.tool
def nested(n: int) -> dict[str, Any]:
    return {"items": [1, {"big": 10**n}]}


@obelisk.tool(requires_approval=True)
def confirm(value: int) -> str:
    return "confirmed"


# -- integers Python cannot read back from JSON text ---------------------------------------


def test_an_integer_too_long_to_read_back_is_refused_when_the_call_settles(tmp_path: Path) -> None:
    plan = [
        {"_tool": "multiply", "a": 1, "b": 2, "_outputPath": "†state.small"},
        {"_tool": "multiply", "a": "†input.a", "b": 10, "_outputPath": "†state.big"},
        {"_tool": "nested", "n": 4300, "_outputPath": "†state.deep"},
    ]
    journal = tmp_path / "runs.db"
    # 10**4299 as input is text of 4,300 digits: readable; times 10 it has 4,301
    result = obelisk.run_sync(
        plan, [multiply, nested], {"a": 10**4299}, journal=str(journal), run_id="r"
    )
    assert [c.status for c in result.calls] == ["succeeded", "failed", "failed"]
    assert result.calls[1].error is not None
    assert result.calls[1].error["message"] == (
        "the output of multiply is not JSON data that can be read back: an integer of "
        "4,301 digits (Python reads integers of at most 4,300 digits from JSON text: "
        "sys.get_int_max_str_digits())"
    )
    assert result.calls[2].error is not None
    assert "an integer of 4,301 digits at items[1].big" in result.calls[2].error["message"]
    assert result.state == {"small": 2}
    # the journal reads back: the run shows, and its state is what the run had
    with obelisk.Journal(str(journal)) as book:
        assert book.describe("r")["status"] == "failed"


def test_the_longest_integer_python_reads_is_journaled_and_read_back(tmp_path: Path) -> None:
    plan = [
        {"_tool": "multiply", "a": "†input.a", "b": 9, "_outputPath": "†state.big"},
        {"_tool": "confirm", "value": "†state.big", "_outputPath": "†state.ok"},
    ]
    journal = str(tmp_path / "runs.db")
    tools = [multiply, confirm]
    a = int("1" * 4299)  # times 9: 4,300 nines
    paused = obelisk.run_sync(plan, tools, {"a": a}, journal=journal, run_id="p")
    assert paused.status == "awaiting_approval"
    # a new process would do this: everything comes back from the journal's text
    pending = paused.pending[0]
    done = obelisk.resume_sync(
        "p", tools=tools, journal=journal, decisions={pending.id: obelisk.Decision.accept()}
    )
    assert done.status == "completed"
    assert done.state["big"] == a * 9
    assert done.state["ok"] == "confirmed"


# -- one bad byte ------------------------------------------------------------------------------


def _journal_with_one_run(path: Path) -> bytes:
    plan = [
        {"_tool": "multiply", "a": 6, "b": 7, "_outputPath": "†state.answer"},
        {"_tool": "confirm", "value": "†state.answer", "_outputPath": "†state.ok"},
    ]
    paused = obelisk.run_sync(plan, [multiply, confirm], journal=str(path), run_id="run-1")
    assert paused.status == "awaiting_approval"
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return path.read_bytes()


def _reads(path: Path) -> None:
    """Everything a person or a resume reads of the journal."""
    with obelisk.Journal(str(path)) as book:
        for run in book.runs():
            book.describe(run["run_id"])
        book.pending()
    obelisk.resume_sync("run-1", tools=[multiply, confirm], journal=str(path))


def test_a_bad_byte_anywhere_in_the_text_is_journal_corrupted_never_a_foreign_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    good = _journal_with_one_run(path)
    texty = [i for i, byte in enumerate(good) if 0x61 <= byte <= 0x7A or byte in b'{}[]":,']
    random.Random(7).shuffle(texty)
    outcomes: dict[str, int] = {}
    for position in texty[:120]:
        damaged = bytearray(good)
        damaged[position] = 0xFF  # never valid in UTF-8
        for leftover in (tmp_path / "runs.db-wal", tmp_path / "runs.db-shm"):
            leftover.unlink(missing_ok=True)
        path.write_bytes(bytes(damaged))
        try:
            _reads(path)
        except ObeliskError as exc:
            outcomes[type(exc).__name__] = outcomes.get(type(exc).__name__, 0) + 1
        except Exception as exc:  # the regression: a raw UnicodeDecodeError
            pytest.fail(f"byte {position}: {type(exc).__name__}: {exc}")
    assert outcomes.get("JournalCorrupted", 0) > 0


def test_a_text_column_that_is_not_utf8_is_journal_corrupted(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _journal_with_one_run(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE intents SET arguments = CAST(X'7B2278223AFF7D' AS TEXT)")
    db.commit()
    db.close()
    with pytest.raises(JournalCorrupted, match="is damaged: Could not decode to UTF-8"):
        obelisk.resume_sync("run-1", tools=[multiply, confirm], journal=str(path))


# -- a full disk -------------------------------------------------------------------------------


@obelisk.tool
async def blob(i: int) -> str:
    await asyncio.sleep(0)
    return "x" * 2000


@pytest.fixture()
def small_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every journal opened gets room for 40 pages: SQLite then answers SQLITE_FULL,
    "database or disk is full", as it does when the disk is."""
    prepare = journal_store.Store._prepare

    def prepare_on_a_small_disk(self: journal_store.Store, new: bool) -> None:
        prepare(self, new)
        self.db.execute("PRAGMA max_page_count = 40")

    monkeypatch.setattr(journal_store.Store, "_prepare", prepare_on_a_small_disk)


BLOBS = [{"_tool": "blob", "i": i, "_outputPath": f"†state.b{i}"} for i in range(200)]


def test_a_full_disk_stops_the_run_with_one_journal_error_and_nothing_on_stderr(
    tmp_path: Path, small_disk: None, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = str(tmp_path / "runs.db")
    with pytest.raises(JournalError, match="database or disk is full"):
        obelisk.run_sync(BLOBS, [blob], journal=journal, run_id="full")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ""  # no "Exception in callback" from a deferred commit


def test_a_full_disk_runs_no_tool_without_a_durable_intent(
    tmp_path: Path, small_disk: None
) -> None:
    journal = str(tmp_path / "runs.db")
    ran: list[int] = []

    @obelisk.tool
    async def counted(i: int) -> str:
        ran.append(i)
        await asyncio.sleep(0)
        return "x" * 2000

    plan = [{"_tool": "counted", "i": i, "_outputPath": f"†state.b{i}"} for i in range(200)]
    with pytest.raises(JournalError):
        obelisk.run_sync(plan, [counted], journal=journal, run_id="full")
    assert 0 < len(ran) < 200
    db = sqlite3.connect(journal)
    intents = {row[0] for row in db.execute("SELECT call FROM intents WHERE run_id = 'full'")}
    db.close()
    assert set(ran) <= intents


def test_obelisk_run_json_on_a_full_disk_prints_one_json_document(
    tmp_path: Path, small_disk: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "blob_tools.py").write_text(
        "import asyncio\nfrom obelisk import tool\n\n@tool\nasync def blob(i: int) -> str:\n"
        "    await asyncio.sleep(0)\n    return 'x' * 2000\n"
    )
    (tmp_path / "plan.json").write_text(json.dumps(BLOBS))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(
        app,
        ["run", "plan.json", "--tools", "blob_tools.py", "--journal", "runs.db", "--json"],
    )
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert document["status"] == "error"
    assert document["error"]["code"] == "journal"
    assert "database or disk is full" in document["error"]["message"]
    assert "Traceback" not in result.stderr
    assert "Exception in callback" not in result.stderr
    sys.modules.pop("blob_tools", None)
