"""obelisk.Limits and what a plan may not exceed (docs/limits.md): exact diagnostics.

Also: values Python itself cannot handle (integers too long to print, nesting too
deep to decode, NaN) are located diagnostics or SolutionErrors, never raw errors.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import obelisk
from obelisk import Diagnostic, Limits, PlanError, SolutionError, UsageError
from obelisk.diagnostics import limit_per_code
from obelisk.json_values import MAX_DECODE_DEPTH, decimal_digits, loads_strict, preview
from obelisk.limits import int_digits_limit

DIGITS = int_digits_limit() or 4300  # 0: this Python predates the limit (3.10.6 and older)
HUGE = 10**DIGITS  # DIGITS + 1 digits: one too many to print
pytestmark = pytest.mark.skipif(
    not int_digits_limit(), reason="Python without an int/str conversion limit"
)


@obelisk.tool
def put(value: Any = None) -> Any:
    """Return the value."""
    return value


def plan_errors(source: Any, limits: Limits | None = None) -> tuple[Diagnostic, ...]:
    with pytest.raises(PlanError) as caught:
        obelisk.parse_plan(source, limits=limits)
    return caught.value.diagnostics


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def ref(segments: int) -> str:
    return "†state" + ".a" * segments


# -- the Limits object ------------------------------------------------------------------


def test_defaults() -> None:
    assert Limits() == Limits(
        max_path_depth=64,
        max_argument_depth=256,
        max_diagnostics_per_code=100,
        max_output_bytes=16 * 1024 * 1024,
        max_state_bytes=1024 * 1024 * 1024,
        max_output_depth=256,
    )


@pytest.mark.parametrize(
    "value",
    [0, -1, True, 2.5, "3", None, -HUGE],
    ids=["0", "-1", "True", "2.5", "'3'", "None", "-huge"],
)
def test_every_field_must_be_a_positive_integer(value: Any) -> None:
    with pytest.raises(UsageError) as caught:
        Limits(max_path_depth=value)
    assert str(caught.value) == (
        f"Limits.max_path_depth must be a positive integer, got {preview(value)}"
    )


def test_limits_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Limits().max_path_depth = 3  # type: ignore[misc]


# -- max_path_depth ---------------------------------------------------------------------


def test_a_reference_past_max_path_depth_is_a_limit_error_with_a_caret() -> None:
    plan = [{"_tool": "put", "value": ref(5), "_outputPath": "†state.out"}]
    (found,) = plan_errors(plan, Limits(max_path_depth=4))
    assert found == Diagnostic(
        "limit",
        "error",
        "reference has 5 path segments; at most 4 are allowed (Limits.max_path_depth)",
        0,
        "args.value",
        (14, 16),
    )
    assert str(found).splitlines()[1:] == ["    †state.a.a.a.a.a", "                  ^^"]
    assert obelisk.parse_plan(plan, limits=Limits(max_path_depth=5))[0].expressions


def test_an_output_path_past_the_default_depth_fails_the_check_not_the_run() -> None:
    # 500 segments used to pass the check and die of RecursionError at run time
    plan = [{"_tool": "put", "value": 1, "_outputPath": ref(500)}]
    result = obelisk.check(plan, [put])
    assert [(d.code, d.path) for d in result.diagnostics] == [("limit", "_outputPath")]
    assert result.diagnostics[0].message == (
        "reference has 500 path segments; at most 64 are allowed (Limits.max_path_depth)"
    )
    with pytest.raises(PlanError):
        obelisk.run_sync(plan, [put])
    assert obelisk.check([{**plan[0], "_outputPath": ref(64)}], [put]).ok


def test_a_long_reference_inside_alternatives_is_found() -> None:
    text = f"†state.b || {ref(3)}"
    (found,) = plan_errors([{"_tool": "put", "value": text}], Limits(max_path_depth=2))
    assert (found.code, found.span) == ("limit", (len("†state.b || †state.a.a"), len(text)))


# -- max_argument_depth -----------------------------------------------------------------


def test_an_argument_past_max_argument_depth_is_a_limit_error() -> None:
    (found,) = plan_errors([{"_tool": "put", "value": nested(4)}], Limits(max_argument_depth=3))
    assert found == Diagnostic(
        "limit",
        "error",
        "nested deeper than 3 levels (Limits.max_argument_depth)",
        0,
        "args.value[0][0]...",
    )
    assert obelisk.parse_plan([{"_tool": "put", "value": nested(3)}], limits=Limits(3, 3))


def test_a_deep_output_is_a_limit_error_and_is_not_validated() -> None:
    plan = [{"_tool": "put", "_output": nested(5000), "_outputPath": "†state.x"}]
    result = obelisk.check(plan, [put])
    assert [(d.code, d.path) for d in result.diagnostics] == [("limit", "_output[0][0]...")]


def test_other_arguments_of_a_call_with_a_deep_one_are_still_checked() -> None:
    plan = [{"_tool": "put", "value": nested(300), "other": 1}]
    result = obelisk.check(plan, [put])
    assert [(d.code, d.path) for d in result.diagnostics] == [
        ("invalid_argument", "args.other"),
        ("limit", "args.value[0][0]..."),
    ]


def test_a_deep_argument_holding_a_reference_is_not_copied_by_the_check() -> None:
    # literals are unescaped (a recursive copy) for validation; an argument with a
    # reference is typed by the graph instead, so the check never walks it
    value: Any = "†input.v"
    for _ in range(700):
        value = [value]
    limits = Limits(max_argument_depth=1000)
    result = obelisk.check([{"_tool": "put", "value": value}], [put], input={"v": 1}, limits=limits)
    assert result.ok and result.diagnostics == ()


# -- max_diagnostics_per_code -----------------------------------------------------------


def test_diagnostics_of_one_code_are_capped_with_a_summary() -> None:
    plan = [{"_tool": "put", "value": f"†state.m{n}"} for n in range(7)]
    result = obelisk.check(plan, [put], limits=Limits(max_diagnostics_per_code=3))
    assert [(d.code, d.call) for d in result.diagnostics] == [
        ("unresolved_reference", None),
        ("unresolved_reference", 0),
        ("unresolved_reference", 1),
        ("unresolved_reference", 2),
    ]
    summary = result.diagnostics[0]
    assert summary.severity == "error"
    assert str(summary) == (
        "error[unresolved_reference]: ... and 4 more unresolved_reference diagnostics (at most "
        "3 of one code are reported; raise Limits.max_diagnostics_per_code to see them all)"
    )
    assert not result.ok


def test_the_cap_counts_each_code_on_its_own_and_keeps_warnings_warnings() -> None:
    warnings = [Diagnostic("write_conflict", "warning", "w", n) for n in range(3)]
    errors = [Diagnostic("unknown_tool", "error", "e", n) for n in range(2)]
    capped = limit_per_code(warnings + errors, 2)
    assert [(d.code, d.severity, d.call) for d in capped] == [
        ("write_conflict", "warning", None),
        ("unknown_tool", "error", 0),
        ("write_conflict", "warning", 0),
        ("unknown_tool", "error", 1),
        ("write_conflict", "warning", 1),
    ]
    assert capped[0].message.startswith("... and 1 more write_conflict diagnostic (")
    assert limit_per_code(errors, 2) == tuple(errors)


def test_parse_plan_errors_are_capped_too() -> None:
    plan = [{"_tool": "put", "value": "†state..x"} for _ in range(150)]
    diagnostics = plan_errors(plan)
    assert len(diagnostics) == 101
    assert diagnostics[0].message.startswith("... and 50 more reference_syntax diagnostics")


# -- integers Python cannot print ---------------------------------------------------------


def test_a_huge_integer_in_plan_text_is_a_located_json_syntax_error() -> None:
    text = '[{"_tool": "put", "value": ' + "7" * (DIGITS + 1) + "}]"
    (found,) = plan_errors(text)
    assert found == Diagnostic(
        "json_syntax",
        "error",
        f"invalid JSON: integer of {DIGITS + 1} digits is too long (Python converts at most "
        f"{DIGITS} digits) at line 1, column 28",
        span=(27, 28),
    )
    assert str(found).splitlines()[2].endswith("^")


@pytest.mark.parametrize(
    ("call", "path"),
    [
        ({"value": HUGE}, "args.value"),
        ({"value": {"deep": [1, HUGE]}}, "args.value.deep[1]"),
        ({"_output": [HUGE], "_outputPath": "†state.x"}, "_output[0]"),
        ({"_id": HUGE}, "_id"),
        ({"_after": [0, HUGE]}, "_after[1]"),
        ({"_note": HUGE}, "_note"),
    ],
    ids=["argument", "nested", "output", "id", "after", "meta"],
)
def test_a_huge_integer_in_a_decoded_plan_is_a_limit_error(call: dict[str, Any], path: str) -> None:
    result = obelisk.check([{"_tool": "put", **call}], [put])
    limits = [d for d in result.diagnostics if d.code == "limit"]
    assert [(d.call, d.path, d.message) for d in limits] == [
        (
            0,
            path,
            f"integer of {DIGITS + 1} digits is too long: Python converts at most {DIGITS} "
            "digits to text",
        )
    ]
    for diagnostic in result.diagnostics:
        str(diagnostic)


def test_huge_integers_in_plan_level_fields_are_shown_short() -> None:
    (found,) = plan_errors({"calls": [], "mode": HUGE})
    assert found.message == (
        f'\'mode\' must be "eager" or "lazy", found <integer of {DIGITS + 1} digits>'
    )
    diagnostics = plan_errors([{"_tool": "put", "_outputMethod": HUGE}])
    assert diagnostics[0].message.endswith(f"found <integer of {DIGITS + 1} digits>")


def test_non_string_keys_of_a_decoded_plan_are_plan_shape_errors() -> None:
    assert [(d.code, d.call, d.path) for d in plan_errors([{1: 2}])] == [("plan_shape", 0, None)]
    (found,) = plan_errors([{"_tool": "put", "value": {"a": {None: 1}}}])
    assert (found.code, found.path, found.message) == (
        "plan_shape",
        "args.value.a",
        "object keys must be strings, found null key",
    )


# -- nesting, NaN and out-of-range numbers in JSON text ---------------------------------------


def test_json_nested_too_deeply_is_located_at_the_deepest_bracket() -> None:
    text = "[" * 100_000 + "]" * 100_000
    (found,) = plan_errors(text)
    assert found.message == (
        "invalid JSON: nested too deeply to decode (100000 levels) at line 1, column 100000"
    )
    assert found.span == (99_999, 100_000)
    caret = str(found).splitlines()
    assert len(caret[1]) < 120 and caret[2].strip() == "^"


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("NaN", "NaN is not valid JSON"),
        ("Infinity", "Infinity is not valid JSON"),
        ("-Infinity", "-Infinity is not valid JSON"),
        ("1e999", "number 1e999 is out of range"),
    ],
)
def test_non_json_numbers_in_plan_text_are_located_json_syntax_errors(
    token: str, message: str
) -> None:
    text = '[{"_tool": "put", "value": "NaN 1e999", "x": ' + token + "}]"
    (found,) = plan_errors(text)
    column = text.index(token, 40) + 1
    assert found.message == f"invalid JSON: {message} at line 1, column {column}"
    assert found.span == (column - 1, column)


def test_loads_strict_keeps_ordinary_json() -> None:
    assert loads_strict('{"a": [1, -2.5e3, "NaN", true, null]}') == {
        "a": [1, -2500.0, "NaN", True, None]
    }
    assert loads_strict("1" * DIGITS) == int("1" * DIGITS)


def test_loads_strict_decodes_at_most_max_decode_depth_levels_on_every_python() -> None:
    assert MAX_DECODE_DEPTH == 512
    deepest = "[" * MAX_DECODE_DEPTH + "]" * MAX_DECODE_DEPTH
    value = loads_strict(deepest)
    for _ in range(MAX_DECODE_DEPTH - 1):
        (value,) = value
    assert value == []
    text = '{"a": ' + "[" * MAX_DECODE_DEPTH + "]" * MAX_DECODE_DEPTH + "}"  # one level more
    with pytest.raises(json.JSONDecodeError) as caught:
        loads_strict(text)
    assert caught.value.msg == "nested too deeply to decode (513 levels)"
    assert caught.value.pos == 6 + MAX_DECODE_DEPTH - 1  # the deepest opening bracket
    brackets_in_strings = '["' + "[{" * 1000 + '"]'
    assert loads_strict(brackets_in_strings) == ["[{" * 1000]


def test_preview_and_decimal_digits() -> None:
    assert decimal_digits(0) == 1 and decimal_digits(-99) == 2 and decimal_digits(10**40) == 41
    assert preview("x" * 100, width=10) == '"xxxxxx...'
    assert preview([nested(200_000)]) == "[...]"  # too deep for json.dumps on any Python
    assert preview({"a": HUGE}) == "{...}"
    assert preview(object()) == '"<object>"'


# -- model answers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            '{"calls": [], "output": ' + "9" * (DIGITS + 1) + "}",
            f"the answer is not JSON: integer of {DIGITS + 1} digits is too long (Python "
            f"converts at most {DIGITS} digits) at line 1 column 25",
        ),
        (
            '{"calls": [], "output": NaN}',
            "the answer is not JSON: NaN is not valid JSON at line 1 column 25",
        ),
        (
            '{"calls": [], "output": ' + "[" * 5000 + "]" * 5000 + "}",
            "the answer is not JSON: nested too deeply to decode (5001 levels) at line 1 "
            "column 5024",
        ),
        (
            {"calls": [{"_tool": "put", "value": HUGE}]},
            f"the answer cannot be used: calls.0.value: integer of {DIGITS + 1} digits is too "
            f"long (Python converts at most {DIGITS} digits)",
        ),
        (
            {"calls": [], "output": nested(300)},
            "the answer cannot be used: output.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0"
            + ".0" * 234
            + ": nested deeper than 259 levels",
        ),
        (
            {"calls": [{"_tool": "put", 3: 1}]},
            "the answer cannot be used: calls.0: object keys must be strings, found int",
        ),
    ],
    ids=["huge-text", "nan", "deep-text", "huge-decoded", "deep-decoded", "int-key"],
)
def test_unusable_answers_are_solution_errors(answer: Any, message: str) -> None:
    with pytest.raises(SolutionError) as caught:
        obelisk.parse_solution(answer)
    assert str(caught.value) == message


def test_a_deep_but_allowed_answer_is_a_solution() -> None:
    solution = obelisk.parse_solution(json.dumps({"calls": [], "output": nested(200)}))
    assert solution.output == nested(200)


# -- rendering what a plan holds --------------------------------------------------------------


def test_argument_names_of_many_digits_sort_without_int_conversion() -> None:
    name = "9" * (DIGITS + 5)
    result = obelisk.check([{"_tool": "put", name: 1, "2": 1, "10": 1}], [put])
    assert [d.path for d in result.diagnostics] == [
        'args["2"]',
        'args["10"]',
        f'args["{name}"]',
    ]


def test_printable_escapes_controls_and_lone_surrogates_only() -> None:
    from obelisk.diagnostics import printable

    assert printable("a\tb\nc\x1b[31m\ud800\u2028 † é") == (
        "a\\tb\\nc\\u001b[31m\\ud800\\u2028 † é"
    )


def test_caret_lines_move_the_caret_past_escapes_and_window_long_lines() -> None:
    from obelisk.diagnostics import caret_lines

    assert caret_lines("†a\tb.x", (4, 6)) == ["†a\\tb.x", "     ^^"]
    assert caret_lines("abc", (3, 3)) == ["abc", "   ^"]
    assert caret_lines("ab\ncd", (1, 9)) == ["ab", " ^"]
    line, caret = caret_lines("x" * 500 + "!" + "y" * 500, (500, 501))
    assert line == "..." + "x" * 25 + "!" + "y" * 74 + "..."
    assert caret == " " * 28 + "^"


def test_copy_json_and_deep_merge_take_any_nesting() -> None:
    from obelisk.json_values import copy_json, deep_merge

    deep = nested(5_000)
    copied = copy_json({"a": deep})
    inner, original = copied["a"], deep
    for _ in range(5_000):  # == itself would recurse too deeply
        assert type(inner) is list and inner is not original and len(inner) == 1
        inner, original = inner[0], original[0]
    assert inner == 1
    left: Any = {"leaf": 1}
    right: Any = {"other": 2}
    for _ in range(3_000):
        left, right = {"k": left}, {"k": right}
    merged = deep_merge(left, right)
    for _ in range(3_000):
        merged = merged["k"]
    assert merged == {"leaf": 1, "other": 2}
    assert deep_merge({"a": {"b": 1}}, {"a": [2]}) == {"a": [2]}
    assert deep_merge([1], {"a": 1}) == {"a": 1}
