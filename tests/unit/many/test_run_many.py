"""``obelisk.run_many`` with the local executor (docs/scale.md, "Many runs"): results in
the inputs' order, a run that fails or raises never stops the others, at most
``concurrency`` runs at once, and with ``journal=`` a batch run again runs nothing that
finished."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import obelisk

PLAN = [
    {"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"},
    {"_tool": "double", "n": "†state.twice", "_outputPath": "†state.four"},
]


def make_tools(seen: list[int] | None = None) -> list[obelisk.Tool]:
    @obelisk.tool
    def double(n: int) -> int:
        "Twice n; 3 fails."
        if seen is not None:
            seen.append(n)
        if n == 3:
            raise ValueError("no threes")
        return 2 * n

    return [double]


def test_results_come_in_input_order_and_a_failure_stops_nothing() -> None:
    inputs = [{"n": n} for n in range(6)] + [{"n": "x"}]
    results = obelisk.run_many_sync(inputs, make_tools(), plan=PLAN, concurrency=3)
    assert [r.index for r in results] == list(range(7))
    assert [r.status for r in results] == ["completed"] * 3 + ["failed"] + ["completed"] * 2 + [
        "failed"
    ]
    assert results[5].state == {"twice": 10, "four": 20}
    assert results[3].errors == ({"call": 0, "tool": "double", "error": "ValueError: no threes"},)
    assert results[3].calls == {"failed": 1, "skipped": 1}
    assert all(r.run_id is None and r.error is None for r in results)


def test_many_plans_and_a_plan_that_raises_is_an_error_result() -> None:
    good = [{"_tool": "double", "n": 4, "_outputPath": "†state.x"}]
    bad = [{"_tool": "nope", "n": 4}]
    results = obelisk.run_many_sync([good, bad, good], make_tools())
    assert [r.status for r in results] == ["completed", "error", "completed"]
    assert results[1].error is not None and results[1].error.startswith("PlanError: ")
    assert results[1].state is None
    assert results[2].to_dict()["state"] == {"x": 8}


def test_at_most_concurrency_runs_at_once_and_on_result_sees_each() -> None:
    going, most = [0], [0]

    @obelisk.tool
    async def slow(n: int) -> int:
        "Waits a little."
        going[0] += 1
        most[0] = max(most[0], going[0])
        await asyncio.sleep(0.01)
        going[0] -= 1
        return n

    plan = [{"_tool": "slow", "n": "†input", "_outputPath": "†state.n"}]
    seen: list[int] = []
    results = obelisk.run_many_sync(
        list(range(12)), [slow], plan=plan, concurrency=4, on_result=lambda r: seen.append(r.index)
    )
    assert most[0] == 4
    assert sorted(seen) == list(range(12))
    assert [r.state for r in results] == [{"n": n} for n in range(12)]


def test_bad_concurrency_is_a_usage_error() -> None:
    with pytest.raises(obelisk.UsageError, match="concurrency must be a count >= 1"):
        obelisk.run_many_sync([{}], make_tools(), plan=PLAN, concurrency=0)


def test_a_journaled_batch_run_again_runs_nothing_that_finished(tmp_path: Path) -> None:
    seen: list[int] = []
    tools = make_tools(seen)
    inputs = [{"n": n} for n in range(5)]
    journal = tmp_path / "runs.db"
    first = obelisk.run_many_sync(inputs, tools, plan=PLAN, journal=journal, batch="b")
    assert [r.run_id for r in first] == [f"b-{i}" for i in range(5)]
    assert len(seen) == 9  # two calls each, but the failed one's second is skipped
    again = obelisk.run_many_sync(inputs, tools, plan=PLAN, journal=journal, batch="b")
    assert len(seen) == 9, "a finished run ran again"
    assert [r.resumed for r in again] == ["journal"] * 5
    strip = ("resumed",)
    assert [_without(r.to_dict(), strip) for r in again] == [
        _without(r.to_dict(), strip) for r in first
    ]


def test_a_cut_off_run_is_resumed_and_only_its_rest_runs(tmp_path: Path) -> None:
    seen: list[int] = []
    tools = make_tools(seen)
    journal = str(tmp_path / "runs.db")
    # run 0 of batch "c" finished; run 1 was interrupted after its first call
    stop_after_first = {"calls": 0}

    @obelisk.tool(idempotent=True)
    def double(n: int) -> int:
        "Twice n; stops the process after the first call of input 5."
        seen.append(n)
        if n == 10 and stop_after_first["calls"] == 0:
            stop_after_first["calls"] += 1
            raise KeyboardInterrupt
        return 2 * n

    inputs = [{"n": 1}, {"n": 5}]
    obelisk.run_many_sync(inputs[:1], [double], plan=PLAN, journal=journal, batch="c")
    with pytest.raises(KeyboardInterrupt):
        obelisk.run_sync(PLAN, [double], input=inputs[1], journal=journal, run_id="c-1")
    seen.clear()
    results = obelisk.run_many_sync(inputs, [double], plan=PLAN, journal=journal, batch="c")
    assert [(r.status, r.resumed) for r in results] == [
        ("completed", "journal"),
        ("completed", "resumed"),
    ]
    assert results[1].state == {"twice": 10, "four": 20}
    assert seen == [10], "only the call cut off ran again"
    del tools


def _without(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


def test_a_batch_run_again_resumes_the_runs_whose_approvals_were_decided(tmp_path: Path) -> None:
    @obelisk.tool(requires_approval=lambda arguments: arguments["n"] > 2)
    def pay(n: int) -> int:
        "Pays n; more than 2 needs a person's approval."
        return n

    plan = [{"_tool": "pay", "n": "†input.n", "_outputPath": "†state.paid"}]
    journal = str(tmp_path / "runs.db")
    inputs = [{"n": 1}, {"n": 5}]
    first = obelisk.run_many_sync(inputs, [pay], plan=plan, journal=journal, batch="p")
    assert [r.status for r in first] == ["completed", "awaiting_approval"]
    waiting = obelisk.run_many_sync(inputs, [pay], plan=plan, journal=journal, batch="p")
    assert [r.status for r in waiting] == ["completed", "awaiting_approval"]
    with obelisk.Journal(journal) as book:
        ((run_id, approval),) = book.pending()
        book.decide(approval.id, True, run_id=run_id)
    done = obelisk.run_many_sync(inputs, [pay], plan=plan, journal=journal, batch="p")
    assert [(r.status, r.resumed) for r in done] == [
        ("completed", "journal"),
        ("completed", "resumed"),
    ]
    assert done[1].state == {"paid": 5}
