"""What users pay for real results: calls that return JSON objects and read their fields.

The DAG is the overhead benchmark's layered one (``run_overhead.layered``: 50 calls
wide, each call depends on one or two calls of the layer before).  Three kinds of
result, one tool per kind, the same DAG, the same number of reads per call:

* ``int``: zero work returning ``0``; a call reads its dependencies' whole values
  (``†state.r12``): the zero-work reference, as in the overhead table;
* ``0.5 KB``: an order record (about 500 bytes as compact JSON: an owner object,
  three line items, tags, metadata);
* ``20 KB``: a search result (about 20,000 bytes: a query, an owner and a list of
  records with nested legs, prices and seats).

For objects, a call reads one field of each dependency: ``†state.r12.items[0].id``
of its first, ``†state.r30.owner.name`` of its second.  A tool returns objects from
a pool built before the clock starts (16 distinct objects per kind, taken in turn),
so the figures measure the engines, not the tools building their results.

Systems:

* ``floor``: the minimal asyncio scheduler of ``run_overhead.floor`` (a node starts
  from its last dependency's completion callback), which also keeps each result in
  a list and reads the same fields with plain subscripts before calling the same
  tool function: no state, no checks, no copies;
* ``obelisk``: ``obelisk.run_sync`` of the plan, checking included;
* ``langgraph`` (the ``bench`` extra; skipped when missing): the same nodes as a
  ``StateGraph`` (``competitors.langgraph_runner.payload_runner``), compiled once per
  DAG and kind before the clock starts; each run is timed inside its event loop, as
  in the overhead table.

Every figure is µs per call, wall time (``time.perf_counter``) beside CPU time
(``time.process_time``), the median of ``repeat`` runs; each run's results are
checked after its clock stops.  The systems and kinds take turns, one run each per
round (floor int, floor 0.5 KB, ..., obelisk int, ..., LangGraph int, ..., floor
int, ...), so a change in the machine's load hits them alike.  Ratios, wall by wall
and CPU by CPU: each system ÷ the floor, and each kind ÷ ``int`` for the same system
(the target for obelisk: ``0.5 KB ÷ int`` at most 1.5x).  Each is the median of the
ratios of each round's two runs, measured side by side (:func:`paired_ratio`): a
machine that gets slower or faster between rounds moves a ratio of two medians,
taken from different rounds, but not these.

Sizes: ``int`` and ``0.5 KB`` at 1k and 5k calls, ``20 KB`` at 1k (``--sizes`` and
``--large-sizes`` choose others; 5k calls of 20 KB took 37 s of CPU and a peak RSS
of 3.2 GB a run before the lean-core work);
``--quick``: 1k calls, floor and obelisk only, one run.

Run ``python -m benchmarks.payload [--quick] [--repeat N] [--sizes 1000,5000]
[--large-sizes 1000] [--json]``; ``python -m benchmarks`` includes it.
``--profile [--kind "20 KB"]`` prints a cProfile of one obelisk run of 1k calls
(0.5 KB by default) instead: the top functions by own time and by cumulative time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import itertools
import json
import pstats
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import obelisk

from .run_overhead import layered
from .timing import Samples, Times, cpu_wall, fresh, median_times, paired_ratio, per_call_us

__all__ = [
    "KINDS",
    "LARGE_SIZES",
    "SIZES",
    "TARGET",
    "Kind",
    "collect",
    "floor",
    "kind",
    "large_value",
    "markdown",
    "measure",
    "measure_kinds",
    "measure_samples",
    "plan_for",
    "small_value",
]

SIZES = (1_000, 5_000)
LARGE_SIZES = (1_000,)
TARGET = 1.5
"""The payload target: obelisk's µs per call with 0.5 KB objects ÷ with zero-work ints."""
POOL = 16

Read = Callable[[Any], Any]


