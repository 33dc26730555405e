"""The schema a constrained decoder gets for one turn (issue 29, point 6; docs/loop.md,
"Schemas for constrained decoders"): the answer schema narrowed to what the request
shows, so a decoder cannot write the mistakes Qwen2.5-Coder-1.5B made in the
benchmark (tests/data/real_model): reads of input fields that do not exist, an eager
answer that neither calls nor finishes, a finishing output that reads a missing path
or a whole record where one field is asked, a reference written as a plain text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import obelisk
from obelisk import Registry
from obelisk.interpreter.loop.decoding import decoding_schema
from obelisk.interpreter.loop.messages import (
    DataMessage,
    InputMessage,
    Request,
    StateMessage,
    solution_schema,
)


@obelisk.tool
def get_customer(customer_id: str) -> dict[str, str]:
    """The customer."""
    return {"name": "Ada", "email": "ada@example.com"}


@obelisk.tool
def send_note(email: str, text: str) -> str:
    """Send a note."""
    return "sent"


TOOLS = Registry([get_customer, send_note])
OUTPUT = {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}
INPUT = {"customer_id": "c-1", "text": "hello"}
STATE = {"get_customer": {"name": "Ada", "email": "ada@example.com"}, "count": 3}
CALL = {"_tool": "get_customer", "customer_id": "†input.customer_id", "_outputPath": "†state.c"}


def request(
    turn: int = 2, max_turns: int = 3, state: Any = None, mode: str = "eager", **extra: Any
) -> Request:
    context: list[Any] = [InputMessage(input=INPUT), StateMessage(state=state or {})]
    context += extra.get("data", [])
    return Request(
        config={"mode": mode, "turn": turn, "max_turns": max_turns},
        schema=solution_schema(TOOLS, OUTPUT, mode=mode),  # type: ignore[arg-type]
        context=context,
    )


def fits(schema: dict[str, Any], answer: dict[str, Any]) -> bool:
    return Draft202012Validator(schema).is_valid(answer)


def test_an_input_reference_names_a_field_the_input_has() -> None:
    schema = decoding_schema(request(state=STATE))
    assert fits(schema, {"calls": [CALL], "output": None})
    wrong = {**CALL, "customer_id": "†input.error"}  # the benchmark's made-up read
    assert not fits(schema, {"calls": [wrong], "output": None})
    assert fits(request().schema, {"calls": [wrong], "output": None})  # the loop's own


def test_a_reference_starts_at_a_document_the_request_shows() -> None:
    audit = DataMessage(kind="audit", data={"n": 1})
    schema = decoding_schema(request(state=STATE, data=[audit]))
    for reference, admitted in [("†audit.n", True), ("†state.c.email", True), ("†memo.x", False)]:
        call = {"_tool": "send_note", "email": reference, "text": "†input.text"}
        answer = {"calls": [{**call, "_outputPath": "†state.n"}], "output": None}
        assert fits(schema, answer) is admitted, reference


def test_a_reference_cannot_hide_in_a_plain_text() -> None:
    schema = decoding_schema(request(state=STATE))
    call = {"_tool": "send_note", "email": "†input.error", "text": "hi", "_outputPath": "†state.n"}
    assert not fits(schema, {"calls": [call], "output": None})
    assert fits(schema, {"calls": [{**call, "email": "ada@example.com"}], "output": None})
    assert not fits(schema, {"calls": [], "output": {"email": "†state.missing"}})


def test_an_eager_answer_calls_and_goes_on_calls_and_finishes_or_finishes() -> None:
    schema = decoding_schema(request(state=STATE))
    assert not fits(schema, {"calls": [], "output": None})  # no progress
    assert fits(schema, {"calls": [CALL], "output": None})
    # one answer that calls and reads what its own call writes (†state.c is not there yet)
    assert fits(schema, {"calls": [CALL], "output": {"email": "†state.c.email"}})
    assert fits(schema, {"calls": [], "output": {"email": "†state.get_customer.email"}})
    assert fits(schema, {"calls": [], "output": {"email": "ada@example.com"}})


def test_a_finishing_output_reads_only_what_is_there_and_fits() -> None:
    schema = decoding_schema(request(state=STATE))
    for reference, admitted in [
        ("†state.get_customer.email", True),
        ("†state.get_customer", False),  # a whole record where a text is asked
        ("†state.count", False),  # a number
        ("†state.nothing", False),  # nothing wrote it
        ("†input.text", True),
    ]:
        assert fits(schema, {"calls": [], "output": {"email": reference}}) is admitted, reference
    whole = {"calls": [], "output": "†state.get_customer"}  # the record has the field
    assert fits(schema, whole)


def test_the_first_turn_calls_and_the_last_one_finishes() -> None:
    first = decoding_schema(request(turn=1))
    assert fits(first, {"calls": [CALL], "output": None})
    assert fits(first, {"calls": [CALL], "output": {"email": "†state.c.email"}})
    assert not fits(first, {"calls": [], "output": {"email": "a@b.c"}})
    assert not fits(first, {"calls": [], "output": None})
    last = decoding_schema(request(turn=3, state=STATE))
    assert not fits(last, {"calls": [CALL], "output": None})
    assert fits(last, {"calls": [], "output": {"email": "†state.get_customer.email"}})


def test_lazy_requests_keep_their_shape_with_narrowed_references() -> None:
    lazy = request(mode="lazy", state=STATE)
    schema = decoding_schema(lazy)
    assert set(schema) == set(lazy.schema)
    answer = {"calls": [CALL], "output": "†state.c"}
    assert fits(schema, answer) and fits(lazy.schema, answer)
    assert fits(schema, {"calls": [], "output": None})


def test_a_request_that_is_not_a_loops_answer_schema_is_sent_as_it_is() -> None:
    plain = Request(config={"mode": "eager", "turn": 1, "max_turns": 2}, schema={"type": "integer"})
    assert decoding_schema(plain) is plain.schema


@pytest.mark.parametrize("turn", [1, 2, 3])
def test_every_answer_the_decoding_schema_admits_fits_the_answer_schema(turn: int) -> None:
    """Narrowing only removes answers: random answers an xgrammar-constrained decoder
    writes for the narrowed schema fit the loop's own schema."""
    from test_constrained_schemas import constrained_answers  # type: ignore[import-not-found]

    made = request(turn=turn, state=STATE)
    schema = decoding_schema(made)
    for text in constrained_answers(schema, 4, seed=turn):
        assert fits(made.schema, json.loads(text)), text


