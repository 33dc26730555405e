"""Spans sent over OTLP/HTTP, as ``obelisk run --otel`` (and ``loop``, ``resume``,
``run-many`` and ``worker``) send them (docs/observability.md, "Sending runs to a
backend")."""

from __future__ import annotations

import os
from collections.abc import Callable

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from obelisk.interpreter.tracing import instrument, uninstrument

__all__ = ["export_otlp"]


def export_otlp() -> Callable[[], None]:
    """Trace every run of the process (:func:`~obelisk.interpreter.tracing.instrument`)
    into a batch of OTLP/HTTP exports to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default
    ``http://localhost:4318``; ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
    ``OTEL_EXPORTER_OTLP_HEADERS`` and the other standard variables apply), service
    ``obelisk`` unless ``OTEL_SERVICE_NAME`` says otherwise.  Returns the function that
    sends what is left and stops tracing."""
    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "obelisk"}
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    instrument(provider)

    def stop() -> None:
        uninstrument()
        provider.shutdown()  # flushes the batch

    return stop
