"""The benchmark suite's pieces work and its report has the promised shape (no timing asserts)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import payload, simulate_plans, suite, targets, timing, tools_from_schema
from benchmarks.__main__ import END, START, _sync_line, markdown, update_readme
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
    found = suite.overhead(suite.fan(50), 3, ("floor", "obelisk"))
    assert set(found) == {"floor", "obelisk", "samples"}
    for system in ("floor", "obelisk"):
        assert set(found[system]) == {"wall", "cpu"}
        assert found[system]["wall"] > 0 and found[system]["cpu"] >= 0
        # one run per round, and the medians are those of the rounds' runs
        assert len(found["samples"][system]) == 3
        assert found[system] == timing.cpu_wall(found["samples"][system])
    paired = suite.side_by_side(found, "obelisk", "floor")
    assert paired == timing.paired_ratio(found["samples"]["obelisk"], found["samples"]["floor"])
    assert suite.side_by_side(found, "langgraph", "obelisk") is None  # not run
    # a row saved before rounds were paired has no runs to pair
    medians = {"floor": {"wall": 2.0, "cpu": 1.0}, "obelisk": {"wall": 6.0, "cpu": 4.0}}
    assert suite.side_by_side(medians, "obelisk", "floor") is None
    span = suite.makespan(1, ("floor", "obelisk"), n=8)
    assert span["critical_path_s"] > 0
    assert span["obelisk"] >= 0.99  # a run can never beat its critical path
    assert set(span["runs"]) == {"floor", "obelisk"}
    assert span["runs"]["obelisk"]["wall"] >= span["critical_path_s"]


def test_blocking_calls_overlap_in_obelisk() -> None:
    found = suite.blocking(1, ("obelisk",), n=4, ms=40)
    assert found["obelisk"]["wall"] < found["serial_s"]
    assert found["obelisk"]["cpu"] < found["obelisk"]["wall"]  # sleeping costs no CPU


def test_sync_tools_in_threads_and_inline_when_obelisk_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = suite.sync_tools(60, 1)
    assert found["calls"] == 60
    assert set(found["async"]) == set(found["threads"]) == {"wall", "cpu"}
    if suite.inline_supported():
        assert found["inline_supported"] and found["inline"]["wall"] > 0
        assert suite.inline_tool() is not None
    else:
        assert not found["inline_supported"] and found["inline"] is None
        assert suite.inline_tool() is None
    # The inline variant's path, with a stand-in tool of the same name.
    monkeypatch.setattr(suite, "inline_tool", lambda: suite.zero_sync)
    assert set(suite.sync_tools(60, 1)["inline"]) == {"wall", "cpu"}
    text = _sync_line(found)
    assert "| sync, in worker threads (default) |" in text
    assert ("not available" in text) != suite.inline_supported()


def test_timing_helpers() -> None:
    seen: list[int] = []
    found = timing.median_times(lambda: 7, 3, check=seen.append)
    assert seen == [7, 7, 7] and found["wall"] >= 0 and found["cpu"] >= 0
    assert timing.per_call_us({"wall": 0.002, "cpu": 0.001}, 1000) == {"wall": 2.0, "cpu": 1.0}
    assert timing.per_call_us(None, 10) is None
    assert timing.ratio({"wall": 4.0, "cpu": 3.0}, {"wall": 2.0, "cpu": 1.0}) == {
        "wall": 2.0,
        "cpu": 3.0,
    }
    assert timing.ratio(None, {"wall": 1.0, "cpu": 1.0}) is None
    assert timing.cpu_wall([(1.0, 0.5), (3.0, 0.1), (2.0, 0.2)]) == {"wall": 2.0, "cpu": 0.2}


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
        "outcome.to_jsonable_python": 0,
        "outcome.from_json": 1,
        "state.to_json": 0,
        "outcome.to_json": 1,
        "texts": 1,
        "total": 1,
    }
    text = tools_from_schema.markdown({"build": built, "big_result": big})
    assert (
        "1 copy of it as objects on the way to the state and the log "
        "(1 `outcome.from_json`); the log keeps its JSON text (1 `outcome.to_json`)"
    ) in text
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


def test_payload_kinds_plans_and_floor() -> None:
    small, large, whole = payload.kind("0.5 KB"), payload.kind("20 KB"), payload.kind("int")
    assert 450 <= small.bytes <= 560 and 19_000 <= large.bytes <= 21_000
    assert len({v["id"] for v in large.pool}) == payload.POOL
    deps = [[], [], [0, 1], [2]]
    plan = payload.plan_for(deps, small)
    assert plan[2] == {
        "_tool": "order",
        "_outputPath": "†state.r2",
        "a": "†state.r0.items[0].id",
        "b": "†state.r1.owner.name",
    }
    assert plan[3]["a"] == "†state.r2.items[0].id" and "b" not in plan[3]
    assert payload.plan_for(deps, whole)[2] == {
        "_tool": "zero",
        "_outputPath": "†state.r2",
        "a": "†state.r0",
        "b": "†state.r1",
    }
    values = asyncio.run(payload.floor(layered(120), small))
    assert len(values) == 120 and all(v in small.pool for v in values)
    with pytest.raises(ValueError, match="unknown kind"):
        payload.kind("1 MB")


def test_payload_collect_and_report() -> None:
    found = payload.collect(True, 1, sizes=(100,), large_sizes=(100,))
    assert found["systems"] == ["floor", "obelisk"]
    assert [(r["calls"], r["kind"]) for r in found["rows"]] == [
        (100, "int"),
        (100, "0.5 KB"),
        (100, "20 KB"),
    ]
    for row in found["rows"]:
        assert row["obelisk"]["wall"] > 0 and row["floor"]["cpu"] >= 0
        assert set(row["ratios"]["to_floor"]) == {"obelisk"}
    assert found["rows"][0]["ratios"]["to_int"]["obelisk"] == {"wall": 1.0, "cpu": 1.0}
    text = payload.markdown(found)
    assert "| 100 | 0.5 KB (" in text and "| 100 | int |" in text
    assert "obelisk, 0.5 KB objects ÷ zero-work ints: 100 calls " in text
    assert "the target of ≤ 1.5x" in text
    assert payload.target_ratio(found) == found["rows"][1]["ratios"]["to_int"]["obelisk"]
    # Only the sizes asked for: 20 KB at none of them.
    rows = payload.collect(True, 1, sizes=(60,), large_sizes=())["rows"]
    assert [r["kind"] for r in rows] == ["int", "0.5 KB"]


def test_payload_systems_and_kinds_take_turns_and_ratios_pair_each_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Scripted runs, no timing: the floor's int run takes 1 s in rounds 0-2 and 2 s in
    # rounds 3-4; every other run takes 1.5x the floor's int run of its round, except
    # that the machine slows down twofold in round 2 right after the floor's int run.
    # The ratio of the medians would read 3x; each round's own ratio says 1.5x.
    order: list[tuple[str, str]] = []

    def scripted(deps: list[list[int]], found: payload.Kind, system: str) -> Any:
        def run() -> tuple[float, float]:
            rounds = sum(1 for s, k in order if (s, k) == ("floor", "int"))
            order.append((system, found.label))
            if (system, found.label) == ("floor", "int"):
                base = 1.0 if rounds < 3 else 2.0
                return base, base / 2
            base = 1.0 if rounds - 1 < 2 else 2.0
            return 1.5 * base, 0.75 * base

        return run

    monkeypatch.setattr(payload, "_runner", scripted)
    monkeypatch.setattr(payload, "_langgraph", lambda: object())
    systems = ("floor", "obelisk", "langgraph")
    found = payload.collect(False, 5, sizes=(50,), large_sizes=(), systems=systems)
    one_round = [(s, k) for s in systems for k in ("int", "0.5 KB")]
    assert order == one_round * 5
    int_row, object_row = found["rows"]
    assert object_row["ratios"]["to_int"]["floor"] == {"wall": 1.5, "cpu": 1.5}
    assert object_row["ratios"]["to_int"]["langgraph"] == {"wall": 1.0, "cpu": 1.0}
    assert int_row["ratios"]["to_floor"] == {
        "obelisk": {"wall": 1.5, "cpu": 1.5},
        "langgraph": {"wall": 1.5, "cpu": 1.5},
    }
    medians = timing.ratio(int_row["obelisk"], int_row["floor"])
    assert medians == {"wall": 3.0, "cpu": 3.0}  # what pairing avoids
    # A system that is not installed gets None, and no runs.
    monkeypatch.setattr(payload, "_langgraph", lambda: None)
    order.clear()
    found = payload.collect(False, 1, sizes=(50,), large_sizes=(), systems=systems)
    assert {s for s, _ in order} == {"floor", "obelisk"}
    assert found["rows"][1]["langgraph"] is None
    assert found["rows"][1]["ratios"]["to_int"]["langgraph"] is None


def test_payload_profile_lists_the_top_functions() -> None:
    text = payload.profile(n=60, top=5)
    assert "Ordered by: internal time" in text and "Ordered by: cumulative time" in text


def _new_results() -> dict[str, Any]:
    wall_cpu = {"wall": 0.1, "cpu": 0.08}
    return {
        "machine": {
            "cores": 2,
            "python": "3.11",
            "machine": "x86_64",
            "obelisk": "0.1.0",
            "langgraph": "1.2",
            "hamilton": "1.9",
        },
        "repeat": 5,
        "overhead_layered": [
            {
                "calls": 1000,
                "floor": {"wall": 0.01, "cpu": 0.01},
                "obelisk": wall_cpu,
                "langgraph": {"wall": 0.3, "cpu": 0.24},
                "hamilton": None,
            },
            {
                "calls": 10_000,
                "floor": {"wall": 0.1, "cpu": 0.1},
                "obelisk": {"wall": 1.5, "cpu": 1.2},
            },
            {
                "calls": 100_000,
                "floor": {"wall": 1.0, "cpu": 1.0},
                "obelisk": {"wall": 18.0, "cpu": 12.0},
            },
        ],
        "overhead_shapes": [],
        "payload": {
            "repeat": 5,
            "systems": ["floor", "obelisk"],
            "target": 1.5,
            "rows": [
                {
                    "calls": 1000,
                    "kind": "int",
                    "bytes": 0,
                    "floor": {"wall": 7.0, "cpu": 7.0},
                    "obelisk": {"wall": 100.0, "cpu": 100.0},
                    "ratios": {
                        "to_floor": {"obelisk": {"wall": 14.3, "cpu": 14.3}},
                        "to_int": {
                            "floor": {"wall": 1.0, "cpu": 1.0},
                            "obelisk": {"wall": 1.0, "cpu": 1.0},
                        },
                    },
                },
                {
                    "calls": 1000,
                    "kind": "0.5 KB",
                    "bytes": 504,
                    "floor": {"wall": 8.0, "cpu": 8.0},
                    "obelisk": {"wall": 180.0, "cpu": 170.0},
                    "ratios": {
                        "to_floor": {"obelisk": {"wall": 22.5, "cpu": 21.25}},
                        "to_int": {
                            "floor": {"wall": 1.1, "cpu": 1.1},
                            "obelisk": {"wall": 1.8, "cpu": 1.7},
                        },
                    },
                },
            ],
        },
        "makespan": {
            "critical_path_s": 0.1,
            "floor": 1.05,
            "obelisk": 1.06,
            "langgraph": None,
            "hamilton": None,
            "runs": {"floor": wall_cpu, "obelisk": wall_cpu, "langgraph": None, "hamilton": None},
        },
        "check": [
            {
                "calls": 10_000,
                "seconds": 0.5,
                "cpu_seconds": 0.4,
                "calls_per_second": 20_000.0,
                "calls_per_cpu_second": 25_000.0,
            }
        ],
        "sync_tools": {
            "calls": 1000,
            "inline_supported": False,
            "async": {"wall": 100.0, "cpu": 90.0},
            "threads": {"wall": 200.0, "cpu": 270.0},
            "inline": None,
        },
        "blocking": {"obelisk": {"wall": 0.055, "cpu": 0.003}, "langgraph": None, "hamilton": None},
        "memory": {
            "obelisk_mib": 40.0,
            "python_mib": 10.0,
            "obelisk_cpu_s": 0.8,
            "python_cpu_s": 0.01,
        },
        "nestful": {"passed": 162, "total": 162, "seconds": 0.5, "cpu_seconds": 0.4},
    }


def test_markdown_report_with_cpu_beside_wall_and_the_targets() -> None:
    text = markdown(_new_results())
    assert (
        "| layered | 1,000 | 10.0 / 10.0 µs | 100.0 / 80.0 µs | 300.0 / 240.0 µs | skipped " in text
    )
    assert "| 10.0x / 8.0x | 3.0x / 3.0x |" in text
    assert "obelisk at 100k calls takes 12.0x / 10.0x its 10k time (linear: 10x)." in text
    assert "| whole run | 100 / 80 ms | 100 / 80 ms | skipped | skipped |" in text
    assert "| 10,000 | 500 / 400 ms | 20,000 / 25,000 |" in text
    assert "| sync, in worker threads (default) | 200.0 / 270.0 µs | 2.0x / 3.0x |" in text
    assert "obelisk 55 / 3 ms" in text
    assert "it takes 0.80 s CPU" in text
    assert "162/162 in 0.50 s total (0.40 s CPU)." in text
    assert "| 1,000 | 0.5 KB (504 B) | 8.0 / 8.0 µs | 180.0 / 170.0 µs |" in text
    # The speed targets, at the top, read off the sections.
    summary = text.split("**Overhead**")[0]
    assert (
        "| zero-work async, layered 10k calls, obelisk run incl. check ÷ floor "
        "| 15.00x / 12.00x | ≤ 4.00x: missed |" in summary
    )
    assert (
        "| obelisk 100k calls ÷ 10k calls, time (linear: 10x) | 12.00x / 10.00x "
        "| ≤ 11.00x: met |" in summary
    )
    assert "| 20,000 / 25,000 calls/s | ≥ 50,000: missed |" in summary
    assert "| 1.80x / 1.70x | ≤ 1.50x: missed |" in summary
    assert "obelisk ÷ floor (wall by nature) | 1.0095x | ≤ 1.0100x: met |" in summary
    assert "| 3.00x / 3.00x | ≥ 10.00x: missed |" in summary
    assert "| 40.0 MiB | ≤ 50.0: met |" in summary


def test_targets_figures_and_verdicts() -> None:
    results = _new_results()
    by_key = {f["key"]: f for f in targets.figures(results)}
    assert list(by_key) == list(targets.TARGETS)
    assert by_key["payload_ratio"]["cpu"] == 1.7
    met = targets.markdown(results, {"payload_ratio": ("<=", 2.0), "check_10k": (">=", 30_000)})
    assert "≤ 2.00x: met" in met and "≥ 30,000: missed" in met
    # A quick run lacks the 10k and 100k plans: reported, not guessed.
    quick = targets.markdown({"overhead_layered": [], "memory": {}})
    assert quick.count("not measured") == 7


def test_targets_pair_the_runs_of_each_round_where_a_row_has_them() -> None:
    # round 2 ran on a machine twice as slow from its obelisk run on: the medians
    # read 10 / 1 = 10x, the rounds' own ratios 5x (and 10x once)
    row = {
        "calls": 10_000,
        "floor": {"wall": 1.0, "cpu": 1.0},
        "obelisk": {"wall": 10.0, "cpu": 10.0},
        "samples": {
            "floor": [(1.0, 1.0), (1.0, 1.0), (1.0, 1.0), (2.0, 2.0), (2.0, 2.0)],
            "obelisk": [(5.0, 5.0), (5.0, 5.0), (10.0, 10.0), (10.0, 10.0), (10.0, 10.0)],
        },
    }
    figure = targets.figures({"overhead_layered": [row]})[0]
    assert (figure["key"], figure["wall"], figure["cpu"]) == ("overhead_10k", 5.0, 5.0)
    del row["samples"]  # results saved before rounds were paired
    figure = targets.figures({"overhead_layered": [row]})[0]
    assert (figure["wall"], figure["cpu"]) == (10.0, 10.0)


def test_growth_runs_both_sizes_in_turn_and_pairs_them() -> None:
    found = suite.growth(20, 200, 3)
    assert (found["small"], found["large"]) == (20, 200)
    assert [len(found["samples"][k]) for k in ("small", "large")] == [3, 3]
    assert found["ratio"] == timing.paired_ratio(
        found["samples"]["large"], found["samples"]["small"]
    )
    assert found["ratio"]["cpu"] > 1  # ten times the calls take longer
    by_key = {f["key"]: f for f in targets.figures({"growth": found})}
    assert (by_key["growth_100k"]["wall"], by_key["growth_100k"]["cpu"]) == (
        found["ratio"]["wall"],
        found["ratio"]["cpu"],
    )


def test_journal_benchmark_measures_both_runs_and_a_resume() -> None:
    from benchmarks import journal

    results = journal.collect(True, 1)
    overhead = results["overhead"]
    assert overhead["calls"] == 1_000 and results["resume"]["calls"] == 1_000
    assert overhead["memory_us"]["wall"] > 0 and overhead["journal_us"]["cpu"] > 0
    assert results["resume"]["seconds"]["wall"] > 0
    text = journal.markdown(results)
    assert text.startswith("**Run journal** (median of 1; wall / CPU): 1,000 zero-work calls")
