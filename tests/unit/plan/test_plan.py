"""Unit tests for parse_plan, Call and Plan (docs/language.md, docs/diagnostics.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from obelisk.diagnostics import Collector, Diagnostic
from obelisk.errors import ObeliskError, PlanError
from obelisk.grammar import Alternatives, Conjunction, Escaped, Field, Index, Reference
from obelisk.interpreter.plan.call import parse_reported_call
from obelisk.interpreter.plan.model import (
    META_KEYS,
    ArgumentExpression,
    Call,
    format_argument_path,
    iter_references,
)
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.plan.plain import plain_call
from obelisk.limits import DEFAULT_LIMITS, Limits


def ref(kind: str, *segments: str | int) -> Reference:
    return Reference(kind, tuple(Index(s) if isinstance(s, int) else Field(s) for s in segments))


def plan_errors(source: Any) -> tuple[Diagnostic, ...]:
    """The diagnostics of the PlanError that parsing ``source`` must raise."""
    with pytest.raises(PlanError) as info:
        parse_plan(source)
    return info.value.diagnostics


def only_error(source: Any) -> Diagnostic:
    diagnostics = plan_errors(source)
    assert len(diagnostics) == 1, diagnostics
    return diagnostics[0]


FETCH = {"_tool": "fetch", "id": "†input.user", "_outputPath": "†state.u"}


# ---------------------------------------------------------------------------
# Input shapes and source types


def check_fetch_call(call: Call, index: int = 0) -> None:
    assert call.index == index
    assert call.tool == "fetch"
    assert call.arguments == {"id": "†input.user"}
    assert call.output_path == "†state.u"
    assert call.target == ref("state", "u")
    assert call.expressions == (ArgumentExpression(("id",), "†input.user", ref("input", "user")),)


@pytest.mark.parametrize(
    ("data", "form", "mode"),
    [
        ([FETCH], "list", None),
        ({"calls": [FETCH]}, "object", None),
        ({"mode": "lazy", "calls": [FETCH]}, "object", "lazy"),
        ({"calls": [FETCH], "mode": "eager"}, "object", "eager"),
        ({"mode": None, "calls": [FETCH]}, "object", None),
        ({"type": "plan", "plan": [FETCH]}, "message", None),
        ({"type": "plan", "plan": [FETCH], "mode": "eager"}, "message", "eager"),
        ({"mode": "lazy", "plan": [FETCH], "type": "plan"}, "message", "lazy"),
    ],
)
@pytest.mark.parametrize("encoding", ["value", "str", "bytes", "bytearray", "bom-bytes"])
def test_input_shapes(data: Any, form: str, mode: str | None, encoding: str) -> None:
    text = json.dumps(data, ensure_ascii=False)
    source: Any = {
        "value": data,
        "str": text,
        "bytes": text.encode("utf-8"),
        "bytearray": bytearray(text.encode("utf-8")),
        "bom-bytes": b"\xef\xbb\xbf" + text.encode("utf-8"),
    }[encoding]
    plan = parse_plan(source)
    assert plan.form == form
    assert plan.mode == mode
    assert len(plan) == 1
    assert plan.diagnostics == ()
    check_fetch_call(plan[0])


def test_ascii_escaped_json_text() -> None:
    plan = parse_plan(json.dumps([FETCH], ensure_ascii=True))
    check_fetch_call(plan.calls[0])


def test_empty_plans() -> None:
    assert parse_plan("[]").calls == ()
    assert len(parse_plan({"calls": []})) == 0
    assert parse_plan({"type": "plan", "plan": []}).form == "message"


def test_a_plan_passed_in_is_returned_unchanged() -> None:
    plan = parse_plan([FETCH])
    assert parse_plan(plan) is plan


def test_plan_sequence_protocol() -> None:
    plan = parse_plan([{"_tool": "a"}, {"_tool": "b"}, {"_tool": "c"}])
    assert len(plan) == 3
    assert [call.tool for call in plan] == ["a", "b", "c"]
    assert plan[1].tool == "b"
    assert plan[-1].index == 2
    assert [call.index for call in plan.calls] == [0, 1, 2]


# ---------------------------------------------------------------------------
# Expressions in arguments


def test_nested_expressions_are_found_with_exact_paths() -> None:
    call = parse_plan(
        [
            {
                "_tool": "t",
                "customer": {"id": "†state.customer.id", "name": "plain"},
                "items": ["x", "†state.item || †input.item", {"deep": [1, "†data.a[0]"]}],
                "a b": "†state['a b']",
                "1": "†input",
                "note": "††literal",
                "count": 5,
                "flag": None,
                "text": "no dagger † here",
            }
        ]
    )[0]
    got = [(e.path, e.argument_path, e.text, e.expression) for e in call.expressions]
    assert got == [
        (
            ("customer", "id"),
            "args.customer.id",
            "†state.customer.id",
            ref("state", "customer", "id"),
        ),
        (
            ("items", 1),
            "args.items[1]",
            "†state.item || †input.item",
            Alternatives((ref("state", "item"), ref("input", "item"))),
        ),
        (("items", 2, "deep", 1), "args.items[2].deep[1]", "†data.a[0]", ref("data", "a", 0)),
        (("a b",), 'args["a b"]', "†state['a b']", ref("state", "a b")),
        (("1",), 'args["1"]', "†input", ref("input")),
        (("note",), "args.note", "††literal", Escaped("literal")),
    ]
    assert [e.is_whole_argument for e in call.expressions] == [
        False,
        False,
        False,
        True,
        True,
        True,
    ]


def test_escaped_literal_is_kept_raw_in_arguments() -> None:
    call = parse_plan([{"_tool": "t", "note": "††x", "deep": ["††"]}])[0]
    assert call.arguments == {"note": "††x", "deep": ["††"]}
    assert [e.expression for e in call.expressions] == [Escaped("x"), Escaped("")]
    assert iter_references(call.expressions[0].expression) == ()


def test_meta_values_are_not_searched_for_expressions() -> None:
    call = parse_plan(
        [
            {
                "_tool": "t",
                "_output": {"v": "†state..broken"},
                "_reasoningForCall": "†not an expression",
                "_custom": ["†state..broken"],
                "_instance": "†weird",
            }
        ]
    )[0]
    assert call.expressions == ()
    assert call.output == {"v": "†state..broken"}
    assert call.reasoning == "†not an expression"
    assert call.instance == "†weird"


def test_iter_references() -> None:
    assert iter_references(Escaped("x")) == ()
    a, b, c = ref("a"), ref("b"), ref("c")
    assert iter_references(a) == (a,)
    assert iter_references(Alternatives((Conjunction((a, b)), c))) == (a, b, c)


@pytest.mark.parametrize(
    ("parts", "root", "text"),
    [
        ((), "args", "args"),
        (("customer", "id"), "args", "args.customer.id"),
        (("items", 1), "args", "args.items[1]"),
        ((0, "x"), "args", "args[0].x"),
        (("a b",), "args", 'args["a b"]'),
        (("1",), "args", 'args["1"]'),
        (("é",), "args", "args.é"),
        (('say "hi"',), "args", 'args["say \\"hi\\""]'),
        (("first-name",), "args", "args.first-name"),
        (("a",), "_output", "_output.a"),
    ],
)
def test_format_argument_path(parts: tuple[str | int, ...], root: str, text: str) -> None:
    assert format_argument_path(parts, root) == text


# ---------------------------------------------------------------------------
# Meta-properties


def test_every_meta_property_is_typed() -> None:
    call = parse_plan(
        [
            {
                "_tool": "issueRefund",
                "_id": "refund-1",
                "amount": 5,
                "_outputPath": "†state.receipt || †state.error",
                "_outputMethod": "merge",
                "_output": {"ok": True},
                "_instance": "a",
                "_reasoningForCall": "the customer asked",
            }
        ]
    )[0]
    assert call.tool == "issueRefund"
    assert call.id == "refund-1"
    assert call.arguments == {"amount": 5}
    assert call.output_path == "†state.receipt || †state.error"
    assert call.target == Alternatives((ref("state", "receipt"), ref("state", "error")))
    assert call.output_method == "merge"
    assert call.has_output is True
    assert call.output == {"ok": True}
    assert call.instance == "a"
    assert call.reasoning == "the customer asked"
    assert call.extra == {}
    assert call.expressions == ()


def test_meta_defaults() -> None:
    call = parse_plan([{"_tool": "t"}])[0]
    assert call.arguments == {}
    assert call.output_path is None
    assert call.target is None
    assert call.output_method == "set"
    assert call.has_output is False
    assert call.output is None
    assert call.instance is None
    assert call.id is None
    assert call.reasoning is None
    assert call.extra == {}
    assert call.alternatives == ()


@pytest.mark.parametrize("method", ["set", "merge", "assign", "push", "concat", "erase"])
def test_every_output_method(method: str) -> None:
    assert parse_plan([{"_tool": "t", "_outputMethod": method}])[0].output_method == method


@pytest.mark.parametrize("tool", ["?", "fetch?", "a b", "†state.x", "工具"])
def test_any_non_empty_tool_name_makes_a_call(tool: str) -> None:
    # tool names are checked against the registry later (unknown_tool), not here;
    # "?" must not be mistaken for the parser's own placeholder for a missing name
    plan = parse_plan([{"_tool": tool, "x": 1}, {"_tool": "next"}])
    assert [(call.index, call.tool) for call in plan] == [(0, tool), (1, "next")]
    assert plan[0].arguments == {"x": 1}
    assert plan.diagnostics == ()


def test_integer_id() -> None:
    call = parse_plan([{"_tool": "t", "_id": 7}])[0]
    assert call.id == 7
    assert call.label == "#0 t (7)"


def test_output_null_is_not_absent() -> None:
    with_null, without = parse_plan(
        [{"_tool": "latent", "_output": None}, {"_tool": "latent"}]
    ).calls
    assert (with_null.has_output, with_null.output) == (True, None)
    assert (without.has_output, without.output) == (False, None)
    assert with_null.to_data() == {"_tool": "latent", "_output": None}
    assert without.to_data() == {"_tool": "latent"}


def test_falsy_outputs_are_kept() -> None:
    calls = parse_plan([{"_tool": "t", "_output": v} for v in (0, False, "", [], {})]).calls
    assert [(c.has_output, c.output) for c in calls] == [
        (True, 0),
        (True, False),
        (True, ""),
        (True, []),
        (True, {}),
    ]


def test_unknown_meta_is_a_warning_and_is_written_back() -> None:
    plan = parse_plan(
        '[{"_tool": "t", "x": 1, "_priority": 3, "_note": {"a": "†state..x"}}, {"_tool": "u"}]'
    )
    call = plan[0]
    assert call.extra == {"_priority": 3, "_note": {"a": "†state..x"}}
    assert call.arguments == {"x": 1}
    assert call.expressions == ()
    # sorted by call, then path: _note before _priority
    assert plan.diagnostics == (
        Diagnostic(
            "unknown_meta",
            "warning",
            "unknown meta-property '_note' (kept, not interpreted)",
            call=0,
            path="_note",
        ),
        Diagnostic(
            "unknown_meta",
            "warning",
            "unknown meta-property '_priority' (kept, not interpreted)",
            call=0,
            path="_priority",
        ),
    )
    assert [d.label for d in plan.diagnostics] == ["#0 t", "#0 t"]
    assert str(plan.diagnostics[1]) == (
        "warning[unknown_meta] #0 t, _priority: "
        "unknown meta-property '_priority' (kept, not interpreted)"
    )
    assert json.loads(plan.to_json()) == [
        {"_tool": "t", "x": 1, "_priority": 3, "_note": {"a": "†state..x"}},
        {"_tool": "u"},
    ]


def test_meta_keys_constant() -> None:
    assert META_KEYS == (
        "_tool",
        "_outputPath",
        "_outputMethod",
        "_output",
        "_instance",
        "_id",
        "_reasoningForCall",
        "_after",
        "_status",  # issue 27: a plan message's status, ignored in an answer
        "_tools",  # issue 28: the tools a delegate call's child loop may use
    )


def test_label_with_and_without_id() -> None:
    plan = parse_plan(
        [
            {"_tool": "a"},
            {"_tool": "b"},
            {"_tool": "c", "_id": "third"},
            {"_tool": "issueRefund"},
            {"_tool": "issueRefund", "_id": "refund-1"},
        ]
    )
    assert [call.label for call in plan] == [
        "#0 a",
        "#1 b",
        "#2 c (third)",
        "#3 issueRefund",
        "#4 issueRefund (refund-1)",
    ]


@pytest.mark.parametrize(
    ("output_path", "alternatives"),
    [
        ("†state.a", ((ref("state", "a"),),)),
        ("†state.a && †data.b", ((ref("state", "a"), ref("data", "b")),)),
        ("†state.a || †state.b", ((ref("state", "a"),), (ref("state", "b"),))),
        (
            "†state.a || †state.b && †data.c",
            ((ref("state", "a"),), (ref("state", "b"), ref("data", "c"))),
        ),
        (
            "†state.r[0] && †state.s || †state.e",
            ((ref("state", "r", 0), ref("state", "s")), (ref("state", "e"),)),
        ),
    ],
)
def test_call_alternatives(
    output_path: str, alternatives: tuple[tuple[Reference, ...], ...]
) -> None:
    call = parse_plan([{"_tool": "t", "_outputPath": output_path}])[0]
    assert call.alternatives == alternatives


def test_calls_and_plans_are_frozen() -> None:
    plan = parse_plan([{"_tool": "t"}])
    with pytest.raises(ValidationError):
        plan.calls[0].tool = "u"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        plan.mode = "lazy"  # type: ignore[misc]


# ---------------------------------------------------------------------------
# Serialization


FULL_CALL = {
    "_tool": "issueRefund",
    "_id": 3,
    "customer": {"id": "†state.customer.id", "tags": ["††vip"]},
    "amount": 12.5,
    "_outputPath": "†state.receipt || †state.error",
    "_outputMethod": "push",
    "_output": None,
    "_instance": "b",
    "_reasoningForCall": "why not",
    "_extra": [1, 2],
}


@pytest.mark.parametrize(
    "data",
    [
        [FULL_CALL, {"_tool": "noop"}],
        {"calls": [FULL_CALL]},
        {"mode": "lazy", "calls": [FULL_CALL]},
        {"type": "plan", "plan": [FULL_CALL]},
        {"type": "plan", "plan": [FULL_CALL], "mode": "eager"},
    ],
)
def test_round_trip_in_each_shape(data: Any) -> None:
    plan = parse_plan(data)
    assert plan.to_data() == data
    assert json.loads(plan.to_json()) == data
    assert json.loads(plan.to_json(indent=2)) == data
    assert parse_plan(plan.to_json()) == plan
    assert parse_plan(plan.to_data()) == plan


def test_to_json_exact_text() -> None:
    plan = parse_plan(
        '[{"_outputPath": "†state.u", "id": "†input.user", "_id": "f", "_tool": "fetch"}]'
    )
    # meta first (_tool, _id), then arguments, then the other meta; daggers unescaped
    assert plan.to_json() == (
        '[{"_tool": "fetch", "_id": "f", "id": "†input.user", "_outputPath": "†state.u"}]'
    )
    assert parse_plan({"mode": "lazy", "calls": []}).to_json() == '{"calls": [], "mode": "lazy"}'
    assert parse_plan({"type": "plan", "plan": []}).to_json() == '{"type": "plan", "plan": []}'
    assert parse_plan("[]").to_json(indent=2) == "[]"


def test_normalised_values_still_round_trip_as_plans() -> None:
    # explicit defaults and null meta-values mean the same as absent ones, and
    # are written back as they were, so the JSON round trip is exact
    written = [
        {
            "_tool": "t",
            "_outputMethod": "set",
            "_outputPath": None,
            "_id": None,
            "_instance": None,
            "_reasoningForCall": None,
        }
    ]
    plan = parse_plan(written)
    bare = parse_plan([{"_tool": "t"}])[0]
    call = plan[0]
    for field in ("output_method", "output_path", "id", "instance", "reasoning", "target"):
        assert getattr(call, field) == getattr(bare, field)
    assert json.loads(plan.to_json()) == written
    assert bare.to_data() == {"_tool": "t"}
    assert parse_plan(plan.to_json()) == plan


# ---------------------------------------------------------------------------
# Errors: JSON and encoding


def test_bad_json_reports_line_column_and_span() -> None:
    text = '[{"_tool": "a" "x": 1}]'
    # the unexpected '"' of "x" is at offset 15, column 16
    assert only_error(text) == Diagnostic(
        "json_syntax",
        "error",
        "invalid JSON: Expecting ',' delimiter at line 1, column 16",
        span=(15, 16),
    )


def test_bad_json_on_a_later_line() -> None:
    text = '[\n  {"_tool": "a"}\n  {"_tool": "b"}\n]'
    # line 3 starts at offset 19; its '{' is at column 3, offset 21
    error = only_error(text)
    assert error == Diagnostic(
        "json_syntax",
        "error",
        "invalid JSON: Expecting ',' delimiter at line 3, column 3",
        span=(21, 22),
    )
    assert error.source == text
    assert str(error) == (
        "error[json_syntax]: invalid JSON: Expecting ',' delimiter at line 3, column 3\n"
        '      {"_tool": "b"}\n'
        "      ^"
    )


def test_bad_json_bytes_spans_count_characters() -> None:
    text = '["†", "é" 1]'
    # the unexpected '1' is character 10 (byte 13): spans are character offsets
    assert only_error(text.encode("utf-8")) == Diagnostic(
        "json_syntax",
        "error",
        "invalid JSON: Expecting ',' delimiter at line 1, column 11",
        span=(10, 11),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[", "invalid JSON: Expecting value at line 1, column 2"),
        ('[{"_tool": "a"}', "invalid JSON: Expecting ',' delimiter at line 1, column 16"),
    ],
)
def test_json_error_at_the_end_has_an_empty_span_inside_the_text(text: str, message: str) -> None:
    # like ReferenceSyntaxError at the end of an expression: (len, len), not past the text
    assert only_error(text) == Diagnostic(
        "json_syntax", "error", message, span=(len(text), len(text))
    )


def test_invalid_utf8() -> None:
    assert only_error(b'[{"_tool": "a\xff"}]') == Diagnostic(
        "json_syntax", "error", "plan is not valid UTF-8: invalid start byte at byte 13"
    )
    assert only_error(bytearray(b"[\xc3]")) == Diagnostic(
        "json_syntax", "error", "plan is not valid UTF-8: invalid continuation byte at byte 1"
    )


def test_invalid_utf8_after_a_bom_counts_bytes_of_the_input() -> None:
    # the bad byte is the 5th byte of what the caller passed: offset 4
    assert only_error(b"\xef\xbb\xbf[\xff]") == Diagnostic(
        "json_syntax", "error", "plan is not valid UTF-8: invalid start byte at byte 4"
    )


def test_deeply_nested_json_is_a_plan_error() -> None:
    # "no other exception escapes" (parse_plan docstring); json raises RecursionError here
    diagnostics = plan_errors("[" * 100_000 + "]" * 100_000)
    assert [d.code for d in diagnostics] == ["json_syntax"]


def test_deeply_nested_argument_value_does_not_escape_as_recursion_error() -> None:
    value: list[Any] = []
    for _ in range(5_000):
        value = [value]
    try:
        plan = parse_plan([{"_tool": "t", "x": value}])
    except PlanError:
        return
    assert plan[0].expressions == ()


# ---------------------------------------------------------------------------
# Errors: plan shape


SHAPE = "a plan must be an array of calls or an object with 'calls', found "


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('"hello"', SHAPE + "a string"),
        ("42", SHAPE + "a number"),
        ("4.5", SHAPE + "a number"),
        ("null", SHAPE + "null"),
        ("true", SHAPE + "a boolean"),
        ("{}", "the plan object has no 'calls' array"),
        ({"mode": "eager"}, "the plan object has no 'calls' array"),
        ({"type": "plan"}, "the plan object has no 'plan' array"),
        ({"calls": {"_tool": "a"}}, "'calls' must be an array of calls, found an object"),
        ({"calls": None}, "'calls' must be an array of calls, found null"),
        ({"type": "plan", "plan": "x"}, "'plan' must be an array of calls, found a string"),
        ({"plan": []}, 'a plan message must have "type": "plan"'),
        ({"type": "chat", "plan": []}, 'a plan message must have "type": "plan"'),
        (
            {"calls": [], "steps": []},
            "unexpected key 'steps' in the plan; expected 'calls', 'mode'",
        ),
        (
            {"type": "plan", "plan": [], "calls": []},
            "unexpected key 'calls' in the plan; expected 'mode', 'plan', 'type'",
        ),
        ({"mode": "fast", "calls": []}, '\'mode\' must be "eager" or "lazy", found "fast"'),
        ({"mode": 1, "calls": []}, '\'mode\' must be "eager" or "lazy", found 1'),
        (
            {"type": "plan", "plan": [], "mode": "Eager"},
            '\'mode\' must be "eager" or "lazy", found "Eager"',
        ),
    ],
)
def test_plan_level_shape_errors(source: Any, message: str) -> None:
    assert only_error(source) == Diagnostic("plan_shape", "error", message)


def test_several_plan_level_errors_together() -> None:
    assert plan_errors({"steps": 1, "mode": "fast", "calls": 3}) == (
        Diagnostic(
            "plan_shape", "error", "unexpected key 'steps' in the plan; expected 'calls', 'mode'"
        ),
        Diagnostic("plan_shape", "error", '\'mode\' must be "eager" or "lazy", found "fast"'),
        Diagnostic("plan_shape", "error", "'calls' must be an array of calls, found a number"),
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (1, "a call must be a JSON object, found a number"),
        ("†state.x", "a call must be a JSON object, found a string"),
        (None, "a call must be a JSON object, found null"),
        ([{"_tool": "t"}], "a call must be a JSON object, found an array"),
    ],
)
def test_call_not_an_object(call: Any, message: str) -> None:
    error = only_error([{"_tool": "ok"}, call])
    assert error == Diagnostic("plan_shape", "error", message, call=1)
    assert error.label == "#1"
    assert error.headline() == f"error[plan_shape] #1: {message}"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({"x": 1}, "'_tool' must name a tool; it is missing"),
        ({"_tool": ""}, "'_tool' must name a tool; found an empty string"),
        ({"_tool": 5}, "'_tool' must name a tool; found a number"),
        ({"_tool": ["a"]}, "'_tool' must name a tool; found an array"),
        ({"_tool": True}, "'_tool' must name a tool; found a boolean"),
    ],
)
def test_bad_tool(call: Any, message: str) -> None:
    assert only_error([call]) == Diagnostic("plan_shape", "error", message, call=0, path="_tool")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "_outputPath",
            5,
            "'_outputPath' must be a string such as \"†state.result\", found a number",
        ),
        (
            "_outputPath",
            ["†state.a"],
            "'_outputPath' must be a string such as \"†state.result\", found an array",
        ),
        (
            "_outputMethod",
            "replace",
            "'_outputMethod' must be one of set, merge, assign, push, concat, erase; "
            'found "replace"',
        ),
        (
            "_outputMethod",
            2,
            "'_outputMethod' must be one of set, merge, assign, push, concat, erase; found 2",
        ),
        ("_instance", 3, "'_instance' must be a string, found a number"),
        ("_instance", {"id": "a"}, "'_instance' must be a string, found an object"),
        ("_id", True, "'_id' must be a string or an integer, found a boolean"),
        ("_id", 1.5, "'_id' must be a string or an integer, found a number"),
        ("_id", ["x"], "'_id' must be a string or an integer, found an array"),
        ("_reasoningForCall", 5, "'_reasoningForCall' must be a string, found a number"),
    ],
)
def test_bad_meta_values(key: str, value: Any, message: str) -> None:
    error = only_error([{"_tool": "t"}, {"_tool": "save", key: value}])
    assert error == Diagnostic("plan_shape", "error", message, call=1, path=key)
    assert error.label == "#1 save"
    assert error.span is None


@pytest.mark.parametrize(
    ("output_path", "message", "span"),
    [
        (
            "state.x",
            "an output path must be an expression starting with '†', such as '†state.result'",
            (0, 1),
        ),
        (
            "",
            "an output path must be an expression starting with '†', such as '†state.result'",
            (0, 0),
        ),
        ("†state.items[*]", "cannot write through a wildcard '[*]'", (12, 15)),
        ("†state.a || †state.b[*].c", "cannot write through a wildcard '[*]'", (20, 23)),
        ("††x", "an output path cannot be an escaped literal ('††')", (0, 2)),
        ("†state.a | †state.b", "found '|'; use '||' for alternatives", (9, 10)),
        ("†state.a ||", "expected '†' after '||', found the end of the expression", (11, 11)),
    ],
)
def test_bad_output_path(output_path: str, message: str, span: tuple[int, int]) -> None:
    error = only_error([{"_tool": "save", "_outputPath": output_path}])
    assert error == Diagnostic(
        "reference_syntax", "error", message, call=0, path="_outputPath", span=span
    )
    assert error.source == output_path
    assert error.label == "#0 save"


def test_duplicate_ids() -> None:
    diagnostics = plan_errors(
        [
            {"_tool": "a", "_id": "x"},
            {"_tool": "b"},
            {"_tool": "c", "_id": "x"},
            {"_tool": "d", "_id": 1},
            {"_tool": "e", "_id": "1"},  # a string and an integer are different ids
            {"_tool": "f", "_id": 1},
        ]
    )
    assert diagnostics == (
        Diagnostic(
            "plan_shape", "error", 'duplicate _id "x": #0 a (x) has it too', call=2, path="_id"
        ),
        Diagnostic(
            "plan_shape", "error", "duplicate _id 1: #3 d (1) has it too", call=5, path="_id"
        ),
    )
    assert [d.label for d in diagnostics] == ["#2 c (x)", "#5 f (1)"]


def test_broken_nested_reference() -> None:
    error = only_error([{"_tool": "search", "q": {"terms": ["ok", "†state.a b"]}}])
    assert error == Diagnostic(
        "reference_syntax",
        "error",
        "whitespace is allowed only around '||' and '&&'",
        call=0,
        path="args.q.terms[1]",
        span=(8, 9),
    )
    assert error.source == "†state.a b"
    assert error.loc == (0, "args.q.terms[1]")
    assert error.to_dict() == {
        "code": "reference_syntax",
        "severity": "error",
        "call": 0,
        "path": "args.q.terms[1]",
        "span": [8, 9],
        "message": "whitespace is allowed only around '||' and '&&'",
    }


def test_broken_reference_under_a_quoted_argument_key() -> None:
    error = only_error([{"_tool": "t", "a b": ["†state[]"]}])
    assert (error.path, error.span, error.message) == (
        'args["a b"][0]',
        (7, 8),
        "empty brackets: write an index, a quoted key or '*' inside",
    )


def test_all_problems_are_reported_together_in_order() -> None:
    diagnostics = plan_errors(
        {
            "calls": [
                {"_tool": "a", "x": "†state."},
                "oops",
                {"_tool": "ok", "_keep": 1},
                {"y": 1},
                {"_tool": "d", "_outputPath": "state.x"},
                {"_tool": "e", "z": ["†state.a", "†state.a.*"]},
                {"_tool": "e2", "_outputMethod": "upsert"},
                {"_tool": "f", "_id": 1},
                {"_tool": "g", "_id": 1},
            ],
            "extra": True,
        }
    )
    assert diagnostics == (
        Diagnostic(
            "plan_shape", "error", "unexpected key 'extra' in the plan; expected 'calls', 'mode'"
        ),
        Diagnostic(
            "reference_syntax",
            "error",
            "expected a name or an integer after '.', found the end of the expression",
            call=0,
            path="args.x",
            span=(7, 7),
        ),
        Diagnostic("plan_shape", "error", "a call must be a JSON object, found a string", call=1),
        Diagnostic(
            "unknown_meta",
            "warning",
            "unknown meta-property '_keep' (kept, not interpreted)",
            call=2,
            path="_keep",
        ),
        Diagnostic(
            "plan_shape", "error", "'_tool' must name a tool; it is missing", call=3, path="_tool"
        ),
        Diagnostic(
            "reference_syntax",
            "error",
            "an output path must be an expression starting with '†', such as '†state.result'",
            call=4,
            path="_outputPath",
            span=(0, 1),
        ),
        Diagnostic(
            "reference_syntax",
            "error",
            "a wildcard is written '[*]', not '.*'",
            call=5,
            path="args.z[1]",
            span=(9, 10),
        ),
        Diagnostic(
            "plan_shape",
            "error",
            "'_outputMethod' must be one of set, merge, assign, push, concat, erase; "
            'found "upsert"',
            call=6,
            path="_outputMethod",
        ),
        Diagnostic(
            "plan_shape", "error", "duplicate _id 1: #7 f (1) has it too", call=8, path="_id"
        ),
    )


def test_plan_error_rendering() -> None:
    text = json.dumps(
        [
            {"_tool": "fetch", "id": "†input.user id"},
            {"_tool": "save", "_outputPath": "†state.items[*]"},
            {"_tool": "x", "_bogus": 1, "_outputMethod": "upsert"},
        ],
        ensure_ascii=False,
    )
    with pytest.raises(PlanError) as info:
        parse_plan(text)
    error = info.value
    assert str(error) == "\n".join(
        [
            "plan has 3 errors",
            "error[reference_syntax] #0 fetch, args.id: "
            "whitespace is allowed only around '||' and '&&'",
            "    †input.user id",
            "               ^",
            "error[reference_syntax] #1 save, _outputPath: cannot write through a wildcard '[*]'",
            "    †state.items[*]",
            "                ^^^",
            "warning[unknown_meta] #2 x, _bogus: "
            "unknown meta-property '_bogus' (kept, not interpreted)",
            "error[plan_shape] #2 x, _outputMethod: '_outputMethod' must be one of "
            'set, merge, assign, push, concat, erase; found "upsert"',
        ]
    )
    assert [d.code for d in error.errors] == ["reference_syntax", "reference_syntax", "plan_shape"]
    assert len(error.diagnostics) == 4
    assert error.code == "plan_error"
    assert isinstance(error, ObeliskError)


def test_single_error_rendering_uses_singular() -> None:
    with pytest.raises(PlanError) as info:
        parse_plan("7")
    assert str(info.value) == (
        "plan has 1 error\n"
        "error[plan_shape]: a plan must be an array of calls or an object with 'calls', "
        "found a number"
    )


def test_warnings_use_the_same_stable_order_as_errors() -> None:
    # PlanError sorts diagnostics by (call, path, code); a plan with only
    # warnings should list them in that same order
    data: list[Any] = [{"_tool": "t", "_zeta": 1, "_alpha": 2}]
    assert [d.path for d in parse_plan(data).diagnostics] == ["_alpha", "_zeta"]
    errors = plan_errors([*data, {"_tool": ""}])
    assert [(d.call, d.path) for d in errors] == [(0, "_alpha"), (0, "_zeta"), (1, "_tool")]


def test_errors_inside_one_list_come_in_list_order() -> None:
    # "by argument path": args.x[2] comes before args.x[10], as in the document
    items: list[Any] = ["ok"] * 11
    items[2] = items[10] = "†state..x"
    diagnostics = plan_errors([{"_tool": "t", "x": items}])
    assert [d.path for d in diagnostics] == ["args.x[2]", "args.x[10]"]


def test_warnings_alone_do_not_raise() -> None:
    plan = parse_plan([{"_tool": "t", "_a": 1}, {"_tool": "u", "_b": 2}])
    assert [d.severity for d in plan.diagnostics] == ["warning", "warning"]
    assert [d.call for d in plan.diagnostics] == [0, 1]


def test_unknown_meta_key_with_unicode_digits_sorts_without_error() -> None:
    # found by Hypothesis: '²' is str.isdigit() but not int()-able
    plan = parse_plan([{"_tool": "fetch", "_0²": None, "_1": 1}])
    assert [d.path for d in plan.diagnostics] == ["_0²", "_1"]


# ---------------------------------------------------------------------------
# The fast path for calls with nothing to report (plan/plain.py)

_PLAIN_CALLS = [
    FETCH,
    {"_tool": "t"},
    {"_tool": "t", "a": 1, "b": 2.5, "c": True, "d": None, "e": "text", "f": 10**20},
    {"_tool": "t", "a": {"b": ["†state.x", "††lit", {"c": "†input.y[0]"}]}, "z": "†state.q"},
    {"_tool": "t", "a": "†state.a || †state.b", "b": "†state.c && †input.d", "e": "††x"},
    {"_tool": "t", "_outputPath": "†state.ok || †state.failed", "_output": {"a": [1]}},
    {"_tool": "t", "_outputPath": "†state.a && †state.b", "_outputMethod": "push"},
    {"_tool": "t", "_outputPath": None, "_outputMethod": None, "_id": None, "_after": None},
    {"_id": 7, "_tool": "t", "_after": ["x", 0], "_instance": "i", "_reasoningForCall": "r"},
    {"_reasoningForCall": None, "_instance": None, "_tool": "t", "_output": None, "_id": "c"},
]


@pytest.mark.parametrize("raw", _PLAIN_CALLS)
def test_the_fast_path_builds_the_call_the_general_parser_builds(raw: dict[str, Any]) -> None:
    out = Collector()
    general = parse_reported_call(raw, 3, out, False, DEFAULT_LIMITS)
    fast = plain_call(raw, 3, DEFAULT_LIMITS)
    assert out.diagnostics == [] and general is not None and fast is not None
    assert repr(fast) == repr(general)  # every field, dict orders too
    assert list(fast.written_meta.items()) == list(general.written_meta.items())


@pytest.mark.parametrize(
    "raw",
    [
        {"_tool": ""},
        {"_tool": "t", 1: 2},
        {"_tool": "t", "_extra": 1},
        {"_tool": "t", "a": "†state."},
        {"_tool": "t", "a": "†state" + ".x" * 65},
        {"_tool": "t", "a": [[[1]]]},
        {"_tool": "t", "a": 10**5000},
        {"_tool": "t", "_output": {"a": 10**5000}},
        {"_tool": "t", "_outputPath": "state.x"},
        {"_tool": "t", "_outputPath": "††x"},
        {"_tool": "t", "_outputPath": "†state.x[*]"},
        {"_tool": "t", "_outputPath": 3},
        {"_tool": "t", "_outputMethod": "add"},
        {"_tool": "t", "_instance": 1},
        {"_tool": "t", "_reasoningForCall": []},
        {"_tool": "t", "_id": True},
        {"_tool": "t", "_after": [None]},
        {"_tool": "t", "_after": "x"},
    ],
)
def test_the_fast_path_leaves_every_problem_to_the_general_parser(raw: dict[Any, Any]) -> None:
    limits = Limits(max_argument_depth=2)
    out = Collector()
    parse_reported_call(raw, 0, out, False, limits)
    assert out.diagnostics  # an error or a warning ...
    assert plain_call(raw, 0, limits) is None  # ... that the fast path does not hide
