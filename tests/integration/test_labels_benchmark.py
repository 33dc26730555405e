"""The labels benchmark runs every way and reports what it promises (no timing asserts;
docs/performance.md, "Labels and policies")."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import labels

import obelisk


def test_every_way_runs_the_plan_and_reports_wall_cpu_and_ratio() -> None:
    report = labels.measure(100, 1)
    assert report["calls"] == 100
    for way in labels.WAYS:
        assert set(report[way]) == {"wall", "cpu", "ratio"}
        assert report[way]["cpu"] > 0
    assert report["off"]["ratio"] == 1.0


def test_the_ways_label_what_they_say() -> None:
    plan = labels._plan(100)
    tool, options = labels.WAYS["untrusted input"]
    last = obelisk.run_sync(plan, [tool], input={"x": 1}, **options).calls[-1]
    assert last.labels is not None and last.labels["_result"]["trust"] == "untrusted"
    tool, options = labels.WAYS["off"]
    assert obelisk.run_sync(plan, [tool], input={"x": 1}, **options).calls[-1].labels is None