def small_value(k: int) -> dict[str, Any]:
    """An order record of about 500 bytes (compact JSON)."""
    return {
        "id": f"ord-{k:06d}",
        "status": "shipped",
        "total": 129.5 + k,
        "currency": "EUR",
        "owner": {
            "id": f"cus-{k:05d}",
            "name": f"Ada Lovelace {k}",
            "email": f"ada{k}@example.com",
            "tier": "gold",
        },
        "items": [
            {"id": f"sku-{k}-{j}", "name": f"Notebook {j}", "qty": j + 1, "price": 19.9 + j}
            for j in range(3)
        ],
        "tags": ["priority", "gift"],
        "shipping": {"method": "express", "city": "Lisbon", "country": "PT"},
        "meta": {"created": "2024-05-01T12:00:00Z", "source": "web", "version": 3},
    }


def large_value(k: int, target_bytes: int = 20_000) -> dict[str, Any]:
    """A search result of about ``target_bytes`` bytes (compact JSON)."""
    records: list[dict[str, Any]] = []
    value: dict[str, Any] = {
        "id": f"search-{k:06d}",
        "total": 0,
        "owner": {"id": f"cus-{k:05d}", "name": f"Ada Lovelace {k}"},
        "query": {"from": "AMS", "to": "LIS", "date": "2024-06-01", "passengers": 2},
        "items": records,
    }
    while len(json.dumps(value, separators=(",", ":"))) < target_bytes:
        i = len(records)
        records.append(
            {
                "id": f"F{k:03d}-{i:04d}",
                "legs": [{"from": "AMS", "to": "LIS", "minutes": 150 + i % 60}],
                "price": {"amount": 99.5 + i, "currency": "EUR"},
                "seats": [{"row": r, "free": (r + i) % 3 != 0} for r in range(4)],
            }
        )
        value["total"] = len(records)
    return value


class Kind:
    """One kind of result: its tool (for obelisk and the floor alike) and its reads."""

    def __init__(
        self,
        label: str,
        tool_name: str,
        pool: list[Any],
        fields: tuple[str, str],
        reads: tuple[Read, Read],
    ) -> None:
        self.label = label
        self.pool = pool
        self.fields = fields
        self.reads = reads
        self.bytes = len(json.dumps(pool[0], separators=(",", ":")))
        taken = itertools.cycle(pool)

        async def produce(a: Any = None, b: Any = None) -> Any:
            return next(taken)

        self.produce: Callable[..., Awaitable[Any]] = produce
        self.tool = obelisk.Tool.from_function(
            produce, name=tool_name, description=f"Return a {label} result."
        )


def _whole(value: Any) -> Any:
    return value


def _item_id(value: Any) -> Any:
    return value["items"][0]["id"]


def _owner_name(value: Any) -> Any:
    return value["owner"]["name"]


def kind(label: str) -> Kind:
    """A fresh :class:`Kind` (its pool built now): ``int``, ``0.5 KB`` or ``20 KB``."""
    if label == "int":
        return Kind(label, "zero", [0], ("", ""), (_whole, _whole))
    objects = (".items[0].id", ".owner.name"), (_item_id, _owner_name)
    if label == "0.5 KB":
        return Kind(label, "order", [small_value(k) for k in range(POOL)], *objects)
    if label == "20 KB":
        return Kind(label, "search", [large_value(k) for k in range(POOL)], *objects)
    raise ValueError(f"unknown kind {label!r}")


KINDS = ("int", "0.5 KB", "20 KB")


def plan_for(deps: list[list[int]], found: Kind) -> list[dict[str, Any]]:
    """One call per node writing ``†state.r<node>``; arguments ``a``/``b`` read its
    dependencies (the whole value for ``int``, one field of an object otherwise)."""
    calls = []
    for node, node_deps in enumerate(deps):
        call: dict[str, Any] = {"_tool": found.tool.name, "_outputPath": f"†state.r{node}"}
        for name, dep, path in zip("ab", node_deps, found.fields, strict=False):
            call[name] = f"†state.r{dep}{path}"
        calls.append(call)
    return calls


