"""Text tools."""

from __future__ import annotations

import time

import pytest

from obelisk.errors import ArgumentValidationError
from obelisk.stdlib_tools import default_registry

R = default_registry()


def test_format_fills_named_fields() -> None:
    fields = {"name": "Ann", "total": 12.5, "n": 3}
    assert R["format"]("Hello {name}, {total:.2f} EUR ({n:>3})", fields) == (
        "Hello Ann, 12.50 EUR (  3)"
    )
    assert R["format"]("{{literal}} {name!r}", {"name": "x"}) == "{literal} 'x'"


def test_format_missing_field_is_a_key_error() -> None:
    with pytest.raises(KeyError) as caught:
        R["format"]("Hi {name} from {city}", {"name": "Ann", "age": 3})
    assert caught.value.args[0] == "template field 'city' is not in fields (given: age, name)"
    with pytest.raises(KeyError) as caught:
        R["format"]("{x}", {})
    assert caught.value.args[0] == "template field 'x' is not in fields (given: none)"


@pytest.mark.parametrize("template", ["{user.__class__}", "{items[0]}", "{}", "{0}"])
def test_format_refuses_attribute_index_and_positional_fields(template: str) -> None:
    field = template[1:-1]
    with pytest.raises(ValueError) as caught:
        R["format"](template, {"user": "u", "items": [1]})
    assert str(caught.value) == (
        f"template field {{{field}}} is not a plain name; use named fields such as {{city}}"
        " (no positional fields, attribute access or indexes)"
    )


def test_format_refuses_nested_and_huge_format_specs() -> None:
    with pytest.raises(ValueError, match="nested field"):
        R["format"]("{x:{w}}", {"x": 1, "w": 5})
    with pytest.raises(ValueError, match="widths above 9999 are not allowed"):
        R["format"]("{x:>100000}", {"x": 1})


def test_concat_join_split() -> None:
    assert R["concat"](["a", "b", "c"]) == "abc"
    assert R["concat"](["a", "b"], separator="-") == "a-b"
    assert R["join"](["x", "y", "z"], ", ") == "x, y, z"
    assert R["split"]("  a  b c ") == ["a", "b", "c"]
    assert R["split"]("a,b,,c", ",") == ["a", "b", "", "c"]
    assert R["split"]("a,b,c", ",", max_splits=1) == ["a", "b,c"]
    with pytest.raises(ValueError, match="empty separator"):
        R["split"]("abc", "")


def test_join_rejects_non_strings_through_the_schema() -> None:
    with pytest.raises(ArgumentValidationError) as caught:
        R["join"].validate_arguments({"parts": ["a", 1], "separator": ","})
    assert [p.loc for p in caught.value.problems] == [("parts", 1)]


def test_replace() -> None:
    assert R["replace"]("a-b-c", "-", "+") == "a+b+c"
    assert R["replace"]("a-b-c", "-", "", count=1) == "ab-c"


def test_regex_match() -> None:
    found = R["regex_match"]("order 42 by ann", r"(?P<id>\d+) by (\w+)(x)?")
    assert found == {
        "match": "42 by ann",
        "groups": ["42", "ann", None],
        "named": {"id": "42"},
    }
    assert R["regex_match"]("nothing here", r"\d") is None
    assert R["regex_match"].validate_output(found) == []


def test_regex_bad_pattern_is_a_value_error() -> None:
    with pytest.raises(ValueError) as caught:
        R["regex_find_all"]("x", "(")
    assert str(caught.value) == "invalid regular expression '(': missing ): ("


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"(a)\1", "backreferences such as \\1 (invalid escape sequence: \\1)"),
        (r"(?P<x>a)(?P=x)", "named backreferences (?P=name) (invalid perl operator: (?P)"),
        (r"a(?=b)", "lookaround (?=...) / (?<=...) (invalid perl operator: (?=)"),
        (r"(?<=a)b", "lookaround (?=...) / (?<=...) (invalid perl operator: (?<=)"),
        (r"a(?!b)", "negative lookaround (?!...) / (?<!...) (invalid perl operator: (?!)"),
        (r"(?<!a)b", "negative lookaround (?!...) / (?<!...) (invalid perl operator: (?<!)"),
        (r"(?>a)", "atomic groups (?>...) (invalid perl operator: (?>)"),
        (r"a*+", "possessive quantifiers such as a*+ (bad repetition operator: *+)"),
        (r"a\Z", "\\Z (write \\z) (invalid escape sequence: \\Z)"),
    ],
)
@pytest.mark.parametrize("name", ["regex_match", "regex_find_all", "regex_replace"])
def test_a_pattern_re2_refuses_names_the_construct(name: str, pattern: str, construct: str) -> None:
    args = ("abc", pattern, "x") if name == "regex_replace" else ("abc", pattern)
    with pytest.raises(ValueError) as caught:
        R[name](*args)
    assert str(caught.value) == (
        f"invalid regular expression {pattern!r}: RE2 does not support {construct}"
    )


