r"""JSON Schema ``pattern`` and ``patternProperties`` run in linear time (issue 25,
point 5; docs/limits.md, "Patterns in schemas").

With Python's ``re`` (jsonschema's own matcher) ``^(\w+\s?)*$`` against ``"a" * n +
"!"`` takes time doubling with every character (3 s at 27 characters on the
reporter's machine), and ``(a+)+$`` the same; the inputs here would take hours.
"""

from __future__ import annotations

import time
from typing import Any

import obelisk
from obelisk.interpreter.tools.patterns import FALLBACK_SECONDS, pattern_matches
from obelisk.stdlib_tools import default_registry

WORDS = r"^(\w+\s?)*$"  # from a tool description found in the wild


def _tool(schema: dict[str, Any], function: Any = None) -> obelisk.Tool:
    spec = {"name": "tag", "parameters": {"type": "object", "properties": {"label": schema}}}
    return obelisk.Tool.from_schema(spec, function=function)


def _check_seconds(tool: obelisk.Tool, value: Any) -> tuple[float, list[str]]:
    started = time.perf_counter()
    result = obelisk.check([{"_tool": "tag", "label": value}], obelisk.Registry([tool]))
    return time.perf_counter() - started, [d.message for d in result.diagnostics]


def test_a_catastrophic_pattern_checks_in_linear_time() -> None:
    tool = _tool({"type": "string", "pattern": WORDS})
    for length in (27, 40, 200):
        seconds, messages = _check_seconds(tool, "a" * (length - 1) + "!")
        assert seconds < 1.0, (length, seconds)
        assert len(messages) == 1 and "does not match" in messages[0]
    assert _check_seconds(tool, "two words")[1] == []


def test_a_catastrophic_pattern_is_matched_in_linear_time_at_run_time() -> None:
    tool = _tool({"type": "string", "pattern": WORDS}, function=lambda label=None: label)
    echo = obelisk.Tool.from_schema(
        {"name": "echo", "parameters": {"type": "object", "properties": {"text": {}}}},
        function=lambda text=None: text,
    )
    plan = [
        {"_tool": "echo", "text": "a" * 59 + "!", "_outputPath": "†state.text"},
        {"_tool": "tag", "label": "†state.text", "_outputPath": "†state.tag"},
    ]
    started = time.perf_counter()
    result = obelisk.run_sync(plan, [echo, tool])
    assert time.perf_counter() - started < 2.0
    assert "tag" not in result.state
    assert result.calls[1].error is not None
    assert "does not match" in str(result.calls[1].error)


def test_pattern_properties_and_additional_properties_match_keys_in_linear_time() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"(a+)+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    key = "a" * 59 + "!"
    seconds, messages = _check_seconds(_tool(schema), {key: 1, "aaa": "x"})
    assert seconds < 1.0
    assert any("does not match any of the regexes" in m for m in messages)
    assert any("expected an integer" in m for m in messages)


def test_json_validate_with_a_catastrophic_pattern_finishes_fast() -> None:
    validate = default_registry()["json_validate"]
    started = time.perf_counter()
    report = validate("a" * 5000 + "!", {"pattern": "(a+)+$"})
    assert time.perf_counter() - started < 1.0
    assert report["valid"] is False
    assert validate("aaa", {"pattern": "(a+)+$"}) == {"valid": True, "errors": []}


def test_a_pattern_re2_lacks_features_for_is_matched_by_re_under_a_time_bound() -> None:
    tool = _tool({"type": "string", "pattern": r"^(?!x)(\w+\s?)*$"})
    assert _check_seconds(tool, "ok words")[1] == []
    assert len(_check_seconds(tool, "xo")[1]) == 1
    seconds, messages = _check_seconds(tool, "a" * 59 + "!")
    assert seconds < FALLBACK_SECONDS + 2.0
    assert len(messages) == 1
    assert "RE2 cannot run" in messages[0] and "lookahead" in messages[0]
    assert f"did not finish matching it within {FALLBACK_SECONDS:g} s" in messages[0]


def test_backreferences_fall_back_to_re() -> None:
    assert pattern_matches(r"^(a+)-\1$", "aa-aa") is True
    assert pattern_matches(r"^(a+)-\1$", "aa-a") is False
    assert pattern_matches(r"x\Z", "ax") is True  # \Z: RE2 writes \z


PATTERNS = [
    r"^\d+$", r"^\D+$", r"^\w+$", r"\W", r"^\s*$", r"\S", r"^[\w.-]+@[\w-]+$",
    r"[\d\s]+", r"^[^\d]+$", r"x\Z", r"^a$", r"^\u00e9+$", r"[]a]", r"\\d", r"^(\w+\s?)*$",
    r"(?i)^ab$", r"(?m)^b$", r"^\$\d+$",
]  # fmt: skip
TEXTS = [
    "", "123", "١٢٣", "abc", "é", "éé", "a_b", "a\n", "a\nb\n", " \t", "\u00a0", "\u2003", "\x1c",
    "Ab", "AB", "a", "x", "x\n", "]", "\\d", "two words", "a.b@c-d", "a@b", "$12", "\u0660", "½",
]  # fmt: skip