async def floor(deps: list[list[int]], found: Kind) -> list[Any]:
    """The reference scheduler (``run_overhead.floor``) passing real values: each
    node's result is kept in a list and its successors read their fields from it."""
    n = len(deps)
    results: list[Any] = [None] * n
    waiting = [len(d) for d in deps]
    successors: list[list[int]] = [[] for _ in range(n)]
    for node, node_deps in enumerate(deps):
        for dep in node_deps:
            successors[dep].append(node)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    left = [n]
    produce, reads = found.produce, found.reads

    async def work(node: int) -> Any:
        args = [read(results[d]) for read, d in zip(reads, deps[node], strict=False)]
        return await produce(*args)

    def finished(node: int, task: asyncio.Task[Any]) -> None:
        results[node] = task.result()
        left[0] -= 1
        for successor in successors[node]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                start(successor)
        if left[0] == 0:
            done.set_result(None)

    def start(node: int) -> None:
        task = loop.create_task(work(node))
        task.add_done_callback(lambda t, node=node: finished(node, t))

    for node in range(n):
        if waiting[node] == 0:
            start(node)
    await done
    return results


def _check_values(values: list[Any], found: Kind, system: str) -> None:
    """Every node holds a value of the pool (compared by value)."""
    by_id = {v["id"] if isinstance(v, dict) else v: v for v in found.pool}
    wrong = [
        i
        for i, v in enumerate(values)
        if by_id.get(v["id"] if isinstance(v, dict) else v, ...) != v
    ]
    assert not wrong, f"{system}: nodes {wrong[:5]} hold no {found.label} result"


def _obelisk_checked(deps: list[list[int]], found: Kind) -> Callable[[Any], None]:
    def check(result: Any) -> None:
        bad = [c.index for c in result.calls if c.status != "succeeded"]
        assert result.status == "completed" and not bad, f"obelisk: calls {bad[:5]} failed"
        _check_values([result.state[f"r{i}"] for i in range(len(deps))], found, "obelisk")

    return check


def _langgraph() -> Any | None:
    try:
        from .competitors import langgraph_runner
    except ImportError:
        return None
    return langgraph_runner


def _runner(deps: list[list[int]], found: Kind, system: str) -> Callable[[], tuple[float, float]]:
    """A function that runs ``deps`` once with results of kind ``found`` on ``system``,
    checks the results after the clock stops and gives the run's ``(wall, cpu)``
    seconds.  LangGraph's graph is compiled here, once, and each run is timed inside
    its event loop (as in the overhead table); the floor's and obelisk's runs are
    timed whole, event loop included."""
    if system == "floor":
        return _timed(
            lambda: asyncio.run(floor(deps, found)),
            lambda values: _check_values(values, found, "floor"),
        )
    if system == "obelisk":
        plan = plan_for(deps, found)
        return _timed(lambda: obelisk.run_sync(plan, [found.tool]), _obelisk_checked(deps, found))
    if system == "langgraph":
        runner = _langgraph()
        if runner is None:
            raise ValueError("langgraph is not installed")
        run_once = runner.payload_runner(deps, found.produce, found.reads)

        def run_langgraph() -> tuple[float, float]:
            fresh()
            gc.collect()
            timing, values = run_once()
            _check_values(values, found, "langgraph")
            return timing.run_s, timing.cpu_s

        return run_langgraph
    raise ValueError(f"unknown system {system!r}")


def _timed(
    run: Callable[[], Any], check: Callable[[Any], None]
) -> Callable[[], tuple[float, float]]:
    def once() -> tuple[float, float]:
        taken = median_times(run, 1, check)
        return taken["wall"], taken["cpu"]

    return once


def measure_kinds(
    deps: list[list[int]], kinds: list[Kind], repeat: int, systems: tuple[str, ...]
) -> list[dict[str, Times | None]]:
    """Median seconds per run of ``deps`` with results of each kind, per system
    (:func:`measure_samples`, reduced to medians); ``None`` where a system is missing."""
    return [
        {system: None if taken is None else cpu_wall(taken) for system, taken in found.items()}
        for found in measure_samples(deps, kinds, repeat, systems)
    ]


