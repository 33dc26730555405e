"""The primer of the plan language in the loop's instructions (issue 29, point 4;
docs/loop.md, "The primer"): one worked example built from the loop's own tools, with
an output path, a reference and an alternative; on by default, off with
``Loop(primer=False)`` so a benchmark can measure what it does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import obelisk
from obelisk import Registry
from obelisk.interpreter.loop.primer import primer_text

ROOT = Path(__file__).resolve().parents[3]
REGISTRIES = {
    path.parent.name: Registry.from_module(str(path))
    for path in sorted((ROOT / "examples").glob("*/tools.py"))
}


@obelisk.tool
def get_order(order_id: str) -> dict[str, Any]:
    """The order."""
    return {"id": order_id, "amount": 5}


@obelisk.tool
def refund(order: dict[str, Any], reason: str) -> str:
    """Refund an order."""
    return f"refunded {order['amount']}"


def texts(request: obelisk.Request) -> list[str]:
    return [m["text"] for m in request.to_data()["context"] if m["type"] == "text"]


def example_of(text: str) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(text.splitlines()[1])
    return answer


def test_the_primer_is_in_every_request_before_the_tools_and_the_same_each_turn() -> None:
    model = obelisk.ScriptedModel([{"calls": [], "output": None}, {"calls": [], "output": 1}])
    obelisk.Loop(model, [get_order, refund], instructions="Be brief.").run_sync()
    first, second = model.requests
    primer = texts(first)[2]
    assert texts(first)[1] == "Be brief."
    assert primer == texts(second)[2] == primer_text(Registry([get_order, refund]))
    kinds = [m["type"] for m in first.to_data()["context"]]
    assert kinds.index("tool") == 3  # instructions, yours, the primer, then the tools
    example = example_of(primer)
    assert example == {
        "calls": [
            {
                "_tool": "get_order",
                "order_id": "†input.order_id",
                "_outputPath": "†state.get_order",
            },
            {
                "_tool": "refund",
                "order": "†state.get_order",
                "reason": "†input.reason",
                "_outputPath": "†state.refund",
            },
        ],
        "output": None,
    }  # fmt: skip  (eager: the results come back in the state; the primer's last line finishes)
    assert "alternative" in primer and "reference" in primer and "_outputPath" in primer


def test_primer_false_leaves_it_out() -> None:
    model = obelisk.ScriptedModel([{"calls": [], "output": 1}])
    loop = obelisk.Loop(model, [get_order, refund], primer=False)
    loop.run_sync()
    assert loop.primer_text is None
    assert len(texts(model.requests[0])) == 1  # the loop's instructions only
    assert not any("example" in text for text in texts(model.requests[0]))


def test_a_lazy_loop_has_it_too() -> None:
    model = obelisk.ScriptedModel([{"calls": [], "output": 1}])
    obelisk.Loop(model, [get_order, refund], mode="lazy").run_sync()
    assert texts(model.requests[0])[1] == primer_text(Registry([get_order, refund]), "lazy")


def test_no_tools_no_primer() -> None:
    assert primer_text(Registry([])) is None


def test_each_examples_primer_answer_fits_its_schema_and_checks() -> None:
    """The worked example is a plan the loop would take: it fits the answer schema
    and ``check`` finds nothing wrong."""
    from jsonschema import Draft202012Validator

    for name, registry in REGISTRIES.items():
        for mode in ("eager", "lazy"):
            text = primer_text(registry, mode)  # type: ignore[arg-type]
            assert text is not None
            example = example_of(text)
            schema = obelisk.solution_schema(registry, None, mode=mode)  # type: ignore[arg-type]
            assert Draft202012Validator(schema).is_valid(example), (name, text)
            result = obelisk.check(example["calls"], registry, mode=mode)  # type: ignore[arg-type]
            errors = [str(d) for d in result.diagnostics if d.severity == "error"]
            assert errors == [], (name, text)
