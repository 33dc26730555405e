"""The tracing benchmarks run and report what they promise (no timing asserts;
docs/performance.md, "Tracing")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

pytest.importorskip("opentelemetry.sdk")

from benchmarks import tracing_off, tracing_overhead


def test_tracing_overhead_traces_every_call_and_reports_every_way() -> None:
    row = tracing_overhead.measure(100, 5)
    assert row["spans"] == 101  # invoke_workflow and one execute_tool span per call
    for way in ("off", "off_again", "on", "sdk_floor", "cost"):
        assert set(row[way]) == {"wall", "cpu"}
    assert row["on"]["wall"] > 0


def test_tracing_off_measures_a_tree_in_its_own_process() -> None:
    row = tracing_off.one_run(tracing_off.ROOT / "src", 100, 1)
    assert row["calls"] == 100 and row["obelisk_us"] > 0