def measure_samples(
    deps: list[list[int]], kinds: list[Kind], repeat: int, systems: tuple[str, ...]
) -> list[dict[str, Samples | None]]:
    """Seconds of each run of ``deps`` with results of each kind, per system; each
    run's results are checked after its clock stops; ``None`` where a system is
    missing.

    The systems and kinds take turns, one run each per round (floor int, floor
    0.5 KB, ..., obelisk int, ..., LangGraph int, ..., floor int, ...), so a change in
    the machine's load hits them alike, and the ``i``-th samples of any two were
    measured side by side (:func:`paired_ratio`)."""
    present = [s for s in systems if s != "langgraph" or _langgraph() is not None]
    runs = {s: [_runner(deps, kind_, s) for kind_ in kinds] for s in present}
    taken: dict[str, list[Samples]] = {s: [[] for _ in kinds] for s in present}
    for _ in range(repeat):
        for system in present:
            for run, own in zip(runs[system], taken[system], strict=True):
                own.append(run())
    return [
        {s: taken[s][position] if s in taken else None for s in systems}
        for position in range(len(kinds))
    ]


def measure(
    deps: list[list[int]], found: Kind, repeat: int, systems: tuple[str, ...]
) -> dict[str, Times | None]:
    """:func:`measure_kinds` of one kind."""
    return measure_kinds(deps, [found], repeat, systems)[0]


def _paired(samples: Samples | None, reference: Samples | None) -> Times | None:
    """``samples ÷ reference``, paired round by round; None where either is missing."""
    if samples is None or reference is None:
        return None
    return paired_ratio(samples, reference)