def test_the_decoding_schemas_compile_in_each_engine() -> None:
    from test_constrained_schemas import import_xgrammar  # type: ignore[import-not-found]

    schemas = [decoding_schema(request(turn=t, state=STATE)) for t in (1, 2, 3)]
    xgr = import_xgrammar()
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo(["<eos>", "a"], stop_token_ids=[0]))
    outlines = pytest.importorskip("outlines_core.json_schema")
    for schema in schemas:
        compiler.compile_json_schema(json.dumps(schema))
        assert outlines.build_regex_from_schema(json.dumps(schema))


def test_the_decoding_schemas_compile_in_llama_cpps_converter() -> None:
    grammar = pytest.importorskip(
        "llama_cpp.llama_grammar", reason="llama-cpp-python is not installed (no PyPI wheel)"
    )
    for turn in (1, 2, 3):  # the converter raises when it cannot
        schema = decoding_schema(request(turn=turn, state=STATE))
        assert "root ::=" in grammar.json_schema_to_gbnf(json.dumps(schema))


def test_an_output_beside_calls_reads_with_open_references_but_fits_its_schema() -> None:
    """The orders tasks of the benchmark were solved by one answer: calls and an
    output reading their results (tests/data/real_model/json-eager). The output's
    references stay open there; its plain values still fit the output schema, and
    `{"calls": [], "output": null}` stays impossible on every turn."""
    for turn, state in [(1, None), (2, STATE)]:
        schema = decoding_schema(request(turn=turn, state=state))
        for output, admitted in [
            ({"email": "†state.c.email"}, True),  # what the call writes
            ("†state.c", True),  # a whole result
            ({"email": "ada@example.com"}, True),
            ({"email": 3}, False),  # not the output's shape
            ({}, False),  # the required field is missing
        ]:
            answer = {"calls": [CALL], "output": output}
            assert fits(schema, answer) is admitted, (turn, output)
        assert not fits(schema, {"calls": [], "output": None})


def test_an_output_with_definitions_is_narrowed_when_finishing_and_open_beside_calls() -> None:
    inner = {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}
    output = {
        "type": "object",
        "properties": {"who": {"$ref": "#/$defs/Who"}},
        "required": ["who"],
        "$defs": {"Who": inner},
    }
    made = Request(
        config={"mode": "eager", "turn": 2, "max_turns": 3},
        schema=solution_schema(TOOLS, output, mode="eager"),  # type: ignore[arg-type]
        context=[InputMessage(input=INPUT), StateMessage(state=STATE)],
    )
    schema = decoding_schema(made)
    assert any(name.startswith("output.") for name in schema["$defs"]), schema["$defs"]
    reads = {"who": {"email": "†state.c.email"}}  # not in the state yet
    assert fits(schema, {"calls": [CALL], "output": reads})
    assert not fits(schema, {"calls": [], "output": reads})
    assert fits(schema, {"calls": [], "output": {"who": {"email": "†state.get_customer.email"}}})
    for answer in ({"calls": [CALL], "output": reads}, {"calls": [CALL], "output": None}):
        assert fits(made.schema, answer)
