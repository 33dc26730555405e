"""OpenTelemetry tracing of runs and loops (docs/observability.md).

``obelisk.instrument(tracer_provider=None)`` traces every run and loop of the process;
``obelisk.run(..., tracer_provider=...)`` one run (and what runs inside it), as do the
``tracer_provider=`` of ``obelisk.resume``, ``run_many`` and ``obelisk.Loop``.  The spans
follow the OpenTelemetry GenAI semantic conventions (:mod:`obelisk.interpreter.tracing.spans`).

This module imports no OpenTelemetry until tracing is turned on: it needs the ``otel``
extra (``pip install 'obelisk[otel]'``), and without it tracing raises
:class:`~obelisk.errors.MissingDependencyError` while everything else works.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from obelisk.errors import MissingDependencyError
from obelisk.interpreter.runtime import instrument as seam

if TYPE_CHECKING:
    from obelisk.interpreter.tracing.spans import SpanInstrument

__all__ = ["capture_content_default", "instrument", "traced", "uninstrument"]

_CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def capture_content_default() -> bool:
    """Whether arguments and results go into spans when nobody says:
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (default: no)."""
    return os.environ.get(_CAPTURE_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def _spans(tracer_provider: Any, capture_content: bool | None) -> SpanInstrument:
    """The span maker for ``tracer_provider`` (``None``: OpenTelemetry's global one)."""
    try:
        from opentelemetry import trace

        from obelisk.interpreter.tracing.spans import SpanInstrument
    except ImportError as exc:
        raise MissingDependencyError(
            "tracing needs OpenTelemetry, an optional extra: pip install 'obelisk[otel]' "
            f"(from a clone: pip install '.[otel]'); {exc}"
        ) from None
    tracer = trace.get_tracer("obelisk", tracer_provider=tracer_provider)
    capture = capture_content_default() if capture_content is None else bool(capture_content)
    return SpanInstrument(tracer, capture_content=capture)


def instrument(tracer_provider: Any = None, *, capture_content: bool | None = None) -> None:
    """Trace every run and execution loop of this process with OpenTelemetry spans
    (docs/observability.md, "The span model").

    ``tracer_provider``: an OpenTelemetry ``TracerProvider`` (``None``: the global one,
    ``opentelemetry.trace.get_tracer_provider()``).  ``capture_content``: record each
    call's arguments and result (``gen_ai.tool.call.arguments`` / ``.result``), which
    may hold personal data; ``None``: only when the environment variable
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``.  Calling it
    again replaces the earlier setting; :func:`uninstrument` turns it off.

    Raises :class:`~obelisk.errors.MissingDependencyError` without the ``otel`` extra.
    """
    seam.install(_spans(tracer_provider, capture_content))


def uninstrument() -> None:
    """Stop tracing what :func:`instrument` turned on."""
    seam.install(None)


@contextmanager
def traced(tracer_provider: Any, *, capture_content: bool | None = None) -> Iterator[None]:
    """The runs started in the block, and those nested in them, are traced with
    ``tracer_provider`` (what ``obelisk.run(..., tracer_provider=...)`` does, and the
    ``tracer_provider=`` of ``resume``, ``run_many`` and ``Loop``)."""
    with seam.scoped(_spans(tracer_provider, capture_content)):
        yield
