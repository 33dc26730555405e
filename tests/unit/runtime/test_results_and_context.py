"""Tool results become JSON data before they are written; tools receive the run's
context (docs/tools.md, docs/semantics.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import decimal
import enum
import socket
import uuid
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, computed_field

import obelisk
from obelisk import Context, Loop, Outcome, RetryPolicy, ScriptedModel, Tool

# -- JSON in state -------------------------------------------------------------------------


class Flight(BaseModel):
    id_: str
    departs: datetime.datetime


class Colour(enum.Enum):
    RED = "red"


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    at: datetime.datetime

    @computed_field  # type: ignore[prop-decorator]
    @property
    def year(self) -> int:
        return self.at.year


@dataclasses.dataclass
class Seat:
    row: int
    letters: tuple[str, ...]


@obelisk.tool
def find_flights() -> list[Flight]:
    """Flights as pydantic models."""
    return [Flight(id_="KL1", departs=datetime.datetime(2025, 5, 1, 9, 30))]


@obelisk.tool
def book(flight_id: str) -> str:
    """Book a flight by id."""
    return f"booked {flight_id}"


def run(plan: Any, tools: Any, **options: Any) -> obelisk.RunResult:
    return obelisk.run_sync(plan, tools, **options)


def test_a_model_result_is_json_and_a_later_call_reads_its_field() -> None:
    plan = [
        {"_tool": "find_flights", "_outputPath": "†state.c0"},
        {"_tool": "book", "flight_id": "†state.c0[0].id_", "_outputPath": "†state.booking"},
    ]
    assert obelisk.check(plan, [find_flights, book]).diagnostics == ()
    result = run(plan, [find_flights, book])
    assert [c.status for c in result.calls] == ["succeeded", "succeeded"]
    assert result.state == {
        "c0": [{"id_": "KL1", "departs": "2025-05-01T09:30:00"}],
        "booking": "booked KL1",
    }
    assert result.calls[0].output == [{"id_": "KL1", "departs": "2025-05-01T09:30:00"}]
    assert result.log[0].value == result.state["c0"]


def test_python_values_become_json_data() -> None:
    @obelisk.tool
    def everything() -> Any:
        """One of each."""
        return {
            "colour": Colour.RED,
            "seat": Seat(3, ("A", "B")),
            "day": datetime.date(2025, 5, 1),
            "at": datetime.datetime(2025, 5, 1, 9, 30, tzinfo=datetime.timezone.utc),
            "id": uuid.UUID(int=1),
            "price": decimal.Decimal("12.50"),
            "pair": (1, 2),
            "tags": {"only"},
            "frozen": frozenset({7}),
            "keys": {1: "one"},
        }

    result = run([{"_tool": "everything", "_outputPath": "†state.e"}], [everything])
    assert result.state == {
        "e": {
            "colour": "red",
            "seat": {"row": 3, "letters": ["A", "B"]},
            "day": "2025-05-01",
            "at": "2025-05-01T09:30:00Z",
            "id": "00000000-0000-0000-0000-000000000001",
            "price": "12.50",
            "pair": [1, 2],
            "tags": ["only"],
            "frozen": [7],
            "keys": {"1": "one"},
        }
    }


def test_a_value_without_a_json_form_fails_the_call() -> None:
    @obelisk.tool
    def make_socket() -> Any:
        """Returns something that is not data."""
        with socket.socket() as made:
            return {"inner": [made]}

    result = run([{"_tool": "make_socket", "_outputPath": "†state.s"}], [make_socket])
    assert result.state == {}
    assert result.log == ()
    assert result.calls[0].status == "failed"
    assert result.calls[0].error == {
        "type": "OutputValidationError",
        "message": "the output of make_socket is not JSON data: socket is not JSON serializable",
    }


def test_an_outcome_value_is_converted_too() -> None:
    @obelisk.tool
    def choose() -> Outcome:
        """Picks the second alternative with a model."""
        return Outcome(1, Flight(id_="X", departs=datetime.datetime(2025, 1, 1)))

    result = run([{"_tool": "choose", "_outputPath": "†state.a || †state.b"}], [choose])
    assert result.state == {"b": {"id_": "X", "departs": "2025-01-01T00:00:00"}}


def test_a_typed_result_is_validated_as_returned_then_converted() -> None:
    @obelisk.tool
    def stamp() -> Strict:
        """A strict model with a computed field."""
        return Strict(at=datetime.datetime(2024, 2, 3))

    assert stamp.typed_output is True
    assert stamp.output_schema is not None
    assert set(stamp.output_schema["properties"]) == {"at", "year"}  # as written
    plan = [
        {"_tool": "stamp", "_outputPath": "†state.s"},
        {"_tool": "book", "flight_id": "†state.s.at", "_outputPath": "†state.b"},
    ]
    assert obelisk.check(plan, [stamp, book]).diagnostics == ()
    result = run(plan, [stamp, book])
    assert result.state == {
        "s": {"at": "2024-02-03T00:00:00", "year": 2024},
        "b": "booked 2024-02-03T00:00:00",
    }


def test_a_typed_result_that_breaks_its_annotation_still_fails() -> None:
    @obelisk.tool
    def count() -> int:
        """Promises an integer."""
        return "many"  # type: ignore[return-value]

    result = run([{"_tool": "count", "_outputPath": "†state.n"}], [count])
    assert result.calls[0].error == {
        "type": "OutputValidationError",
        "message": 'the output of count does not fit its schema: expected an integer, got "many"',
    }


def test_a_latent_output_is_converted_and_not_shared_with_the_plan() -> None:
    latent = Tool.from_schema({"name": "guess", "output": {"type": "object"}})
    plan = obelisk.parse_plan(
        [{"_tool": "guess", "_output": {"k": [1]}, "_outputPath": "†state.g"}]
    )
    result = run(plan, [latent])
    assert result.state == {"g": {"k": [1]}}
    result.calls[0].output["k"].append(2)
    assert plan.calls[0].output == {"k": [1]}


def test_mutating_a_returned_object_later_does_not_change_state_log_or_record() -> None:
    kept: dict[str, Any] = {}

    @obelisk.tool
    def remember() -> dict[str, Any]:
        """Returns an object it keeps."""
        kept["value"] = {"items": [1]}
        return kept["value"]

    @obelisk.tool
    def meddle(after: Any) -> int:
        """Runs after remember (it reads its output), then mutates what remember returned."""
        kept["value"]["items"].append(99)
        kept["value"]["new"] = True
        return 0

    plan = [
        {"_tool": "remember", "_outputPath": "†state.r"},
        {"_tool": "meddle", "after": "†state.r", "_outputPath": "†state.m"},
    ]
    result = run(plan, [remember, meddle])
    assert kept["value"] == {"items": [1, 99], "new": True}
    assert result.state == {"r": {"items": [1]}, "m": 0}
    assert result.log[0].value == {"items": [1]}
    assert result.calls[0].output == {"items": [1]}


def test_a_later_nested_write_changes_neither_the_record_nor_the_log() -> None:
    @obelisk.tool
    def base() -> dict[str, Any]:
        """An object."""
        return {"a": {"b": 1}}

    @obelisk.tool
    def two(after: Any = None) -> int:
        """Two."""
        return 2

    plan = [
        {"_tool": "base", "_outputPath": "†state.x"},
        {"_tool": "two", "after": "†state.x", "_outputPath": "†state.x.a.c"},
    ]
    result = run(plan, [base, two])
    assert result.state == {"x": {"a": {"b": 1, "c": 2}}}
    assert result.calls[0].output == {"a": {"b": 1}}
    assert result.log[0].value == {"a": {"b": 1}}


def test_a_fanned_out_result_is_not_shared_between_targets() -> None:
    @obelisk.tool
    def pair() -> dict[str, Any]:
        """An object written twice."""
        return {"k": [1]}

    @obelisk.tool
    def three(after: Any = None) -> int:
        """Three."""
        return 3

    plan = [
        {"_tool": "pair", "_outputPath": "†state.a && †state.b"},
        {"_tool": "three", "after": "†state.a", "_outputPath": "†state.a.extra"},
    ]
    result = run(plan, [pair, three])
    assert result.state == {"a": {"k": [1], "extra": 3}, "b": {"k": [1]}}


def test_a_big_result_is_converted_once_and_the_log_keeps_its_json_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The conversion makes the value's compact JSON text, which the log keeps, and the
    state's copy by parsing it; the log decodes the text when first read, and the
    record shares that value (docs/semantics.md)."""
    from obelisk.interpreter.runtime import outcome, state, write_log

    value = {"rows": [{"id": i, "tags": ["a", "b"], "nested": {"n": i}} for i in range(300)]}
    calls: list[str] = []
    for module, name in (
        (state, "copy_json"),
        (state, "to_json"),
        (write_log, "from_json"),
        (outcome, "to_jsonable_python"),
        (outcome, "to_json"),
        (outcome, "from_json"),
    ):
        original = getattr(module, name)

        label = f"{module.__name__.rsplit('.', 1)[1]}.{name}"

        def counted(
            item: Any, *args: Any, _f: Any = original, _label: str = label, **kw: Any
        ) -> Any:
            if item == value or (isinstance(item, bytes) and item.startswith(b'{"rows"')):
                calls.append(_label)
            return _f(item, *args, **kw)

        monkeypatch.setattr(module, name, counted)

    @obelisk.tool
    def big() -> Any:
        """A big result."""
        return value

    result = run([{"_tool": "big", "_outputPath": "†state.big"}], [big])
    assert result.state == {"big": value}
    assert sorted(calls) == ["outcome.from_json", "outcome.to_json"]
    entry, record = result.log[0], result.calls[0]
    assert entry.value == value  # decoded now, once
    assert sorted(calls) == ["outcome.from_json", "outcome.to_json", "write_log.from_json"]
    assert record.output is entry.value
    assert entry.value is not result.state["big"]
    assert sorted(calls) == ["outcome.from_json", "outcome.to_json", "write_log.from_json"]


