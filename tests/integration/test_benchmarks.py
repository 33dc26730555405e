"""The benchmark suite's pieces work and its report has the promised shape (no timing asserts)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import suite
from benchmarks.__main__ import END, START, markdown, update_readme
from benchmarks.run_overhead import layered


def test_shapes() -> None:
    assert suite.chain(4) == [[], [0], [1], [2]]
    assert suite.fan(5) == [[], [0], [0], [0], [1, 2, 3]]
    assert all(all(d < i for d in deps) for i, deps in enumerate(layered(200)))


def test_plan_for_reads_every_dependency() -> None:
    plan = suite.plan_for([[], [0], [0, 1]], "zero")
    assert plan[2] == {
        "_tool": "zero",
        "_outputPath": "†state.v2",
        "inputs": ["†state.v0", "†state.v1"],
    }
    assert "inputs" not in plan[0]


def test_overhead_and_makespan_run_for_floor_and_obelisk() -> None:
    found = suite.overhead(suite.fan(50), 1, ("floor", "obelisk"))
    assert set(found) == {"floor", "obelisk"}
    assert found["floor"] > 0 and found["obelisk"] > 0
    span = suite.makespan(1, ("floor", "obelisk"), n=8)
    assert span["critical_path_s"] > 0
    assert span["obelisk"] >= 0.99  # a run can never beat its critical path


def test_blocking_calls_overlap_in_obelisk() -> None:
    found = suite.blocking(1, ("obelisk",), n=4, ms=40)
    assert found["obelisk"] < found["serial_s"]


def test_markdown_report_and_readme_section(tmp_path: Path) -> None:
    results = {
        "machine": {
            "cores": 2,
            "python": "3.11",
            "machine": "x86_64",
            "obelisk": "0.1.0",
            "langgraph": "not installed",
            "hamilton": "not installed",
        },
        "repeat": 1,
        "overhead_layered": [
            {"calls": 1000, "floor": 0.01, "obelisk": 0.1, "langgraph": None, "hamilton": None}
        ],
        "overhead_shapes": [],
        "makespan": {
            "critical_path_s": 0.1,
            "floor": 1.05,
            "obelisk": 1.06,
            "langgraph": None,
            "hamilton": None,
        },
        "check": [{"calls": 1000, "seconds": 0.05, "calls_per_second": 20000.0}],
        "sync_tools": {"sync_us": 20.0, "async_us": 10.0, "ratio": 2.0},
        "blocking": {"obelisk": 0.055, "langgraph": None, "hamilton": None},
        "memory": {"obelisk_mib": 40.0, "python_mib": 10.0},
        "nestful": {"passed": 162, "total": 162, "seconds": 0.5},
    }
    text = markdown(results)
    assert "| layered | 1,000 | 10.0 µs | 100.0 µs | skipped | skipped | 10.0x | — |" in text
    assert "| 1.050x | 1.060x | skipped | skipped |" in text
    assert "**NESTFUL** v2 math: 162/162 in 0.50 s total." in text
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{START}\nold\n{END}\noutro\n")
    update_readme(text, readme)
    assert readme.read_text() == f"intro\n{START}\n{text}{END}\noutro\n"
    unmarked = tmp_path / "UNMARKED.md"
    unmarked.write_text("no markers here\n")
    with pytest.raises(SystemExit):
        update_readme(text, unmarked)
    assert unmarked.read_text() == "no markers here\n"


def test_conflicts_benchmark_reports_one_warning_per_plan_and_a_table() -> None:
    from benchmarks import conflicts

    results = conflicts.collect(1, (50, 100))
    assert [row["calls"] for row in results["rows"]] == [50, 100]
    assert all(row["warnings"] == 1 for row in results["rows"])
    assert all(row["wall_seconds"] > 0 and row["cpu_seconds"] > 0 for row in results["rows"])
    text = conflicts.markdown(results)
    assert "| calls | wall | CPU | warnings |" in text
    assert "| 50 | " in text and "2x the calls take" in text and "(linear: 2x;" in text
