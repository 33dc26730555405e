"""The benchmark suite's pieces work and its report has the promised shape (no timing asserts)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import simulate_plans, suite, tools_from_schema
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


def test_tools_from_schema_benchmark_measures_builds_and_copies() -> None:
    built = tools_from_schema.build(repeat=1, n=3)
    assert built["parameters"] == 5
    for key in ("from_schema_cold", "from_schema_repeated", "latent_repeated", "forged_signature"):
        assert set(built[key]) == {"cpu_us", "wall_us"} and built[key]["cpu_us"] >= 0
    big = tools_from_schema.big_result(repeat=1, n=1)
    assert 20_000 <= big["bytes"] < 21_000
    assert big["copies"] == {
        "state.copy_json": 0,
        "state.to_jsonable_python": 1,
        "outcome.to_jsonable_python": 1,
        "total": 2,
    }
    text = tools_from_schema.markdown({"build": built, "big_result": big})
    assert "2 copies of it on the way to the state and the log" in text
    assert tools_from_schema.forged(tools_from_schema.spec()).parameter_names == (
        "origin",
        "destination",
        "date",
        "passengers",
        "cabin",
    )


def test_simulate_benchmark_plays_every_scenario_of_its_plan() -> None:
    plan = simulate_plans.plan_of(calls=40, branches=3)
    assert len(plan) == 40
    branching = [c for c in plan if c["_tool"] == "risky"]
    assert [c["_outputPath"] for c in branching] == [
        f"†state.b{k} || †state.e{k}" for k in range(3)
    ]
    results = simulate_plans.collect(quick=True, repeat=1)
    assert (results["calls"], results["branches"], results["scenarios"]) == (200, 3, 8)
    assert results["simulate"]["cpu_s"] > 0 and results["run"]["cpu_s"] > 0
    text = simulate_plans.markdown(results)
    assert "of a 200-call plan with 3 binary branches (8 scenarios, every call in each)" in text


def test_plan_generation_measures_valid_plans() -> None:
    from benchmarks import plan_generation

    found = plan_generation.measure(count=5, repeat=1)
    assert found["valid"] == found["checked"] == 50
    assert found["plans"] >= 5 and found["plans_per_cpu_second"] > 0
    assert found["calls"] == 20
    line = plan_generation.markdown(found)
    assert line.startswith("**Plan generation**") and "50/50 check without errors" in line


def test_conflicts_benchmark_reports_one_warning_per_plan_and_a_table() -> None:
    from benchmarks import conflicts

    results = conflicts.collect(1, (50, 100))
    assert [row["calls"] for row in results["rows"]] == [50, 100]
    assert all(row["warnings"] == 1 for row in results["rows"])
    assert all(row["wall_seconds"] > 0 and row["cpu_seconds"] > 0 for row in results["rows"])
    text = conflicts.markdown(results)
    assert "| calls | wall | CPU | warnings |" in text
    assert "| 50 | " in text and "2x the calls take" in text and "(linear: 2x;" in text
    assert [row["calls"] for row in results["pushes"]] == [50, 100]
    assert "2x the pushes take" in text


def test_isolation_benchmark_runs_both_ways() -> None:
    from benchmarks import isolation

    results = isolation.timed(isolation.THREAD, 3, 1)
    assert results["cpu_us"] > 0 and results["wall_us"] > 0
    text = isolation.markdown(
        {"calls": 3, "thread": results, "process": results, "ratio_wall": 1.0}
    )
    assert text.startswith("**Process isolation** (3 zero-work sync calls")