# -- per-run context ---------------------------------------------------------------------------


class Mailbox:
    def __init__(self) -> None:
        self.sent: list[str] = []


@obelisk.tool
def send(to: str, ctx: Context[Mailbox]) -> int:
    """Send a message; returns how many were sent."""
    ctx.deps.sent.append(to)
    return len(ctx.deps.sent)


@obelisk.tool
async def send_later(to: str, ctx: Context[Mailbox]) -> int:
    """Send a message from async code."""
    await asyncio.sleep(0)
    ctx.deps.sent.append(to)
    return len(ctx.deps.sent)


def test_tools_receive_the_run_context() -> None:
    box = Mailbox()
    plan = [
        {"_tool": "send", "to": "ann", "_outputPath": "†state.a"},
        {"_tool": "send_later", "to": "bob", "_outputPath": "†state.b"},
    ]
    result = run(plan, [send, send_later], context=box)
    assert sorted(box.sent) == ["ann", "bob"]
    assert sorted(result.state.values()) == [1, 2]
    assert result.calls[0].arguments == {"to": "ann"}  # the context is no argument


def test_the_context_names_the_tool_call_and_attempt() -> None:
    seen: list[Context[str]] = []

    @obelisk.tool(retry=RetryPolicy(attempts=2))
    def flaky(ctx: Context[str]) -> str:
        """Fails on the first attempt."""
        seen.append(ctx)
        if ctx.attempt == 1:
            raise RuntimeError("once")
        return ctx.deps

    plan = [{"_tool": "book", "flight_id": "x"}, {"_tool": "flaky", "_outputPath": "†state.f"}]
    result = run(plan, [book, flaky], context="the world")
    assert result.state == {"f": "the world"}
    assert [(c.deps, c.tool, c.call, c.attempt) for c in seen] == [
        ("the world", "flaky", 1, 1),
        ("the world", "flaky", 1, 2),
    ]