def test_a_long_bad_pattern_is_cut_in_the_message() -> None:
    with pytest.raises(ValueError) as caught:
        R["regex_match"]("x", "a" * 1000 + "(")
    reason = ("missing ): " + "a" * 1000)[:117] + "..."
    assert str(caught.value) == (
        f"invalid regular expression {'a' * 57!r}... (1001 chars): {reason}"
    )


@pytest.mark.parametrize("name", ["regex_match", "regex_find_all", "regex_replace"])
def test_catastrophic_patterns_answer_at_once(name: str) -> None:
    # Python's re needs minutes for this (exponential backtracking, holding the GIL)
    text = "a" * 40 + "b"
    args = (text, "(a+)+$", "x") if name == "regex_replace" else (text, "(a+)+$")
    started = time.perf_counter()
    result = R[name](*args)
    assert time.perf_counter() - started < 2.0  # Python re: minutes
    assert result == {"regex_match": None, "regex_find_all": [], "regex_replace": text}[name]
    long_text = "a" * 200_000 + "b"
    started = time.perf_counter()
    assert R["regex_find_all"](long_text, "(a|aa)+$") == []
    assert time.perf_counter() - started < 2.0


def test_re2_word_classes_are_ascii_and_unicode_classes_work() -> None:
    assert R["regex_find_all"]("héllo wörld", r"\w+") == ["h", "llo", "w", "rld"]
    assert R["regex_find_all"]("héllo wörld", r"\pL+") == ["héllo", "wörld"]
    assert R["regex_match"]("Δx", r"(?i)δ(X)") == {"match": "Δx", "groups": ["x"], "named": {}}


def test_regex_find_all_returns_whole_matches() -> None:
    assert R["regex_find_all"]("a1 b22 c333", r"([a-z])(\d+)") == ["a1", "b22", "c333"]
    assert R["regex_find_all"]("none", r"\d") == []


def test_regex_replace() -> None:
    assert R["regex_replace"]("2024-05-01", r"(\d+)-(\d+)-(\d+)", r"\3/\2/\1") == "01/05/2024"
    assert R["regex_replace"]("aaa", "a", "b", count=2) == "bba"
    with pytest.raises(ValueError) as caught:
        R["regex_replace"]("abc", "b", r"\9")
    assert str(caught.value) == "invalid replacement '\\\\9': bad group index"
    assert R["regex_replace"]("a1 b2", r"(?P<x>\w)\d", r"\g<x>!") == "a! b!"


def test_case_strip_and_length() -> None:
    assert R["lower"]("MiXeD") == "mixed"
    assert R["upper"]("MiXeD") == "MIXED"
    assert R["strip"]("  pad \n") == "pad"
    assert R["strip"]("xxpadxx", "x") == "pad"
    assert R["length"]("héllo") == 5
    assert R["length"]([1, 2, 3]) == 3
    assert R["length"]({"a": 1, "b": 2}) == 2


def test_length_schema_rejects_a_number() -> None:
    with pytest.raises(ArgumentValidationError):
        R["length"].validate_arguments({"value": 5})


def test_contains_starts_with_ends_with() -> None:
    assert R["contains"]("hello world", "o w") is True
    assert R["contains"]([1, {"a": 1}], {"a": 1.0}) is True
    assert R["contains"]([1, 2], True) is False
    assert R["contains"]({"key": 1}, "key") is True
    with pytest.raises(TypeError) as caught:
        R["contains"]("abc", 1)
    assert str(caught.value) == "contains: a string can only contain a string, not a number"
    assert R["starts_with"]("obelisk", "obe") is True
    assert R["ends_with"]("obelisk", "obe") is False


def test_to_string_and_to_number() -> None:
    assert R["to_string"]("as is") == "as is"
    assert R["to_string"]({"a": [1, None, "é"]}) == '{"a":[1,null,"é"]}'
    assert R["to_number"]("42") == 42
    assert isinstance(R["to_number"]("42"), int)
    assert R["to_number"](" -1.5e3 ") == -1500.0
    assert R["to_number"](7.5) == 7.5
    with pytest.raises(ValueError) as caught:
        R["to_number"]("12abc")
    assert str(caught.value) == "not a number: '12abc'"
    with pytest.raises(ValueError, match="number out of range"):
        R["to_number"]("1e999")
