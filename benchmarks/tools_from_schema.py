"""Tools from JSON descriptions, and a big result's way into the state (docs/tools.md).

1. ``build``: µs per ``Tool.from_schema(spec, function=fn)`` for a realistic
   5-parameter OpenAI function spec (strings with descriptions, a date, an integer
   with a minimum, an enum): the *first* build of a schema (cold: jsonschema checks it
   against its metaschema; each cold sample uses a schema never seen before) and
   *repeated* builds (the schema seen before, as when a server rebuilds its tools per
   request).  Reference, in the same run: the workaround this replaces, forging a
   ``__signature__`` from the schema and calling ``Tool.from_function`` (pydantic).
2. ``big_result``: ``run_sync`` of a one-call plan whose tool returns a 20 KB nested
   object (a list of records with nested lists): µs per run, and how many times the
   result is copied on its way into the state and the log, counted by wrapping the
   copy functions the runtime calls (``COPIERS``: ``copy_json`` and
   ``to_jsonable_python`` in the state module, the JSON conversion in the outcome
   module (``from_json`` of the text, or ``to_jsonable_python``), and the JSON text
   the log keeps, ``to_json`` in the outcome or state module; those a version lacks
   are left out) during one extra run.

Every figure is the median of ``repeat`` runs (at least 5), in CPU time
(``time.process_time``) beside wall time (``time.perf_counter``).  Run
``python -m benchmarks.tools_from_schema [--quick] [--repeat N]``; ``python -m
benchmarks`` includes it.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

import obelisk

_fresh = itertools.count()

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "description": "IATA code of the departure airport"},
        "destination": {"type": "string", "description": "IATA code of the arrival airport"},
        "date": {"type": "string", "format": "date", "description": "Day of departure"},
        "passengers": {"type": "integer", "minimum": 1, "description": "How many travel"},
        "cabin": {"type": "string", "enum": ["economy", "premium", "business"]},
    },
    "required": ["origin", "destination", "date"],
    "additionalProperties": False,
}


def spec(fresh: bool = False) -> dict[str, Any]:
    """The OpenAI function spec; ``fresh``: with a description never used before, so
    its schema misses every cache."""
    parameters = json.loads(json.dumps(PARAMETERS))
    if fresh:
        parameters["properties"]["origin"]["description"] += f" ({next(_fresh)})"
    return {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Search flights between two airports on a day.",
            "parameters": parameters,
            "strict": False,
        },
    }


def search_flights(
    origin: str, destination: str, date: str, passengers: int = 1, cabin: str = "economy"
) -> list[dict[str, Any]]:
    """The function behind the spec."""
    return []


_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
}


def forged(description: dict[str, Any]) -> obelisk.Tool:
    """The workaround: forge a signature from the schema, then ``Tool.from_function``."""
    function = description["function"]
    schema = function["parameters"]
    required = set(schema.get("required", ()))
    parameters = []
    for name, prop in schema["properties"].items():
        annotation = (
            Literal[tuple(prop["enum"])] if "enum" in prop else _TYPES.get(prop.get("type"), Any)
        )
        default = inspect.Parameter.empty if name in required else None
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )

    def call(**arguments: Any) -> Any:
        return search_flights(**arguments)

    call.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in parameters}
    return obelisk.Tool.from_function(
        call, name=function["name"], description=function["description"]
    )


def timed(work: Callable[[], Any], n: int, repeat: int) -> dict[str, float]:
    """Median µs per call of ``work`` (``n`` calls a sample), CPU and wall."""
    cpu, wall = [], []
    for _ in range(repeat):
        started_cpu, started = time.process_time(), time.perf_counter()
        for _ in range(n):
            work()
        cpu.append((time.process_time() - started_cpu) / n * 1e6)
        wall.append((time.perf_counter() - started) / n * 1e6)
    return {"cpu_us": statistics.median(cpu), "wall_us": statistics.median(wall)}


def cold_timed(make: Callable[[dict[str, Any]], Any], repeat: int) -> dict[str, float]:
    """Median µs of one build of a never-seen schema (specs made before the clock starts)."""
    cpu, wall = [], []
    for _ in range(repeat):
        fresh = spec(fresh=True)
        started_cpu, started = time.process_time(), time.perf_counter()
        make(fresh)
        cpu.append((time.process_time() - started_cpu) * 1e6)
        wall.append((time.perf_counter() - started) * 1e6)
    return {"cpu_us": statistics.median(cpu), "wall_us": statistics.median(wall)}


def build(repeat: int = 5, n: int = 2000) -> dict[str, Any]:
    """µs per tool: from_schema cold and repeated, and the forged-signature reference."""
    described = spec()
    obelisk.Tool.from_schema(described, function=search_flights)  # warm the schema cache

    def runnable(s: dict[str, Any]) -> obelisk.Tool:
        return obelisk.Tool.from_schema(s, function=search_flights)

    return {
        "parameters": len(PARAMETERS["properties"]),
        "from_schema_cold": cold_timed(runnable, repeat),
        "from_schema_repeated": timed(lambda: runnable(described), n, repeat),
        "latent_repeated": timed(lambda: obelisk.Tool.from_schema(described), n, repeat),
        "forged_signature": timed(lambda: forged(described), max(n // 20, 10), repeat),
    }


def big_value(target_bytes: int = 20_000) -> dict[str, Any]:
    """A nested JSON object of about ``target_bytes`` bytes (as compact JSON)."""
    records: list[dict[str, Any]] = []
    value: dict[str, Any] = {"query": {"from": "AMS", "to": "LIS"}, "flights": records}
    while len(json.dumps(value, separators=(",", ":"))) < target_bytes:
        i = len(records)
        records.append(
            {
                "id": f"F{i:04d}",
                "legs": [{"from": "AMS", "to": "LIS", "minutes": 150 + i % 60}],
                "price": {"amount": 99.5 + i, "currency": "EUR"},
                "seats": [{"row": r, "free": (r + i) % 3 != 0} for r in range(4)],
            }
        )
    return value


COPIERS = (
    ("state", "copy_json"),
    ("state", "to_jsonable_python"),
    ("outcome", "to_jsonable_python"),
    ("outcome", "from_json"),
    ("state", "to_json"),
    ("outcome", "to_json"),
)
"""The runtime's copy functions, by module: wrapped to count copies of a result
(``to_json`` makes the log's JSON text, counted apart as ``texts``; ``from_json``
makes a copy by parsing that text)."""
_TEXTS = ("state.to_json", "outcome.to_json")


def count_copies(value: Any, plan: list[dict[str, Any]], tools: list[Any]) -> dict[str, int]:
    """Run the plan once with the runtime's copy functions wrapped: how often each
    (``module.function``; absent ones are left out) is called on the big result or a
    copy of it (compared by value), plus ``total``."""
    from obelisk.interpreter.runtime import outcome, state

    modules = {"state": state, "outcome": outcome}
    counts: dict[str, int] = {}
    patched: list[tuple[Any, str, Any]] = []
    for module_name, name in COPIERS:
        module, original = modules[module_name], getattr(modules[module_name], name, None)
        if original is None:
            continue
        key = f"{module_name}.{name}"
        counts[key] = 0

        def counted(item: Any, *args: Any, _key: str = key, _f: Any = original, **kw: Any) -> Any:
            if (isinstance(item, dict) and item == value) or (
                isinstance(item, bytes) and item[:1] == b"{" and json.loads(item) == value
            ):
                counts[_key] += 1
            return _f(item, *args, **kw)

        patched.append((module, name, original))
        setattr(module, name, counted)
    try:
        result = obelisk.run_sync(plan, tools)
    finally:
        for module, name, original in patched:
            setattr(module, name, original)
    assert result.state == {"flights": value}, "the result did not reach the state"
    counts["texts"] = sum(n for key, n in counts.items() if key in _TEXTS)
    counts["total"] = sum(n for key, n in counts.items() if key not in _TEXTS and key != "texts")
    return counts


def big_result(repeat: int = 5, n: int = 50) -> dict[str, Any]:
    """µs per ``run_sync`` of one call returning a 20 KB object, and its copies."""
    value = big_value()

    @obelisk.tool
    def fetch_all() -> Any:
        """Return the big object."""
        return value

    plan = [{"_tool": "fetch_all", "_outputPath": "†state.flights"}]
    found: dict[str, Any] = {"bytes": len(json.dumps(value, separators=(",", ":")))}
    found["run"] = timed(lambda: obelisk.run_sync(plan, [fetch_all]), n, repeat)
    found["copies"] = count_copies(value, plan, [fetch_all])
    return found


def collect(quick: bool, repeat: int) -> dict[str, Any]:
    """Both measurements (``quick``: fewer calls per sample; medians of >= 5 runs)."""
    repeat = max(repeat, 5)
    return {
        "build": build(repeat, 200 if quick else 2000),
        "big_result": big_result(repeat, 10 if quick else 50),
    }


def markdown(results: dict[str, Any]) -> str:
    """The report section for ``results/results.md``."""
    b, r = results["build"], results["big_result"]

    def us(found: dict[str, float]) -> str:
        return f"{found['cpu_us']:,.1f} µs CPU ({found['wall_us']:,.1f} µs wall)"

    counted = r["copies"]
    copies = ", ".join(
        f"{n} `{k}`" for k, n in counted.items() if k not in ("total", "texts", *_TEXTS) and n
    )
    made = ", ".join(f"{counted[k]} `{k}`" for k in _TEXTS if counted.get(k))
    kept = f"; the log keeps its JSON text ({made})" if made else ""
    return (
        f"**Tools from JSON descriptions** ({b['parameters']}-parameter OpenAI spec, "
        f"`Tool.from_schema(spec, function=fn)`, per tool): first build of a schema "
        f"{us(b['from_schema_cold'])}, repeated {us(b['from_schema_repeated'])} "
        f"(latent {us(b['latent_repeated'])}); forging a signature for "
        f"`Tool.from_function`: {us(b['forged_signature'])}.\n\n"
        f"**A {r['bytes'] / 1000:.0f} KB result** through `run_sync`: {us(r['run'])} per run; "
        f"{counted['total']} {'copy' if counted['total'] == 1 else 'copies'} of it as objects "
        f"on the way to the state and the log ({copies}){kept}.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args(argv)
    results = collect(args.quick, args.repeat)
    sys.stdout.write(json.dumps(results, indent=2) + "\n" if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
