"""What OpenTelemetry tracing costs a run (docs/observability.md, "What it costs").

The run-overhead workload (``run_overhead.py``: zero-work async calls in a layered DAG,
50 wide, each call reading two calls of the layer before; the plan checked as never
seen) is run four ways, round by round so that the machine's drift hits all of them
alike:

* **off**: tracing never turned on in this process (the engine asks the runtime's
  instrument seam once per run and gets ``None``);
* **off again**: after ``obelisk.instrument()`` and ``uninstrument()`` (the same path:
  turning tracing off leaves nothing behind);
* **on**: ``obelisk.instrument(provider)`` with the SDK's ``TracerProvider`` and
  ``BatchSpanProcessor``, its exporter dropping the spans (so the figure is obelisk's
  spans and the SDK's pipeline, not a network): one ``invoke_workflow`` span and one
  ``execute_tool`` span per call, each with its links;
* **obelisk alone**: ``obelisk.instrument(NoOpTracerProvider())``, OpenTelemetry's API
  without an SDK: obelisk does all its work (attributes, links, the span made current in
  the call's task) and the spans it gets cost nothing, so ``obelisk alone - off`` is
  obelisk's own share of the cost and ``on - obelisk alone`` the SDK's, both measured
  inside the run.

Reported: µs per call, wall and CPU (``time.perf_counter`` / ``time.process_time``),
medians of ``--repeat`` (at least 5), and tracing's cost per call, ``on - off``, and
obelisk's own share, ``obelisk alone - off``, from the paired rounds.  Beside them, the
**SDK floor**: the same provider making, with no obelisk at all, one span per call of
the shape obelisk makes (five attributes, two links of two attributes each, three
attributes set at its end), in a loop that does nothing else: the least the SDK can take
for such a span (inside a run, where the caches hold the run too, it takes more:
``on - obelisk alone``).  The target (issue 30): under 30 µs per call with the batch
processor.  The cost of tracing *off* against the code before tracing existed is
``tracing_off.py`` (docs/performance.md, "Tracing", gives the figures).

Run ``python -m benchmarks.tracing_overhead [--repeat N] [--calls N ...]`` (needs the
``otel`` extra).
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link, NoOpTracerProvider

import obelisk
from obelisk.interpreter.tracing import uninstrument

from .run_overhead import layered, plan_for, zero
from .timing import fresh

__all__ = ["Dropped", "main", "measure", "sdk_floor"]


class Dropped(SpanExporter):
    """An exporter that counts the spans and keeps none."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to close."""


def _timed(action: Callable[[], Any]) -> tuple[float, float]:
    fresh()
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def sdk_floor(provider: TracerProvider, calls: int) -> None:
    """``calls`` spans of the shape obelisk makes for a call, made by the SDK alone."""
    tracer = provider.get_tracer("floor")
    root = tracer.start_span("invoke_workflow")
    parent = root.get_span_context()
    for index in range(calls):
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "zero",
            "gen_ai.tool.call.id": f"#{index}",
            "gen_ai.tool.type": "function",
            "obelisk.call.index": index,
        }
        links = [
            Link(parent, {"obelisk.link.path": f"†state.v{index}", "obelisk.link.call": index}),
            Link(parent, {"obelisk.link.path": f"†state.w{index}", "obelisk.link.call": index}),
        ]
        span = tracer.start_span("execute_tool zero", attributes=attributes, links=links)
        ending = {"obelisk.call.status": "succeeded", "obelisk.call.attempts": 1}
        span.set_attributes({**ending, "obelisk.call.paths_written": [f"†state.v{index}"]})
        span.end()
    root.end()


def measure(calls: int, repeat: int) -> dict[str, Any]:
    """The four ways, ``repeat`` rounds, on a layered plan of ``calls`` calls:
    ``{"calls", "off", "off_again", "on", "alone", "sdk_floor", "cost", "own"}``, each a
    ``{"wall", "cpu"}`` of µs per call (``cost``: the median of the rounds' ``on - off``,
    ``own``: of their ``alone - off``); ``spans``: spans the exporter received in the
    last traced round."""
    plan = plan_for(layered(calls))

    def run() -> None:
        result = obelisk.run_sync(plan, [zero])
        assert result.status == "completed"

    exporter = Dropped()
    provider = TracerProvider()
    provider.add_span_processor(
        BatchSpanProcessor(exporter, max_queue_size=max(calls * 2 + 10, 2048))
    )
    samples: dict[str, list[tuple[float, float]]] = {
        "off": [], "off_again": [], "on": [], "alone": [], "sdk_floor": [],
    }  # fmt: skip
    no_sdk = NoOpTracerProvider()
    run()  # warm: imports, the thread pool
    for _ in range(repeat):
        samples["off"].append(_timed(run))
        obelisk.instrument(provider)
        exporter.spans = 0
        samples["on"].append(_timed(run))
        provider.force_flush()  # the batch is sent outside the timed run
        traced = exporter.spans
        uninstrument()
        samples["off_again"].append(_timed(run))
        obelisk.instrument(no_sdk)
        samples["alone"].append(_timed(run))
        uninstrument()
        samples["sdk_floor"].append(_timed(lambda: sdk_floor(provider, calls)))
        provider.force_flush()
    spans = traced
    provider.shutdown()

    def per_call(pairs: list[tuple[float, float]]) -> dict[str, float]:
        return {
            "wall": statistics.median(p[0] for p in pairs) / calls * 1e6,
            "cpu": statistics.median(p[1] for p in pairs) / calls * 1e6,
        }

    def minus_off(name: str) -> list[tuple[float, float]]:
        return [
            (it[0] - off[0], it[1] - off[1])
            for it, off in zip(samples[name], samples["off"], strict=True)
        ]

    return {
        "calls": calls,
        "spans": spans,
        **{name: per_call(pairs) for name, pairs in samples.items()},
        "cost": per_call(minus_off("on")),
        "own": per_call(minus_off("alone")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds (medians; at least 5)")
    parser.add_argument("--calls", type=int, nargs="+", default=[1_000, 10_000])
    args = parser.parse_args(argv)
    repeat = max(args.repeat, 5)
    rows = [measure(n, repeat) for n in args.calls]
    print(
        f"tracing overhead, medians of {repeat} rounds (Python {platform.python_version()}, "
        f"{platform.machine()}); µs per call, wall / CPU\n"
    )
    print(
        "| calls | off | off again | on (batch processor) | tracing costs | "
        "obelisk's own share | SDK floor (spans alone) | spans |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        cells = [
            f"{row[name]['wall']:.1f} / {row[name]['cpu']:.1f}"
            for name in ("off", "off_again", "on", "cost", "own", "sdk_floor")
        ]
        print(f"| {row['calls']:,} | " + " | ".join(cells) + f" | {row['spans']:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
