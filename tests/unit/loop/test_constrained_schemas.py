"""The answer schema in the grammar engines of constrained decoders (issue 29, point 1;
docs/loop.md, "Schemas for constrained decoders").

Every example registry's solution schema compiles in each engine that installs here
from PyPI: xgrammar (vLLM, SGLang) and outlines-core, with the ``constrained`` extra;
llama.cpp's converter (``llama_cpp.llama_grammar``) where llama-cpp-python is
installed (it compiles llama.cpp for half an hour: not in the extra, and skipped here).
Its OpenAI strict form keeps OpenAI's rules.  And answers an xgrammar-constrained
decoder writes, drawing random tokens, always parse, fit the schema and pass
``check``, but for what a schema cannot know: whether the state a reference reads
is written by anything, how calls relate (two writing one path, two with one
``_id``), and whether a plain text argument that starts with ``†`` (the tool's own
schema admits it) is a well-formed reference.
"""

from __future__ import annotations

import json
import random
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import obelisk
from obelisk import Registry
from obelisk.grammar import parse_expression
from obelisk.interpreter.loop.messages import (
    OUTPUT_PATH_PATTERN,
    REFERENCE_PATTERN,
    parse_solution,
    solution_schema,
)
from obelisk.interpreter.loop.schema_forms import ANY_DEF, from_strict, strict_schema

ROOT = Path(__file__).resolve().parents[3]
REGISTRIES = {
    path.parent.name: Registry.from_module(str(path))
    for path in sorted((ROOT / "examples").glob("*/tools.py"))
}
OUTPUT = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["answer"],
}


def example_schemas() -> Iterator[tuple[str, Registry, str, dict[str, Any]]]:
    for name, registry in REGISTRIES.items():
        for mode in ("eager", "lazy"):
            for output in (None, OUTPUT):
                label = f"{name}-{mode}-{'output' if output else 'any'}"
                yield label, registry, mode, solution_schema(registry, output, mode=mode)


SCHEMAS = list(example_schemas())


def walk(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema object inside ``schema``, itself included."""
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# -- what every engine needs -------------------------------------------------------------


def test_there_are_example_registries() -> None:
    assert len(REGISTRIES) >= 10 and all(len(registry) for registry in REGISTRIES.values())


def test_every_pattern_is_anchored() -> None:
    """llama.cpp's converter refuses a pattern without ^...$ (its server then falls
    back to unconstrained JSON): the loop's own patterns are anchored."""
    for label, _, _, schema in SCHEMAS:
        for form in (schema, strict_schema(schema)):
            for item in walk(form):
                pattern = item.get("pattern")
                if isinstance(pattern, str) and "†" in pattern:
                    assert pattern.startswith("^") and pattern.endswith("$"), (label, pattern)


def test_a_tool_with_a_result_must_say_where_it_goes() -> None:
    @obelisk.tool
    def notify(text: str) -> None:
        """Tell someone."""

    @obelisk.tool
    def total(a: int, b: int) -> int:
        """a + b."""
        return a + b

    items = solution_schema(Registry([notify, total]))["properties"]["calls"]["items"]["anyOf"]
    required = {item["properties"]["_tool"]["const"]: item["required"] for item in items}
    assert required == {"notify": ["_tool", "text"], "total": ["_tool", "a", "b", "_outputPath"]}


@given(st.from_regex(REFERENCE_PATTERN, fullmatch=True))
def test_every_reference_the_schema_admits_parses(text: str) -> None:
    parse_expression(text)  # raises on a reference that does not parse


@given(st.from_regex(OUTPUT_PATH_PATTERN, fullmatch=True))
def test_every_output_path_the_schema_admits_is_writable(text: str) -> None:
    result = obelisk.check([{"_tool": "noop", "_outputPath": text}], [noop])
    codes = {d.code for d in result.diagnostics}
    assert not codes & {"reference_syntax", "readonly_target"}, text


@obelisk.tool
def noop() -> int:
    """Nothing."""
    return 0


# -- OpenAI strict structured outputs -----------------------------------------------------

STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
    "const", "$ref", "$defs", "description", "title", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
}  # fmt: skip


