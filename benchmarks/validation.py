"""What validating a call's arguments costs (docs/tools.md, "Validation").

1. ``validate_arguments``: µs per ``Tool.validate_arguments(args)`` (what the engine
   does once per call) for a 2-int function tool, a function tool with 6 mixed
   parameters (str, int, float, list[str], a nested pydantic model, an Optional),
   and the same 6 parameters as a JSON-schema tool (``Tool.from_schema``).
2. ``literals``: µs to check the literal arguments of 10,000 calls of one tool with
   2 literal arguments (str, float), as the checker does: one
   ``validate_argument(name, value)`` per argument, and, where the version has it,
   one ``Tool.validate_literals`` for all the calls.

Each figure is the best of ``repeat`` ``timeit`` runs (the machine may be shared),
in µs per call.  Run ``python -m benchmarks.validation [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import timeit
from typing import Any

from pydantic import BaseModel

import obelisk


class Address(BaseModel):
    street: str
    city: str
    zip: int | None = None


async def zero(a: int = 0, b: int = 0) -> int:
    return a + b


async def mixed(
    name: str,
    count: int,
    ratio: float,
    tags: list[str],
    address: Address,
    note: str | None = None,
) -> int:
    return 0


MIXED_ARGS: dict[str, Any] = {
    "name": "n",
    "count": 3,
    "ratio": 0.5,
    "tags": ["a", "b", "c"],
    "address": {"street": "Main 1", "city": "Lisbon", "zip": 1000},
    "note": None,
}


def mixed_schema_tool() -> obelisk.Tool:
    """The 6 mixed parameters as a JSON-schema tool (the function tool's own schema)."""
    parameters = json.loads(json.dumps(obelisk.tool(mixed).parameters))
    return obelisk.Tool.from_schema({"name": "mixed_schema", "parameters": parameters})


async def pay(customer: str, amount: float) -> int:
    return 0


def best_us(statement: Any, number: int, repeat: int) -> float:
    return min(timeit.repeat(statement, number=number, repeat=repeat)) / number * 1e6


def collect(repeat: int = 5) -> dict[str, float]:
    two, six, schema = obelisk.tool(zero), obelisk.tool(mixed), mixed_schema_tool()
    payer = obelisk.tool(pay)
    small = {"a": 0, "b": 0}
    results = {
        "2 ints (function)": best_us(lambda: two.validate_arguments(small), 20_000, repeat),
        "6 mixed (function)": best_us(lambda: six.validate_arguments(MIXED_ARGS), 10_000, repeat),
        "6 mixed (JSON schema)": best_us(
            lambda: schema.validate_arguments(MIXED_ARGS), 2_000, repeat
        ),
    }
    calls = [{"customer": f"c{i}", "amount": i * 0.5} for i in range(10_000)]

    def one_by_one() -> None:
        for call in calls:
            for name, value in call.items():
                payer.validate_argument(name, value)

    results["10k calls x 2 literals, validate_argument loop (total)"] = best_us(
        one_by_one, 1, repeat
    )
    batched = getattr(payer, "validate_literals", None)
    if batched is not None:
        results["10k calls x 2 literals, validate_literals (total)"] = best_us(
            lambda: batched(calls), 1, repeat
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    for label, us in collect(args.repeat).items():
        print(f"{label:58} {us:10.2f} µs")


if __name__ == "__main__":
    main()