def collect(
    quick: bool,
    repeat: int,
    sizes: tuple[int, ...] | None = None,
    large_sizes: tuple[int, ...] | None = None,
    systems: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Each kind at each size on each system: ``int`` and ``0.5 KB`` at ``sizes``
    (default 1k and 5k calls), ``20 KB`` at ``large_sizes`` (default 1k, see the
    module's doc); ``quick``: 1k calls, floor and obelisk only."""
    if sizes is None:
        sizes = SIZES[:1] if quick else SIZES
    if large_sizes is None:
        large_sizes = LARGE_SIZES
    if systems is None:
        systems = ("floor", "obelisk") if quick else ("floor", "obelisk", "langgraph")
    kinds = {label: kind(label) for label in KINDS}
    rows = []
    for n in sorted(set(sizes) | set(large_sizes)):
        chosen = [
            found
            for label, found in kinds.items()
            if n in (large_sizes if label == "20 KB" else sizes)
        ]
        measured = measure_samples(layered(n), chosen, repeat, systems)
        base = measured[0] if chosen[0].label == "int" else None
        for found, samples in zip(chosen, measured, strict=True):
            times = {s: None if t is None else cpu_wall(t) for s, t in samples.items()}
            row: dict[str, Any] = {
                "calls": n,
                "kind": found.label,
                "bytes": found.bytes if found.label != "int" else 0,
            } | {system: per_call_us(t, n) for system, t in times.items()}
            row["ratios"] = {
                "to_floor": {
                    s: _paired(samples[s], samples.get("floor")) for s in systems if s != "floor"
                },
                "to_int": {
                    s: _paired(samples[s], None if base is None else base[s]) for s in systems
                },
            }
            rows.append(row)
    return {"repeat": repeat, "systems": list(systems), "rows": rows, "target": TARGET}


def _us(found: Times | None) -> str:
    if found is None:
        return "skipped"
    return f"{found['wall']:,.1f} / {found['cpu']:,.1f} µs"


def _x(found: Times | None) -> str:
    return "—" if found is None else f"{found['wall']:.2f}x / {found['cpu']:.2f}x"


def target_ratio(results: dict[str, Any], calls: int | None = None) -> Times | None:
    """obelisk's ``0.5 KB ÷ int`` at ``calls`` (default: the smallest size run)."""
    rows = [r for r in results["rows"] if r["kind"] == "0.5 KB"]
    if calls is not None:
        rows = [r for r in rows if r["calls"] == calls]
    if not rows:
        return None
    found: Times | None = rows[0]["ratios"]["to_int"].get("obelisk")
    return found


def markdown(results: dict[str, Any]) -> str:
    """The report section (Markdown)."""
    systems = results["systems"]
    names = {"floor": "floor", "obelisk": "obelisk", "langgraph": "LangGraph"}
    head = ["calls", "result", *(names[s] for s in systems)]
    head += [f"{names[s]} ÷ floor" for s in systems if s != "floor"]
    head += [f"{names[s]} ÷ int" for s in systems]
    lines = [
        "**Payloads**: the layered DAG with tools returning JSON objects, each call reading "
        "one field of each dependency (`†state.r12.items[0].id`, `†state.r30.owner.name`); "
        "`int` is the zero-work reference reading whole values.  µs per call, wall / CPU, "
        f"median of {results['repeat']} runs; ratios wall / CPU.  The systems and kinds take "
        "turns, one run each per round; every ratio is the median of the ratios of the two "
        "runs of each round, measured side by side.  obelisk includes checking the plan; "
        "LangGraph excludes compiling its graph.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---:|" * len(head),
    ]
    for row in results["rows"]:
        size = "int" if row["kind"] == "int" else f"{row['kind']} ({row['bytes']:,} B)"
        cells = [f"{row['calls']:,}", size, *(_us(row.get(s)) for s in systems)]
        cells += [_x(row["ratios"]["to_floor"].get(s)) for s in systems if s != "floor"]
        cells += [_x(row["ratios"]["to_int"].get(s)) for s in systems]
        lines.append("| " + " | ".join(cells) + " |")
    found = [
        (r["calls"], r["ratios"]["to_int"].get("obelisk"))
        for r in results["rows"]
        if r["kind"] == "0.5 KB"
    ]
    measured = ", ".join(
        f"{calls:,} calls {x['cpu']:.2f}x CPU ({x['wall']:.2f}x wall)"
        for calls, x in found
        if x is not None
    )
    met = all(x is not None and x["cpu"] <= results["target"] for _, x in found)
    lines += [
        "",
        f"obelisk, 0.5 KB objects ÷ zero-work ints: {measured}; "
        f"{'meets' if met else 'misses'} the target of ≤ {results['target']:.1f}x.",
    ]
    return "\n".join(lines) + "\n"


def profile(n: int = 1_000, label: str = "0.5 KB", top: int = 15) -> str:
    """cProfile of one obelisk run (after an unprofiled one): the ``top`` functions
    by own time, then by cumulative time."""
    found = kind(label)
    deps = layered(n)
    plan = plan_for(deps, found)
    _obelisk_checked(deps, found)(obelisk.run_sync(plan, [found.tool]))
    profiler = cProfile.Profile()
    profiler.enable()
    obelisk.run_sync(plan, [found.tool])
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def _sizes(text: str | None) -> tuple[int, ...] | None:
    return None if text is None else tuple(int(part) for part in text.split(","))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k calls, floor and obelisk")
    parser.add_argument("--repeat", type=int, default=5, help="runs (median reported)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--profile", action="store_true", help="cProfile one 0.5 KB run")
    parser.add_argument("--kind", default="0.5 KB", choices=KINDS, help="for --profile")
    parser.add_argument("--sizes", help="calls for int and 0.5 KB, e.g. 1000,5000")
    parser.add_argument("--large-sizes", help="calls for 20 KB, e.g. 1000,5000")
    args = parser.parse_args(argv)
    if args.profile:
        sys.stdout.write(profile(label=args.kind))
        return 0
    results = collect(
        args.quick,
        1 if args.quick else args.repeat,
        _sizes(args.sizes),
        _sizes(args.large_sizes),
    )
    sys.stdout.write(json.dumps(results, indent=2) + "\n" if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
