"""Conformance: the 162 NESTFUL v2 math records, executed by ``obelisk.run_sync``.

Each record's gold call sequence is converted to a plan (``benchmarks/nestful``)
and run with the 40 math tools; the last call's result must equal the gold
answer under the upstream comparison rule, for every record.  Unit tests pin the
tools' documented quirks and the comparison rule itself.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest

import obelisk

_ROOT = Path(__file__).resolve().parents[2]  # benchmarks/ is a top-level package
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from benchmarks.nestful import math_tools  # noqa: E402
from benchmarks.nestful.convert import (  # noqa: E402
    NESTFUL_DIR,
    NestfulCase,
    load_math_cases,
    load_math_records,
)
from benchmarks.nestful.score import (  # noqa: E402
    Score,
    nestful_equal,
    obelisk_runner,
    printed_decimals,
    score_cases,
    standin_runner,
)

from . import corpus  # noqa: E402

MATH_RECORDS = 162


@pytest.fixture(scope="module")
def cases() -> list[NestfulCase]:
    return load_math_cases()


def _mismatches(score: Score) -> str:
    return "\n".join(
        f"{r.sample_id}: expected {r.expected!r}, got {r.got!r}"
        + (f" ({r.error})" if r.error else "")
        for r in score.mismatches
    )


# -- the whole corpus ----------------------------------------------------------------


def test_all_math_records_reproduce_gold_with_run_sync(cases: list[NestfulCase]) -> None:
    assert len(cases) == MATH_RECORDS
    runner = obelisk_runner()
    assert runner is not None, "obelisk.run_sync is missing"
    score = score_cases(cases, runner, "obelisk.run_sync")
    assert score.passed == MATH_RECORDS, (
        f"{score.passed}/{score.total} passed; mismatches:\n{_mismatches(score)}"
    )


def test_run_sync_completes_every_plan_and_state_holds_the_answer(
    cases: list[NestfulCase],
) -> None:
    registry = math_tools.registry()
    for case in cases:
        result = obelisk.run_sync(case.plan, registry)
        assert result.status == "completed", case.sample_id
        assert [call.status for call in result.calls] == ["succeeded"] * len(case.plan)
        last = result.calls[-1]
        assert last.index == len(case.plan) - 1
        assert result.state[case.answer_label] == last.output, case.sample_id


def test_standin_runner_agrees(cases: list[NestfulCase]) -> None:
    score = score_cases(cases, standin_runner(), "stand-in")
    assert score.passed == MATH_RECORDS, _mismatches(score)


def test_conversion_matches_the_static_corpus_converter(cases: list[NestfulCase]) -> None:
    records = load_math_records()
    assert [case.sample_id for case in cases] == [r["sample_id"] for r in records]
    for case, record in zip(cases, records, strict=True):
        assert case.plan == corpus.convert_nestful_record(record).plan, case.sample_id


def test_benchmark_and_conformance_read_the_same_vendored_data() -> None:
    assert NESTFUL_DIR == corpus.NESTFUL_DIR == corpus.DATA_DIR / "nestful"
    assert NESTFUL_DIR.parent == _ROOT / "tests" / "data"


def test_conversion_rule() -> None:
    from benchmarks.nestful.convert import convert_record

    case = convert_record(
        {
            "sample_id": "x",
            "gold_answer": 3.0,
            "output": [
                {"name": "add", "label": "$var_1", "arguments": {"arg_0": 1, "arg_1": 2}},
                {"name": "floor", "label": "$var_2", "arguments": {"arg_0": "$var_1.result$"}},
            ],
        }
    )
    assert case.plan == [
        {"_tool": "add", "arg_0": 1, "arg_1": 2, "_outputPath": "†state.var_1"},
        {"_tool": "floor", "arg_0": "†state.var_1.result", "_outputPath": "†state.var_2"},
    ]
    assert case.answer_label == "var_2"


def test_mismatches_are_reported(cases: list[NestfulCase]) -> None:
    """A wrong tool must show up as mismatches naming the record, expected and got."""

    @obelisk.tool(name="divide")
    def wrong_divide(arg_0: float, arg_1: float) -> dict[str, Any]:
        "Floor division instead of true division."
        return {"result": arg_0 // arg_1}

    tools = obelisk.Registry([t for t in math_tools.TOOLS if t.name != "divide"])
    tools.add(wrong_divide)
    runner = obelisk_runner(tools)
    assert runner is not None
    score = score_cases(cases[:20], runner)
    assert 0 < len(score.mismatches) < 20
    assert all(r.sample_id in _mismatches(score) for r in score.mismatches)


# -- the tools -----------------------------------------------------------------------


def _call(name: str, *arguments: Any) -> Any:
    tool = math_tools.registry()[name]
    named = {f"arg_{i}": value for i, value in enumerate(arguments)}
    return tool(**tool.validate_arguments(named))["result"]


def test_registry_has_the_40_tools_of_the_spec() -> None:
    import json

    spec_path = NESTFUL_DIR / "v2_math_functions.json"
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    names = [f["name"] for f in spec["functions"]]
    assert math_tools.registry().names() == names
    assert len(names) == 40


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("sqrt", (26,), 5),  # integer square root
        ("sqrt", (25,), 5),
        ("log", (1000, 10), 2),  # int(2.9999999999999996)
        ("log", (8, 2), 3),
        ("log", (0.5, 10), 0),  # truncated toward zero, not floored
        ("log", (math.e**3 + 1,), 3),  # base e by default
        ("gcd", (12.7, 8.2), 4),  # gcd(12, 8)
        ("lcm", (4.5, 6), 13.0),  # abs(27.0) // gcd(4, 6)
        ("lcm", (4, 6), 12),
        ("floor", (2.1,), 2),
        ("floor", (-2.1,), -3),
        ("reminder", (90, 33), 24),
        ("remainder", (-7, 3), 2),  # Python modulo
        ("factorial", (0,), 1),
        ("permutation", (5, 2), 20),
        ("choose", (5, 2), 10),
        ("max_number", ([3, 7.5, 1],), 7.5),
        ("min_number", ([3, 7.5, 1],), 1),
        ("negate_prob", (0.25,), 0.75),
        ("circumface", (1,), 2 * math.pi),
        ("cube_edge_by_volume", (64,), 3.9999999999999996),  # float pow, not a cube root
        ("volume_sphere", (3,), (4 / 3) * math.pi * 27),
        ("volume_cube", (2,), 8),
        ("divide", (4, 2), 2.0),
        ("speed", (1000, 1), 1000.0),
    ],
)
def test_quirky_tools(name: str, arguments: tuple[Any, ...], expected: Any) -> None:
    got = _call(name, *arguments)
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("sqrt", (25.0,)),  # isqrt takes ints only
        ("factorial", (-1,)),
        ("permutation", (2, 5)),  # factorial of a negative number
        ("add", ("1", 2)),  # no string coercion
        ("divide", (1, 0)),
    ],
)
def test_tools_reject(name: str, arguments: tuple[Any, ...]) -> None:
    with pytest.raises((ValueError, ZeroDivisionError, obelisk.ArgumentValidationError)):
        _call(name, *arguments)


def test_a_non_json_result_fails_the_call() -> None:
    plan = [{"_tool": "power", "arg_0": -8, "arg_1": 0.5, "_outputPath": "†state.var_1"}]
    result = obelisk.run_sync(plan, math_tools.registry())
    assert result.status == "failed"
    assert result.calls[0].error is not None
    assert result.calls[0].error["type"] == "OutputValidationError"


# -- the comparison rule -------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "decimals"),
    [(400.0, 1), (0.35, 2), (1.7777777777777777, 16), (1e-05, 5), (1.5e20, 0), (13.9, 1)],
)
def test_printed_decimals(gold: float, decimals: int) -> None:
    assert printed_decimals(gold) == decimals


@pytest.mark.parametrize(
    ("predicted", "gold", "equal"),
    [
        (13.875, 13.9, True),  # rounded to 1 decimal
        (16.363636363636363, 16.36, True),  # 2 decimals
        (3.9999999999999996, 4.0, True),
        (4.04, 4.0, True),
        (4.06, 4.0, False),
        (16.363636363636363, 16.363, False),  # 16.364
        (4, 4.0, True),  # not both floats: exact equality, and 4 == 4.0
        (4.04, 4, False),  # not both floats: no rounding
        ((1, 2), [1, 2], True),  # a tuple equals a list with the same items
        ([1, 2], (1, 2), True),
        ((1, 2), [2, 1], False),
        ([1.04], [1.0], False),  # no rounding inside lists
        ("abc", "abc", True),
        ("1", 1, False),
        ({"a": 1}, {"a": 1}, True),
        (None, 0.0, False),
    ],
)
def test_nestful_equal(predicted: Any, gold: Any, equal: bool) -> None:
    assert nestful_equal(predicted, gold) is equal