def strict_problems(schema: dict[str, Any]) -> list[str]:
    """Where ``schema`` breaks OpenAI's strict rules: the top an object (not anyOf),
    every object closed with every property required, only supported keywords, no
    schema that admits anything, every $ref resolving."""
    problems = []
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("the top is not an object")
    defs = schema.get("$defs", {})
    stack: list[tuple[Any, str]] = [(schema, "#")]
    while stack:
        item, where = stack.pop()
        if not isinstance(item, dict) or not item:
            problems.append(f"{where}: {item!r} is not a strict schema")
            continue
        unknown = set(item) - STRICT_KEYWORDS
        if unknown:
            problems.append(f"{where}: unsupported {sorted(unknown)}")
        if item.get("type") == "object":
            if item.get("additionalProperties") is not False:
                problems.append(f"{where}: not closed")
            if sorted(item.get("required", [])) != sorted(item.get("properties", {})):
                problems.append(f"{where}: not every property required")
        ref = item.get("$ref")
        if ref is not None and ref.removeprefix("#/$defs/") not in defs:
            problems.append(f"{where}: $ref {ref} does not resolve")
        for key, value in item.items():
            if key in ("properties", "$defs"):
                stack.extend((sub, f"{where}/{key}/{name}") for name, sub in value.items())
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                stack.append((value, f"{where}/{key}"))
            elif key == "anyOf":
                stack.extend((sub, f"{where}/anyOf/{n}") for n, sub in enumerate(value))
    return problems


def test_the_strict_form_keeps_openais_rules() -> None:
    for label, _, _, schema in SCHEMAS:
        strict = strict_schema(schema)
        Draft202012Validator.check_schema(strict)
        assert strict_problems(strict) == [], label


def test_strict_nulls_and_pairs_read_back() -> None:
    loose = solution_schema(REGISTRIES["instances"])
    strict = strict_schema(loose)
    item = strict["properties"]["calls"]["items"]["anyOf"][1]
    assert item["properties"]["prices"]["anyOf"][0]["type"] == "array"  # dict[str, float]
    written = {
        "calls": [
            {"_tool": "basket_total", "items": "†input.items", "_outputPath": "†state.total",
             "prices": [{"key": "apple", "value": 0.5}], "_outputMethod": None,
             "_instance": None, "_id": None, "_reasoningForCall": None},
        ],
        "output": {"_object": [{"key": "total", "value": "†state.total"}]},
    }  # fmt: skip
    back = from_strict(written, loose)
    assert back == {
        "calls": [
            {"_tool": "basket_total", "items": "†input.items", "_outputPath": "†state.total",
             "prices": {"apple": 0.5}},
        ],
        "output": {"total": "†state.total"},
    }  # fmt: skip
    assert Draft202012Validator(loose).is_valid(back)


# -- the engines ------------------------------------------------------------------------


