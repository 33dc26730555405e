"""``--otel``: send a run's OpenTelemetry spans to an OTLP endpoint (docs/observability.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from obelisk.cli.io import fail

__all__ = ["OtelOption", "start_otel"]

OtelOption = Annotated[
    bool,
    typer.Option(
        "--otel",
        help="Send OpenTelemetry spans over OTLP/HTTP to $OTEL_EXPORTER_OTLP_ENDPOINT "
        "(default http://localhost:4318; needs the otel extra).",
    ),
]


def start_otel(enabled: bool) -> Callable[[], None]:
    """Start exporting spans when ``enabled``; returns the function that flushes them
    and stops (one that does nothing when not enabled).  Exits 2 without the otel extra."""
    if not enabled:
        return _nothing
    try:
        from obelisk.interpreter.tracing.export import export_otlp
    except ImportError as exc:
        fail(f"--otel needs OpenTelemetry, an optional extra: pip install 'obelisk[otel]' ({exc})")
    return export_otlp()


def _nothing() -> None:
    """What stops tracing that never started."""
