"""benchmarks/memory.py measures what it says, in child processes (no size asserts)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import memory


def test_measure_runs_each_figure_in_a_child_and_reports_them() -> None:
    found = memory.measure((300,), traced=300, payload=300)
    (peak,) = found["peak"]
    assert peak["calls"] == 300 and peak["peak_kib"] >= peak["before_kib"] > 0
    assert found["traced"]["check_per_call"] > 0
    assert found["traced"]["kept_per_call"] > 0
    assert found["payload"]["calls"] == 300
    table = memory.report(found)
    assert table.count("\n") == 5 and "≤ 1,024 B" in table and "≤ 4,096 B" in table
