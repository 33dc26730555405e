"""benchmarks/run_many.py runs (docs/scale.md, "How far one driver goes"): its quick
mode without Ray reports the local executor's runs and calls per second."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import run_many


def test_the_quick_local_benchmark_reports_runs_and_calls(capsys: object) -> None:
    found = run_many.main(["--quick", "--no-ray", "--json"])
    assert found["local"]["runs"] == 200 and found["local"]["runs_per_s"] > 0
    assert found["local_per_call"]["calls"] == 50
    assert "ray_1" not in found