def test_patterns_keep_the_meaning_python_re_gives_them() -> None:
    """jsonschema matched with re.search; RE2 (after translate) agrees on every pair,
    Unicode classes and a $ before a final newline included."""
    import re

    import re2

    from obelisk.interpreter.tools.patterns import translate

    for pattern in PATTERNS:
        re2.compile(translate(pattern))  # RE2 runs it: no fallback
        for text in TEXTS:
            assert pattern_matches(pattern, text) is bool(re.search(pattern, text)), (pattern, text)


def test_unevaluated_properties_match_pattern_properties_in_linear_time() -> None:
    schema = {
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "patternProperties": {"(a+)+$": {"type": "integer"}},
        "unevaluatedProperties": False,
    }
    seconds, messages = _check_seconds(_tool(schema), {"a" * 59 + "!": 1, "aa": 2})
    assert seconds < 1.0
    assert messages == [
        f"Unevaluated properties are not allowed ({'a' * 59 + '!'!r} was unexpected)"
    ]


def test_the_linear_keywords_report_what_jsonschema_reports() -> None:
    """On patterns both engines read alike, the errors are jsonschema's own."""
    from jsonschema import Draft7Validator, Draft202012Validator

    from obelisk.interpreter.tools.patterns import linear_validator_class

    schema = {
        "type": "object",
        "properties": {"id": {"type": "integer", "minimum": 0}, "tag": {"pattern": "^t-"}},
        "patternProperties": {"^x-": {"type": "string"}, "^n": {"type": "number"}},
        "additionalProperties": {"type": "boolean"},
        "allOf": [{"$ref": "#/$defs/more"}],
        "$defs": {"more": {"properties": {"extra": {}}}},
        "unevaluatedProperties": {"type": "null"},
        "if": {"required": ["id"]},
        "then": {"properties": {"when": {"const": 1}}},
    }
    values = [
        {"id": -1, "tag": "q", "x-a": 1, "n1": "s", "other": 3, "extra": 1, "when": 2},
        {"tag": "t-1", "x-a": "s", "n1": 2, "other": True},
        {"zzz": None, "yyy": 1, "x-": 5},
        "not an object",
    ]
    for base in (Draft202012Validator, Draft7Validator):
        ours, theirs = linear_validator_class(base)(schema), base(schema)
        for value in values:
            found = sorted((e.message, list(e.absolute_path)) for e in ours.iter_errors(value))
            expected = sorted((e.message, list(e.absolute_path)) for e in theirs.iter_errors(value))
            assert found == expected, value


def test_additional_properties_without_patterns_reports_what_jsonschema_reports() -> None:
    from jsonschema import Draft202012Validator

    from obelisk.interpreter.tools.patterns import linear_validator_class

    for schema in (
        {"properties": {"a": {}}, "additionalProperties": False},
        {"properties": {"a": {}}, "patternProperties": {"^b": {}}, "additionalProperties": False},
    ):
        ours = linear_validator_class(Draft202012Validator)(schema)
        for value in ({"a": 1, "b": 2, "c": 3}, {"c": 1}, {"a": 1}):
            found = [e.message for e in ours.iter_errors(value)]
            assert found == [e.message for e in Draft202012Validator(schema).iter_errors(value)]


def test_values_obelisk_testing_generates_for_a_pattern_pass_validation() -> None:
    """obelisk.testing (hypothesis-jsonschema) generates with Python's re semantics:
    Unicode digits for \\d.  The validator must accept what it generates."""
    from hypothesis import given, settings

    from obelisk.testing.values import strategy_for

    schema = {"type": "string", "pattern": r"^\d+\s\w+$"}
    validator = _tool(schema)

    @settings(max_examples=50, database=None, deadline=None)
    @given(strategy_for(schema))
    def check(value: str) -> None:
        assert _check_seconds(validator, value)[1] == []

    check()


def test_a_text_with_a_lone_surrogate_is_matched_by_re() -> None:
    """JSON may hold a lone surrogate (an escaped \\ud800); it is not UTF-8, which RE2
    reads, so Python's re matches it, under the time bound."""
    assert pattern_matches("a", "\ud800a") is True
    assert pattern_matches("^b", "\ud800a") is False
    seconds, messages = _check_seconds(_tool({"type": "string", "pattern": "^b"}), "\ud800")
    assert seconds < FALLBACK_SECONDS + 2.0
    assert len(messages) == 1 and "does not match" in messages[0]