class _StandIn(types.ModuleType):
    """An empty module: each attribute is a class that takes any arguments."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        made = type(name, (), {"__init__": lambda self, *args, **kwargs: None})
        setattr(self, name, made)
        return made


def import_xgrammar() -> Any:
    """xgrammar, or a skip when it is not installed.  Its Python package imports torch
    and transformers at import for GPU kernels and Hugging Face tokenizers, which its
    grammar compiler and matcher (C++) do not use; where they are absent (the
    ``constrained`` extra installs xgrammar without them, see .ci/run), empty stand-ins
    are in ``sys.modules`` only while it is imported."""
    try:
        import xgrammar
    except ModuleNotFoundError as exc:
        if exc.name not in ("torch", "transformers", "triton"):
            pytest.skip(f"xgrammar is not installed ({exc.name}): pip install '.[constrained]'")
    else:
        return xgrammar
    pytest.importorskip("tvm_ffi")  # imported first, without torch, as it can be
    stand_ins = {name: _StandIn(name) for name in ("torch", "transformers")}
    try:
        for name, module in stand_ins.items():
            sys.modules.setdefault(name, module)
        import xgrammar
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return xgrammar


def test_example_schemas_compile_in_xgrammar() -> None:
    xgr = import_xgrammar()
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo(["<eos>", "a"], stop_token_ids=[0]))
    for _, _, _, schema in SCHEMAS:  # raises when it cannot
        compiler.compile_json_schema(json.dumps(schema))
        compiler.compile_json_schema(json.dumps(strict_schema(schema)))


def test_example_schemas_compile_in_outlines_core() -> None:
    outlines = pytest.importorskip(
        "outlines_core.json_schema", reason="outlines-core is not installed: '.[constrained]'"
    )
    for _, _, _, schema in SCHEMAS:
        assert outlines.build_regex_from_schema(json.dumps(schema))


def test_example_schemas_compile_in_llama_cpps_converter() -> None:
    grammar = pytest.importorskip(
        "llama_cpp.llama_grammar", reason="llama-cpp-python is not installed (no PyPI wheel)"
    )
    for _, _, _, schema in SCHEMAS:  # the converter raises when it cannot
        assert "root ::=" in grammar.json_schema_to_gbnf(json.dumps(schema))


# -- constrained decoding from random tokens -------------------------------------------

CHARACTERS = [chr(code) for code in range(32, 127)]
BEYOND_A_SCHEMA = {  # what relates calls to each other or to the state
    "unresolved_reference",  # a read of state that nothing writes
    "write_conflict",  # two calls writing one path
    "dependency_cycle",  # calls reading each other's results
}


def beyond_a_schema(diagnostic: Any) -> bool:
    """A diagnostic no JSON schema can prevent: about what references read and how
    calls relate (two calls with one ``_id`` included)."""
    duplicate_id = diagnostic.code == "plan_shape" and "duplicate _id" in diagnostic.message
    return diagnostic.code in BEYOND_A_SCHEMA or duplicate_id


def vocabulary(schema: dict[str, Any]) -> list[str]:
    """Tokens: the end, printable ASCII characters one by one, ``†`` and, whole, every
    property name, constant and enum value of ``schema`` as JSON text."""
    words = {"true", "false", "null", '"†state.', '"†input.', "†"}
    for item in walk(schema):
        words.update(json.dumps(name) for name in item.get("properties", {}))
        if "const" in item:
            words.add(json.dumps(item["const"]))
        words.update(json.dumps(value) for value in item.get("enum", []))
    return ["<eos>", *CHARACTERS, *sorted(words - set(CHARACTERS))]


def constrained_answers(schema: dict[str, Any], count: int, seed: int) -> list[str]:
    """``count`` answers an xgrammar-constrained decoder writes for ``schema``, each
    token drawn at random among those the grammar accepts (closing tokens more likely
    as the answer grows, ``e`` rarely, so numbers stay in range)."""
    xgr = import_xgrammar()
    vocab = vocabulary(schema)
    info = xgr.TokenizerInfo(vocab, stop_token_ids=[0])
    grammar = xgr.GrammarCompiler(info).compile_json_schema(
        json.dumps(schema), any_whitespace=False
    )
    closing = {vocab.index(token) for token in ('"', "}", "]", "<eos>")}
    rng = random.Random(seed)
    answers = []
    while len(answers) < count:
        matcher = xgr.GrammarMatcher(grammar)
        text = []
        for step in range(2000):
            if matcher.is_terminated():
                break
            allowed = []
            for token in range(len(vocab)):
                if matcher.accept_token(token):
                    allowed.append(token)
                    matcher.rollback(1)
            assert allowed, "".join(text)  # the grammar never leaves a decoder stuck
            weights = [
                (0.02 if step < 40 else step / 10)
                if token in closing
                else 4
                if len(vocab[token]) > 1
                else 0.001
                if vocab[token] in "eE"
                else 1
                for token in allowed
            ]
            token = rng.choices(allowed, weights)[0]
            assert matcher.accept_token(token)
            if token:
                text.append(vocab[token])
        if matcher.is_terminated():
            answers.append("".join(text))
    return answers


def literal_admits(registry: Registry, call: dict[str, Any], path: str) -> bool:
    """Whether the argument at ``path`` (``args.name...``) is, as a whole, a value its
    tool's own schema admits as it is: a plain text may start with ``†``, and the
    constrained decoder took that branch."""
    if not path.startswith("args."):
        return False
    name = path.removeprefix("args.").split(".")[0].split("[")[0]
    parameters = registry[call["_tool"]].parameters
    schema = {**parameters["properties"][name], "$defs": parameters.get("$defs", {})}
    return Draft202012Validator(schema).is_valid(call[name])


def assert_fits_and_checks(text: str, registry: Registry, mode: str, loose: dict[str, Any]) -> None:
    solution = parse_solution(text)  # parses: JSON, the solution's shape, the limits
    data = solution.to_data()
    assert Draft202012Validator(loose).is_valid(data), text
    result = obelisk.check(solution.calls, registry, mode=mode)
    for diagnostic in result.diagnostics:
        if beyond_a_schema(diagnostic):
            continue
        call = solution.calls[diagnostic.call] if diagnostic.call is not None else {}
        assert diagnostic.code == "reference_syntax", (str(diagnostic), text)
        assert literal_admits(registry, call, diagnostic.path or ""), (str(diagnostic), text)


def test_xgrammar_constrained_answers_parse_fit_and_pass_check() -> None:
    for name, registry in REGISTRIES.items():
        for mode in ("eager", "lazy"):
            loose = solution_schema(registry, OUTPUT, mode=mode)
            for text in constrained_answers(loose, 4, seed=sum(map(ord, name + mode))):
                assert_fits_and_checks(text, registry, mode, loose)


def test_xgrammar_constrained_strict_answers_read_back_fit_and_pass_check() -> None:
    for name, registry in REGISTRIES.items():
        loose = solution_schema(registry, None)
        strict = strict_schema(loose)
        assert ANY_DEF in strict["$defs"]  # output: any value, as pairs and lists
        for text in constrained_answers(strict, 4, seed=len(name)):
            back = json.dumps(from_strict(json.loads(text), loose), ensure_ascii=False)
            assert_fits_and_checks(back, registry, "eager", loose)


class ConstrainedRandomModel:
    """A model whose answers an xgrammar-constrained decoder writes for each request's
    own schema, from random tokens: what a server that enforces the schema sends."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.answers: list[str] = []

    async def complete(self, request: obelisk.Request) -> obelisk.Solution:
        (text,) = constrained_answers(request.schema, 1, seed=self.seed + len(self.answers))
        self.answers.append(text)
        return parse_solution(text)


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_a_loop_takes_every_constrained_answer(mode: str) -> None:
    """Driven by constrained answers, the loop never asks for a correction of an
    answer's form: no unusable answer, no error about shapes, tools, arguments or
    output paths (tools may fail on random arguments: that is not the answer's form)."""
    calls = 0
    for name in ("loop_payment", "loop_hotel", "loop_refund"):
        for seed in (0, 10):
            model = ConstrainedRandomModel(seed)
            loop = obelisk.Loop(model, REGISTRIES[name], mode=mode, max_turns=3)  # type: ignore[arg-type]
            try:
                turns = loop.run_sync({"customer": "c-1"}).turns
            except obelisk.LoopError as exc:
                turns = exc.result.turns  # type: ignore[attr-defined]
            assert len(turns) == len(model.answers) >= 1
            for turn in turns:
                assert turn.solution is not None  # every answer usable
                calls += len(turn.solution.calls)
                for error in turn.errors:
                    assert not is_form_error(error), (error, model.answers)
    assert calls >= 6  # the answers did call tools


FORM_CODES = {
    "invalid_solution", "json_syntax", "plan_shape", "unknown_meta", "unknown_tool",
    "invalid_argument", "missing_argument", "invalid_output", "lazy_output",
    "outcome_mismatch", "ambiguous_output", "readonly_target",
}  # fmt: skip


def is_form_error(record: Any) -> bool:
    """An error record about the answer's form, which the schema should have ruled
    out (a plain text argument that starts with ``†`` and two calls with one ``_id``
    aside: no schema rules them out)."""
    kind, message = record.error["type"], record.error.get("message", "")
    if kind == "plan_shape" and "duplicate _id" in message:
        return False
    return kind in FORM_CODES
