"""The cold-start, small-plan and property-test benchmarks run and report the
promised shape (no timing asserts: speed is measured in benchmarks, never in tests)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import cold_start, property_tests, small_plans


def test_cold_start_reports_three_commands_against_the_reference() -> None:
    found = cold_start.collect(quick=True)
    assert found["rounds"] == 3
    for key in ("version", "run", "floor"):
        assert set(found[key]) >= {"cpu", "wall", "cpu_ms", "reference_cpu_ms"}
    text = cold_start.markdown(found)
    assert "`obelisk --version`" in text and "≤ 1.6x" in text


def test_small_plans_pair_run_sync_with_asyncio_run_and_sync_with_async_tools() -> None:
    found = small_plans.collect(quick=True, repeat=1)
    assert [row["calls"] for row in found["run_sync"]] == list(small_plans.SIZES)
    assert set(found["run_sync"][0]) >= {"adds_ratio", "whole_ratio", "run_sync_adds"}
    assert set(found["sync_tools"][0]["ratio"]) == {"wall", "cpu"}
    text = small_plans.markdown(found)
    assert "target ≤ 1.5x" in text and "target ≤ 1.3x at 5" in text


def test_property_test_share_is_a_fraction() -> None:
    found = property_tests.measure(examples=10, repeat=1)
    assert 0 <= found["obelisk_share"] <= 1
    assert "obelisk's share" in property_tests.markdown(found)
