"""Durable loops (docs/durable.md): each turn's request and answer and each turn's
calls are journaled; a loop resumed by its id replays the journaled turns without
asking the model again or running a committed call again, then goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

import obelisk
from obelisk import Decision, Loop, ScriptedModel
from obelisk.errors import JournalError, LoopStopped, RunMismatch, UsageError
from obelisk.interpreter.runtime.durable.journal import Journal

RAN: list[str] = []
STOP = {"at": ""}


@obelisk.tool
def charge(n: int) -> int:
    """Charge n (a side effect: must not run twice); stops the process when told to."""
    RAN.append(f"charge {n}")
    if STOP["at"] == f"charge {n}":
        STOP["at"] = ""
        raise KeyboardInterrupt
    return n * 10


@obelisk.tool(idempotent=True)
def book_room(n: int) -> str:
    """Book a room (idempotent); stops the process when told to."""
    RAN.append(f"book {n}")
    if STOP["at"] == f"book {n}":
        STOP["at"] = ""
        raise KeyboardInterrupt
    return f"room {n}"


@obelisk.tool(requires_approval=True)
def refund(n: int) -> str:
    """Give money back (needs a person's approval)."""
    RAN.append(f"refund {n}")
    return f"refunded {n}"


TOOLS = [charge, book_room, refund]
TURN1 = {"calls": [{"_tool": "charge", "n": 1, "_outputPath": "†state.a"}], "output": None}
TURN2 = {"calls": [{"_tool": "book_room", "n": "†state.a", "_outputPath": "†state.b"}],
         "output": None}  # fmt: skip
TURN3 = {"calls": [], "output": {"a": "†state.a", "b": "†state.b"}}
DONE = {"a": 10, "b": "room 10"}


@pytest.fixture(autouse=True)
def _clean() -> None:
    RAN.clear()
    STOP["at"] = ""


def test_a_loop_stopped_by_its_model_resumes_without_asking_again(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    first = ScriptedModel([TURN1, TURN2])  # runs out at turn 3: the loop stops
    with pytest.raises(LoopStopped) as stopped:
        Loop(first, TOOLS, journal=db).run_sync({}, run_id="L1")
    assert stopped.value.result.run_id == "L1"
    assert RAN == ["charge 1", "book 10"]
    with Journal(db) as book:
        assert [turn for turn, _, _ in book.turns("L1")] == [1, 2]
        assert book.run_row("L1").status == "stopped"
        request, answer = book.turns("L1")[0][1:]
        assert request["config"]["turn"] == 1 and answer["calls"] == TURN1["calls"]
    second = ScriptedModel([TURN3])
    result = Loop(second, TOOLS, journal=db).resume_sync("L1")
    assert result.status == "completed" and result.output == DONE
    assert len(second.requests) == 1  # turns 1 and 2 came from the journal
    assert second.requests[0].config["turn"] == 3
    assert RAN == ["charge 1", "book 10"]  # no tool ran again
    assert result.state == DONE and len(result.turns) == 3
    with Journal(db) as book:
        assert book.run_row("L1").status == "completed"
    with pytest.raises(JournalError, match="is over"):
        Loop(ScriptedModel([]), TOOLS, journal=db).resume_sync("L1")


def test_a_turn_interrupted_mid_call_reruns_only_the_idempotent_call(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    STOP["at"] = "book 10"
    model = ScriptedModel([TURN1, TURN2, TURN3])
    with pytest.raises(KeyboardInterrupt):
        Loop(model, TOOLS, journal=db).run_sync({}, run_id="L2")
    assert len(model.requests) == 2
    again = ScriptedModel([TURN3])
    result = Loop(again, TOOLS, journal=db).resume_sync("L2")
    assert result.output == DONE
    assert len(again.requests) == 1
    assert RAN == ["charge 1", "book 10", "book 10"]  # book_room is idempotent: re-run


def test_a_call_with_side_effects_in_flight_is_reported_to_the_model_as_unknown(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.db"
    STOP["at"] = "charge 1"
    with pytest.raises(KeyboardInterrupt):
        Loop(ScriptedModel([TURN1]), TOOLS, journal=db).run_sync({}, run_id="L6")
    again = ScriptedModel([{"calls": [], "output": "gave up"}])
    result = Loop(again, TOOLS, journal=db).resume_sync("L6")
    assert result.output == "gave up" and RAN == ["charge 1"]  # not run again
    [request] = again.requests
    errors = [m for m in request.to_data()["context"] if m["type"] == "error"]
    assert [(e["call"], e["error"]["type"]) for e in errors] == [("#0 charge", "unknown")]
    assert "in flight when its process stopped" in errors[0]["error"]["message"]
    assert result.turns[0].run is not None and result.turns[0].run.status == "unknown"


def test_an_unusable_answer_is_journaled_and_replayed_as_one(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    bad = "this is not a solution"
    with pytest.raises(LoopStopped):
        Loop(ScriptedModel([bad, TURN1]), TOOLS, journal=db).run_sync({}, run_id="L3")
    again = ScriptedModel([TURN2, TURN3])
    result = Loop(again, TOOLS, journal=db).resume_sync("L3")
    assert result.output == DONE and len(again.requests) == 2
    assert result.turns[0].errors and result.turns[0].solution is None
    assert RAN == ["charge 1", "book 10"]


def test_a_loop_paused_on_approval_is_decided_later_and_resumed(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    ask = {"calls": [{"_tool": "refund", "n": 7, "_outputPath": "†state.r"}], "output": None}
    result = Loop(ScriptedModel([ask]), TOOLS, journal=db).run_sync({}, run_id="L4")
    assert result.status == "awaiting_approval" and RAN == []
    [pending] = result.pending
    with Journal(db) as book:  # later, in another process: a person decides
        assert [p.id for _, p in book.pending()] == [pending.id]
        book.decide(pending.id, Decision.accept())
    later = ScriptedModel([{"calls": [], "output": "†state.r"}])
    done = Loop(later, TOOLS, journal=db).resume_sync("L4")
    assert done.output == "refunded 7" and RAN == ["refund 7"]
    assert len(later.requests) == 1


def test_durable_loop_misuse_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with pytest.raises(UsageError, match="needs Loop"):
        Loop(ScriptedModel([TURN3]), TOOLS).run_sync({}, run_id="x")
    with pytest.raises(UsageError, match="by its id needs Loop"):
        Loop(ScriptedModel([]), TOOLS).resume_sync("x")
    with pytest.raises(LoopStopped):
        Loop(ScriptedModel([TURN1]), TOOLS, journal=db).run_sync({}, run_id="L5")

    @obelisk.tool
    def charge(n: int, currency: str = "EUR") -> int:  # a changed schema
        """Charge n."""
        return n

    with pytest.raises(RunMismatch, match="tool 'charge' changed its parameters"):
        Loop(ScriptedModel([]), [charge, book_room, refund], journal=db).resume_sync("L5")
    with pytest.raises(JournalError, match="no run"):
        Loop(ScriptedModel([]), TOOLS, journal=db).resume_sync("nope")
