"""Durable runs survive SIGKILL at any point (docs/durable.md, issue 15 point 6).

A plan of 33 calls with slow-ish tools (pure, idempotent and plain ones, sync and
async) runs in a forked child process that kills itself with SIGKILL at a chosen
point: before or after the effect of the Nth tool invocation, or before the Nth SQL
statement of the journal (so also inside a transaction, before its COMMIT, and while
the run is being created).  The parent then resumes the run from the journal and
checks, for every kill point:

* the final state equals the state of an uninterrupted run;
* no call of a non-idempotent tool ran twice (the tools append one line per
  invocation to a file opened with ``O_APPEND``), and no call that had committed
  ran again at all;
* each call in flight at the crash (an intent and no outcome in the journal) is
  reported ``unknown`` when its tool has side effects, and is run again when it is
  pure or idempotent; a person's resolution (from the effect log) then finishes the
  run.

A few cases kill the resume itself too, and one runs the child as a fresh
interpreter (``subprocess``) instead of a fork.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk import Resolution
from obelisk.interpreter.runtime.durable.journal import Journal

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

HERE = Path(__file__).resolve()
SETTINGS: dict[str, Any] = {"effects": None, "kill": None}
_count = {"tools": 0}
_lock = threading.Lock()


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(10)  # never reached


def _effect(tool: str, n: int) -> None:
    """One invocation: maybe die before the effect, write it, maybe die after it."""
    kill = SETTINGS["kill"]
    with _lock:
        _count["tools"] += 1
        count = _count["tools"]
    if kill == ("tool-before", count):
        _die()
    if SETTINGS["effects"] is not None:
        fd = os.open(SETTINGS["effects"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{tool} {n}\n".encode())
        finally:
            os.close(fd)
    if kill == ("tool-after", count):
        _die()


@obelisk.tool(pure=True)
async def fetch(n: int) -> str:
    """Read something (no side effects)."""
    await asyncio.sleep(0.003)
    return f"f{n}"


@obelisk.tool(idempotent=True)
def reserve(n: int, x: str) -> str:
    """Reserve an item (doing it twice is doing it once)."""
    _effect("reserve", n)
    time.sleep(0.004)
    return f"r{n}:{x}"


@obelisk.tool
def charge(n: int, x: str) -> str:
    """Charge a card (a side effect that must not happen twice)."""
    _effect("charge", n)
    time.sleep(0.005)
    return f"c{n}:{x}"


@obelisk.tool
async def notify(n: int, xs: list[str]) -> str:
    """Send a message (a side effect)."""
    _effect("notify", n)
    await asyncio.sleep(0.004)
    return f"n{n}:{len(xs)}"


@obelisk.tool(pure=True)
def total(n: int, parts: list[str]) -> str:
    """Sum up."""
    return "+".join(parts)


TOOLS = [fetch, reserve, charge, notify, total]
OUTPUT = {
    "charge": lambda a: f"c{a['n']}:{a['x']}",
    "notify": lambda a: f"n{a['n']}:{len(a['xs'])}",
}


def plan() -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for i in range(8):
        calls.append({"_tool": "fetch", "n": i, "_outputPath": f"†state.f{i}"})
    for i in range(8, 16):
        calls.append(
            {"_tool": "reserve", "n": i, "x": f"†state.f{i - 8}", "_outputPath": f"†state.r{i}"}
        )
    for i in range(16, 28):
        source = 8 + (i - 16) % 8
        calls.append(
            {"_tool": "charge", "n": i, "x": f"†state.r{source}", "_outputPath": f"†state.c{i}"}
        )
    for i in range(28, 32):
        parts = [f"†state.c{16 + 3 * (i - 28) + k}" for k in range(3)]
        calls.append({"_tool": "notify", "n": i, "xs": parts, "_outputPath": f"†state.n{i}"})
    calls.append(
        {"_tool": "total", "n": 32, "parts": [f"†state.n{i}" for i in range(28, 32)],
         "_outputPath": "†state.total"}
    )  # fmt: skip
    return calls


PLAN = plan()
REFERENCE = obelisk.run_sync(PLAN, TOOLS).state
SIDE_EFFECTS = {"charge", "notify"}


class KillingConnection:
    """The journal's connection, dying before its Nth SQL statement."""

    def __init__(self, db: sqlite3.Connection, at: int) -> None:
        self._db, self._at, self._n = db, at, 0

    def _tick(self) -> None:
        self._n += 1
        if self._n == self._at:
            _die()

    def execute(self, *args: Any) -> Any:
        self._tick()
        return self._db.execute(*args)

    def executemany(self, *args: Any) -> Any:
        self._tick()
        return self._db.executemany(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def _child(db: Path, effects: Path, kill: tuple[str, int], resume: bool) -> None:
    """In the forked process: run (or resume) the plan, dying at ``kill``."""
    code = 0
    try:
        SETTINGS["effects"], SETTINGS["kill"] = str(effects), kill
        _count["tools"] = 0
        book = Journal(db)
        if kill[0] == "sql":
            # the SQLite connection under the journal's backend (durable/backend.py)
            book.db.connection = KillingConnection(book.db.connection, kill[1])  # type: ignore[attr-defined]
        if resume:
            obelisk.resume_sync("crash", tools=TOOLS, journal=book)
        else:
            obelisk.run_sync(PLAN, TOOLS, journal=book, run_id="crash", concurrency=4)
    except BaseException:  # any error is a test failure: the parent sees the exit code
        import traceback

        traceback.print_exc()
        code = 3
    finally:
        os._exit(code)


def _in_child(db: Path, effects: Path, kill: tuple[str, int], resume: bool = False) -> int:
    """Fork, run in the child, return how it ended: -9 killed, 0 done, else failed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        _child(db, effects, kill, resume)
    status = _wait(pid)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _wait(pid: int, limit: float = 120.0) -> int:
    """The child's wait status; a child still running after ``limit`` seconds (a
    deadlock inherited through fork) is killed and fails the test instead of
    hanging the suite."""
    deadline = time.monotonic() + limit
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the child process was still running after {limit:g} s")
        time.sleep(0.005)


def _effects(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _in_flight(db: Path) -> tuple[set[int], set[int]]:
    """``(calls with an intent and no outcome, calls with an outcome)``."""
    if not db.exists():
        return set(), set()
    try:
        with Journal(db) as book:
            progress = book.progress("crash")
    except obelisk.JournalError:
        return set(), set()
    return set(progress.intents) - set(progress.outcomes), set(progress.outcomes)


def _resumes(db: Path) -> list[Any]:
    """What each ``run_resumed`` event of the run says, in order."""
    with Journal(db) as book:
        rows = book.db.execute(
            "SELECT data FROM events WHERE run_id = 'crash' AND event = 'run_resumed' ORDER BY n"
        ).fetchall()
    return [json.loads(row[0]) for row in rows]


def _finish(db: Path, effects: Path) -> obelisk.RunResult:
    """Resume after the crash and check everything the module docstring promises."""
    flying, settled = _in_flight(db)
    earlier = len(_resumes(db)) if flying or settled else 0
    before = _effects(effects)
    settled_effects = {line for line in before if int(line.split()[1]) in settled}
    try:
        first = obelisk.resume_sync("crash", tools=TOOLS, journal=db)
    except obelisk.JournalError as exc:
        # killed before the run was recorded: nothing may have run with side effects
        assert "no run 'crash'" in str(exc), exc
        assert not [line for line in before if line.split()[0] in SIDE_EFFECTS]
        return obelisk.run_sync(PLAN, TOOLS, journal=db, run_id="crash")
    unknown = {call.call for call in first.unknown}
    tools_of = {i: PLAN[i]["_tool"] for i in range(len(PLAN))}
    assert unknown == {i for i in flying if tools_of[i] in SIDE_EFFECTS}
    result = first
    if first.status == "unknown":
        lines = set(_effects(effects))
        resolutions = {}
        for call in first.unknown:
            if f"{call.tool} {call.arguments['n']}" in lines:  # its effect happened
                resolutions[call.call] = Resolution.succeeded(OUTPUT[call.tool](call.arguments))
            else:
                resolutions[call.call] = Resolution.retry()
        result = obelisk.resume_sync("crash", tools=TOOLS, journal=db, unknown=resolutions)
    rerun = _resumes(db)[earlier]["rerun"]  # what this resume ran again
    assert set(rerun) == {i for i in flying if tools_of[i] not in SIDE_EFFECTS}
    after = _effects(effects)
    counts: dict[str, int] = {}
    for line in after:
        counts[line] = counts.get(line, 0) + 1
    for line, count in counts.items():
        if line.split()[0] in SIDE_EFFECTS:
            assert count == 1, f"{line} ran {count} times"
    for line in settled_effects:  # committed before the crash: never run again
        assert counts[line] == before.count(line)
    return result


def _cases() -> list[tuple[str, int]]:
    tools = [1, 3, 6, 8, 9, 12, 15, 17, 21, 24]  # 24 invocations have effects
    sql = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 22, 25, 28, 32, 35, 40, 45, 50,
           55, 60, 65, 75, 90, 105, 120]  # fmt: skip
    return (
        [("tool-before", n) for n in tools]
        + [("tool-after", n) for n in tools]
        + [("sql", n) for n in sql]
    )


@pytest.mark.parametrize("kill", _cases(), ids=lambda k: f"{k[0]}-{k[1]}")
def test_a_killed_run_resumes_to_the_state_of_an_uninterrupted_one(
    kill: tuple[str, int], tmp_path: Path
) -> None:
    db, effects = tmp_path / "runs.db", tmp_path / "effects.log"
    ended = _in_child(db, effects, kill)
    assert ended == -signal.SIGKILL, f"the child was not killed (exit {ended})"
    result = _finish(db, effects)
    assert result.status == "completed", result
    assert result.state == REFERENCE


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("tool-after", 9), ("tool-after", 3)),
        (("sql", 30), ("sql", 12)),
        (("tool-before", 20), ("sql", 9)),
    ],
    ids=str,
)
def test_a_resume_killed_in_turn_resumes_too(
    first: tuple[str, int], second: tuple[str, int], tmp_path: Path
) -> None:
    db, effects = tmp_path / "runs.db", tmp_path / "effects.log"
    assert _in_child(db, effects, first) == -signal.SIGKILL
    # the resumed child may stop at once, before the kill point: a call is unknown
    assert _in_child(db, effects, second, resume=True) in (-signal.SIGKILL, 0)
    result = _finish(db, effects)
    assert result.status == "completed" and result.state == REFERENCE


def test_a_fresh_interpreter_killed_mid_run(tmp_path: Path) -> None:
    """The same with a real subprocess: it kills itself after the 12th tool effect."""
    db, effects = tmp_path / "runs.db", tmp_path / "effects.log"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(HERE.parent)!r})
        import test_crash_resume as t
        import obelisk
        t.SETTINGS["effects"], t.SETTINGS["kill"] = {str(effects)!r}, ("tool-after", 12)
        t._count["tools"] = 0
        obelisk.run_sync(t.PLAN, t.TOOLS, journal={str(db)!r}, run_id="crash", concurrency=4)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    result = _finish(db, effects)
    assert result.status == "completed" and result.state == REFERENCE


def test_there_are_at_least_50_kill_points_and_30_calls() -> None:
    assert len(_cases()) >= 50 and len(PLAN) >= 30


def _damage(data: bytes, how: str) -> bytes:
    page = 4096
    if how == "truncated-half":
        return data[: len(data) // 2]
    if how == "truncated-page":
        return data[: len(data) - page]
    if how == "truncated-odd":
        return data[: len(data) - 1000]
    if how == "header":
        return b"not an obelisk journal!" + data[23:]
    if how == "zeroed-page":
        return data[:page] + bytes(page) + data[2 * page :]
    middle = len(data) // 2 // page * page  # "scrambled": a page of noise in the middle
    return data[:middle] + bytes(range(256)) * (page // 256) + data[middle + page :]


@pytest.mark.parametrize(
    "how",
    ["truncated-half", "truncated-page", "truncated-odd", "header", "zeroed-page", "scrambled"],
)
def test_a_damaged_journal_is_refused_never_resumed_from(how: str, tmp_path: Path) -> None:
    db, effects = tmp_path / "runs.db", tmp_path / "effects.log"
    assert _in_child(db, effects, ("tool-after", 12)) == -signal.SIGKILL
    Journal(db).close()  # the last connection folds the write-ahead log into the file
    assert not Path(f"{db}-wal").exists()
    db.write_bytes(_damage(db.read_bytes(), how))
    before = _effects(effects)
    with pytest.raises(obelisk.JournalCorrupted) as caught:
        obelisk.resume_sync("crash", tools=TOOLS, journal=db)
    message = str(caught.value)
    assert any(word in message for word in ("damaged", "not JSON", "not an obelisk")), message
    assert _effects(effects) == before  # nothing ran