def test_a_tool_that_needs_context_fails_without_one() -> None:
    result = run([{"_tool": "send", "to": "ann", "_outputPath": "†state.n"}], [send])
    record = result.calls[0]
    assert (record.status, record.attempts) == ("failed", 0)
    assert record.error == {
        "type": "UsageError",
        "message": "tool 'send' needs a run context (its parameter 'ctx' is an obelisk.Context); "
        "pass context= to obelisk.run, run_sync or Loop",
    }


def test_a_plan_cannot_pass_the_context() -> None:
    checked = obelisk.check([{"_tool": "send", "to": "ann", "ctx": "mine"}], [send])
    assert [str(d) for d in checked.diagnostics] == [
        "error[invalid_argument] #0 send, args.ctx: unexpected argument 'ctx'; send takes to"
    ]


def test_a_schema_tool_with_a_context_parameter() -> None:
    def deliver(to: str, world: Any) -> int:
        world.deps.sent.append(to)
        return len(world.deps.sent)

    t = Tool.from_schema(
        {
            "type": "function",
            "function": {
                "name": "deliver",
                "parameters": {
                    "type": "object",
                    "properties": {"to": {"type": "string"}},
                    "required": ["to"],
                },
            },
        },
        function=deliver,
        context_parameter="world",
    )
    box = Mailbox()
    result = run([{"_tool": "deliver", "to": "cy", "_outputPath": "†state.n"}], [t], context=box)
    assert (result.state, box.sent) == ({"n": 1}, ["cy"])


def test_the_loop_passes_its_context_to_every_run_and_to_delegates() -> None:
    research = Tool.from_schema(
        {
            "name": "research",
            "_delegate": True,
            "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
            "output": {"type": "integer"},
        }
    )

    def respond(request: obelisk.Request) -> Any:
        turn = request.config["turn"]
        if request.config.get("depth"):  # the delegate's own loop
            if turn == 1:
                return {"calls": [{"_tool": "send", "to": "†input.to", "_outputPath": "†state.n"}]}
            return {"calls": [], "output": "†state.n"}
        if turn == 1:
            return {
                "calls": [
                    {"_tool": "send", "to": "ann", "_outputPath": "†state.first"},
                    {"_tool": "research", "to": "bob", "_outputPath": "†state.second"},
                ]
            }
        return {"calls": [], "output": "†state"}

    box = Mailbox()
    loop = Loop(ScriptedModel(respond=respond), [send, research], context=box)
    assert loop.context is box
    result = loop.run_sync()
    assert sorted(box.sent) == ["ann", "bob"]
    assert sorted(result.output.values()) == [1, 2]
    described = next(m for m in result.turns[0].request.context if m.type == "tool")
    send_description = next(t for t in described.tools if t["name"] == "send")
    assert send_description["parameters"]["properties"] == {"to": {"type": "string"}}
