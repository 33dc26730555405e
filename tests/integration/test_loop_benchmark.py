"""The loop benchmark's measurements run and report what they claim (no timing asserts)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import loop_overhead
from benchmarks.__main__ import markdown as suite_markdown


@pytest.fixture(scope="module")
def found() -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop_overhead, "TOOL_S", 0.02)  # fast tools: structure, not speed
        streaming = loop_overhead.streaming(1, rate=4000)
        deep = loop_overhead.streaming(1, rate=4000, deep=True)
    return {
        "streaming_deep": deep,
        "overhead": loop_overhead.overhead(turns=3, calls=20, repeat=2),
        "sizes": loop_overhead.request_sizes(turns=5, calls=100, fail_turn=2),
        "streaming": streaming,
    }


def test_plan_text_reads_the_call_before() -> None:
    calls = json.loads(loop_overhead.plan_text(4, calls=4, fail=True))["calls"]
    assert [c["_outputPath"] for c in calls] == [
        "†state.t4_c0",
        "†state.t4_c1",
        "†state.t4_c2",
        "†state.t4_c3",
        "†state.t4_bad",
    ]
    assert [c.get("x") for c in calls[:4]] == [None, "†state.t4_c0", None, "†state.t4_c2"]
    assert calls[4]["_tool"] == "broken"


def test_overhead_numbers_are_positive_and_every_turn_ran(found: dict[str, Any]) -> None:
    o = found["overhead"]
    for key in ("wall_s", "run_s", "request_s", "parse_s", "absorb_s", "reference_s"):
        assert isinstance(o[key], float) and o[key] > 0, key
    assert o["wall_s"] > o["run_s"]  # the turn's wall time contains its run
    assert len(o["overhead_by_turn_s"]) == 3
    assert o["keys"] == 3 * 20 and o["same_state"]
    assert o["ratio_to_reference"] == o["overhead_s"] / o["reference_s"]


def test_request_size_grows_by_a_bounded_step(found: dict[str, Any]) -> None:
    s = found["sizes"]
    assert s["turns"] == [1, 2, 3, 4, 5, 6]
    # 100 keys a turn: '"t3_c7":0,' is 10 bytes, '"t3_c42":1,' 11 bytes.  From request 2
    # on, the last answer's plan (100 calls, the same size each turn) rides along too.
    steady = s["increments"][1:]
    assert all(10 * 100 <= step <= 11 * 100 for step in steady)
    assert max(steady) - min(steady) <= 2
    assert s["plan_bytes"] > 100 * 40  # 100 calls of at least 40 bytes each
    assert s["r2"] > 0.999 and 1000 < s["slope"] < 1100
    # The failure of turn 2 shows in request 3 only: errors do not accumulate.
    extra = s["extra_bytes_with_failure"]
    assert extra[2] > 0 and extra[:2] + extra[3:] == [0] * 5
    assert s["error_messages"] == [0, 0, 1, 0, 0, 0]


def test_streaming_reaches_the_same_state(found: dict[str, Any]) -> None:
    st = found["streaming"]
    assert st["same_state"] and st["calls"] == 8
    assert st["waiting_s"] > 0 and st["stream_s"] > 0 and isinstance(st["dispatch_lag_s"], float)
    ideal = st["ideal"]
    assert ideal["critical_path_s"] == pytest.approx(2 * 0.02)
    assert ideal["waiting_s"] == pytest.approx(ideal["stream_s"] + ideal["critical_path_s"])
    assert ideal["stream_s"] < ideal["streaming_s"] <= ideal["waiting_s"]
    assert len(ideal["arrival_s"]) == 8 and ideal["arrival_s"] == sorted(ideal["arrival_s"])


def test_the_deep_plan_has_three_levels(found: dict[str, Any]) -> None:
    _text, deps = loop_overhead.deep_plan(fetches=2)
    assert deps == [[], [], [0], [1], [2, 3]]
    deep = found["streaming_deep"]
    assert deep["same_state"] and deep["calls"] == 9
    assert deep["ideal"]["critical_path_s"] == pytest.approx(3 * 0.02)


def test_ideal_streaming_of_a_known_text() -> None:
    text, deps = loop_overhead.streamed_plan(fetches=2, per_combiner=2)
    assert deps == [[], [], [0, 1]]
    chars = 4
    result = loop_overhead.ideal(text, deps, rate=100, chars=chars)
    assert result["stream_s"] == pytest.approx(-(-len(text) // chars) / 100)
    # The combiner is complete when its closing brace arrives: one tool time after it.
    brace = text.rindex("}]")
    arrival = -(-(brace + 1) // chars) / 100
    assert arrival < result["stream_s"]
    assert result["streaming_s"] == pytest.approx(arrival + loop_overhead.TOOL_S)


def test_markdown_sections(found: dict[str, Any]) -> None:
    text = loop_overhead.markdown(found)
    assert "**Execution loop**: 3 turns of 20-call plans" in text
    assert "the 1 ms target" in text and ("meets" in text or "misses" in text)
    assert "adds" in text and "request(s) [3] only" in text
    assert "**Streaming** 8 calls" in text
    results = {
        "machine": {k: "x" for k in ("cores", "python", "machine", "obelisk")}
        | {"langgraph": "x", "hamilton": "x"},
        "repeat": 1,
        "overhead_layered": [],
        "overhead_shapes": [],
        "makespan": {"critical_path_s": 0.1, **dict.fromkeys(("floor", "obelisk"), 1.0)},
        "check": [],
        "sync_tools": {"sync_us": 2.0, "async_us": 1.0, "ratio": 2.0},
        "blocking": {},
        "memory": {"obelisk_mib": 1.0, "python_mib": 1.0},
        "nestful": {},
        "loop": found,
    }
    assert suite_markdown(results).endswith(text)
