"""Streaming dispatch (docs/loop.md): calls run while the model is still writing."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

import obelisk
from obelisk.interpreter.loop.stream import complete_calls

EVENTS: list[tuple[str, Any, float]] = []


@obelisk.tool
async def fetch(n: int) -> int:
    "Slow fetch: 60 ms."
    EVENTS.append(("start", n, time.perf_counter()))
    await asyncio.sleep(0.06)
    return n * 10


@obelisk.tool
def add(a: int, b: int) -> int:
    "a + b."
    return a + b


def _solution(calls: list[dict[str, Any]], output: Any = None) -> dict[str, Any]:
    return {"calls": calls, "output": output}


def _loop(answers: list[Any], **options: Any) -> obelisk.Loop:
    model = obelisk.ScriptedModel(answers, tokens_per_second=options.pop("rate", None))
    return obelisk.Loop(model, [fetch, add], stream=True, **options)


class TestCompleteCalls:
    def test_a_call_is_complete_once_the_next_one_begins(self) -> None:
        text = json.dumps(_solution([{"_tool": "a", "x": "abc"}, {"_tool": "b"}]))
        cut = text.index('{"_tool": "b"') + 3
        assert complete_calls(text[:cut]) == [{"_tool": "a", "x": "abc"}]

    def test_a_call_is_complete_when_its_closing_brace_arrives(self) -> None:
        assert complete_calls('{"calls": [{"_tool": "a", "x": {"y": 1}') == []
        assert complete_calls('{"calls": [{"_tool": "a", "x": {"y": 1}}') == [
            {"_tool": "a", "x": {"y": 1}}
        ]
        assert complete_calls('{"calls": [{"_tool": "a", "x": "}"') == []
        assert complete_calls('{"calls": [{"_tool": "a"},  ') == [{"_tool": "a"}]

    def test_the_last_call_is_complete_when_the_array_closes(self) -> None:
        text = '{"calls": [{"_tool": "a"}], "output": null'
        assert complete_calls(text) == [{"_tool": "a"}]
        assert complete_calls('{"calls": [{"_tool": "a"}]') == [{"_tool": "a"}]
        assert complete_calls('{"calls": [{"_tool": "a"', final=True) == [{"_tool": "a"}]

    def test_text_that_is_not_a_solution_yet_has_no_calls(self) -> None:
        assert complete_calls("") == []
        assert complete_calls("[1, 2") == []
        assert complete_calls('{"output": 1') == []


class TestStreamingLoop:
    def test_first_calls_start_before_the_model_has_finished_writing(self) -> None:
        EVENTS.clear()
        calls = [{"_tool": "fetch", "n": i, "_outputPath": f"†state.f{i}"} for i in range(3)]
        calls.append(
            {"_tool": "add", "a": "†state.f0", "b": "†state.f2", "_outputPath": "†state.s"}
        )
        answer = _solution(calls)
        text_tokens = len(json.dumps(answer)) / 4
        rate = text_tokens / 0.3  # the plan takes 0.3 s to write
        loop = _loop([answer, _solution([], "†state.s")], rate=rate)
        began = time.perf_counter()
        result = loop.run_sync()
        assert result.output == 20
        first_start = min(t for kind, _, t in EVENTS if kind == "start") - began
        assert first_start < 0.25, "fetch #0 must start while the plan is still streaming"

    def test_streamed_and_whole_runs_agree(self) -> None:
        calls = [
            {"_tool": "fetch", "n": 1, "_outputPath": "†state.a"},
            {"_tool": "add", "a": "†state.a", "b": 5, "_outputPath": "†state.b"},
            {"_tool": "add", "a": "†state.b", "b": "†state.a", "_outputPath": "†state.c"},
        ]
        answers = [_solution(calls), _solution([], "†state.c")]
        streamed = _loop(list(answers)).run_sync()
        whole = obelisk.Loop(obelisk.ScriptedModel(list(answers)), [fetch, add]).run_sync()
        assert streamed.state == whole.state == {"a": 10, "b": 15, "c": 25}
        assert streamed.output == whole.output == 25

    def test_a_bad_call_is_not_dispatched_but_the_others_run(self) -> None:
        calls = [
            {"_tool": "fetch", "n": 1, "_outputPath": "†state.a"},
            {"_tool": "nope", "_outputPath": "†state.z"},
            {"_tool": "add", "a": "†state.z", "b": 1, "_outputPath": "†state.y"},
        ]
        loop = _loop([_solution(calls), _solution([], "done")])
        result = loop.run_sync()
        first = result.turns[0]
        assert first.run is not None
        statuses = [(c.label, c.status) for c in first.run.calls]
        assert statuses == [
            ("#0 fetch", "succeeded"),
            ("#1 nope", "skipped"),
            ("#2 add", "skipped"),
        ]
        assert first.run.calls[1].reason == (
            "not dispatched: error[unknown_tool] #1 nope, _tool: unknown tool 'nope'"
        )
        assert first.run.calls[2].reason == "†state.z was not written: #1 nope was skipped"
        assert result.state == {"a": 10}
        sent = [m for m in result.turns[1].request.context if m.type == "error"]
        assert [m.call for m in sent] == ["#1 nope", "#2 add"]

    def test_a_read_written_by_a_later_call_waits_for_it(self) -> None:
        calls = [
            {"_tool": "add", "a": "†state.late", "b": 1, "_outputPath": "†state.sum"},
            {"_tool": "fetch", "n": 2, "_outputPath": "†state.late"},
        ]
        result = _loop([_solution(calls, "†state.sum")]).run_sync()
        assert result.state == {"late": 20, "sum": 21}

    def test_a_read_nothing_ever_writes_is_reported_when_the_stream_ends(self) -> None:
        calls = [{"_tool": "add", "a": "†state.never", "b": 1, "_outputPath": "†state.sum"}]
        result = _loop([_solution(calls), _solution([], 0)]).run_sync()
        record = result.turns[0].run.calls[0]  # type: ignore[union-attr]
        assert record.status == "skipped"
        assert record.reason is not None and record.reason.startswith(
            "not dispatched: error[unresolved_reference] #0 add, args.a:"
        )

    def test_a_reader_waiting_on_a_refused_writer_skips_and_the_run_ends(self) -> None:
        # The reader is held (nothing wrote †state.x yet); the only writer then comes
        # with an unknown tool and is refused.  The reader must settle (skipped,
        # naming the refused writer), not wait forever.
        calls = [
            {"_tool": "add", "a": "†state.x", "b": 1, "_outputPath": "†state.y"},
            {"_tool": "nope", "_outputPath": "†state.x"},
            {"_tool": "fetch", "n": 1, "_outputPath": "†state.free"},
        ]
        result = _loop([_solution(calls), _solution([], 0)]).run_sync()
        records = result.turns[0].run.calls  # type: ignore[union-attr]
        assert [r.status for r in records] == ["skipped", "skipped", "succeeded"]
        assert records[0].reason == "†state.x was not written: #1 nope was skipped"
        assert records[1].reason is not None
        assert records[1].reason.startswith("not dispatched: error[unknown_tool] #1 nope")
        assert result.state == {"free": 10}

    def test_a_call_writing_what_a_started_call_read_is_refused(self) -> None:
        calls = [
            {"_tool": "add", "a": "†state.x", "b": 1, "_outputPath": "†state.y"},
            {"_tool": "add", "a": 5, "b": 5, "_outputPath": "†state.x"},
        ]
        result = _loop([_solution(calls), _solution([], 0)]).run_sync(state={"x": 1})
        records = result.turns[0].run.calls  # type: ignore[union-attr]
        assert records[0].status == "succeeded"
        assert records[1].status == "skipped"
        assert records[1].reason is not None and "error[stream_order]" in records[1].reason
        assert result.state == {"x": 1, "y": 2}

    def test_a_cycle_stops_its_calls_and_is_reported(self) -> None:
        calls = [
            {"_tool": "add", "a": "†state.q", "b": 1, "_outputPath": "†state.p"},
            {"_tool": "add", "a": "†state.p", "b": 1, "_outputPath": "†state.q"},
            {"_tool": "fetch", "n": 3, "_outputPath": "†state.free"},
        ]
        result = _loop([_solution(calls), _solution([], 0)]).run_sync()
        records = result.turns[0].run.calls  # type: ignore[union-attr]
        assert [r.status for r in records] == ["skipped", "skipped", "succeeded"]
        assert any("dependency_cycle" in (r.reason or "") for r in records[:2])
        assert result.state == {"free": 30}

    def test_text_that_breaks_off_keeps_what_ran(self) -> None:
        text = json.dumps(_solution([{"_tool": "fetch", "n": 4, "_outputPath": "†state.f"}]))
        broken = text[: text.index("]") + 1] + ', "output": '  # never finished
        result = _loop([broken, _solution([], "†state.f")]).run_sync()
        assert result.output == 40
        assert result.turns[0].solution is not None
        assert result.turns[0].solution.calls == [
            {"_tool": "fetch", "n": 4, "_outputPath": "†state.f"}
        ]

    def test_stream_needs_a_streaming_model_and_eager_mode(self) -> None:
        class Plain:
            async def complete(self, request: obelisk.Request) -> obelisk.Solution:
                return obelisk.Solution()

        with pytest.raises(obelisk.UsageError, match="stream"):
            obelisk.Loop(Plain(), [add], stream=True)
        with pytest.raises(obelisk.UsageError, match="eager mode only"):
            obelisk.Loop(obelisk.ScriptedModel(), [add], stream=True, mode="lazy")
