"""``obelisk resume --otel``, ``obelisk worker --otel`` and ``obelisk run-many --otel``
send OTLP/HTTP to ``$OTEL_EXPORTER_OTLP_ENDPOINT`` as ``run --otel`` does (issue 30,
point 1; docs/observability.md, docs/cli.md): a receiver on loopback, in this process,
decodes what arrives.  The commands run in this process too (typer's runner), which is
faster than a subprocess; each flushes its spans before it returns."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from obelisk import tool

@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n

@tool(requires_approval=True)
def refund(amount: int) -> str:
    """Give money back."""
    return f"refunded {amount}"
'''

PLAN = [
    {"_tool": "double", "n": 3, "_outputPath": "†state.a"},
    {"_tool": "refund", "amount": "†state.a", "_outputPath": "†state.r"},
]


class Receiver:
    """An OTLP/HTTP traces endpoint on loopback that keeps every span it receives."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = ExportTraceServiceRequest()
                request.ParseFromString(self.rfile.read(int(self.headers["content-length"])))
                for resource_spans in request.resource_spans:
                    for scope in resource_spans.scope_spans:
                        received.spans.extend(scope.spans)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def names(self) -> list[str]:
        return sorted(span.name for span in self.spans)


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    found = Receiver()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.url)
    try:
        yield found
    finally:
        found.server.shutdown()


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "otel_tools.py").write_text(TOOLS)
    (tmp_path / "p.json").write_text(json.dumps(PLAN))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("otel_tools", None)
    return tmp_path


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def attributes(span: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in span.attributes:
        kind = item.value.WhichOneof("value")
        found[item.key] = getattr(item.value, kind) if kind else None
    return found


def approved(tmp: Path) -> str:
    """Run r1 of the plan in runs.db, untraced, up to its approval; approve it; returns
    the approval id."""
    done = cli("run", "p.json", "--tools", "otel_tools.py", "--journal", "runs.db",
               "--run-id", "r1")  # fmt: skip
    assert done.exit_code == 1, done.output
    (row,) = json.loads(cli("approvals", "list", "--journal", "runs.db", "--json").stdout)
    assert cli("approve", row["id"], "--journal", "runs.db").exit_code == 0
    return str(row["id"])


def test_obelisk_resume_otel_sends_the_resumed_runs_spans(receiver: Receiver, tmp: Path) -> None:
    approval = approved(tmp)
    assert receiver.spans == []  # the first run was not traced
    done = cli("resume", "r1", "--journal", "runs.db", "--tools", "otel_tools.py", "--otel")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"a": 6, "r": "refunded 6"}
    assert receiver.names() == ["execute_tool double", "execute_tool refund", "invoke_workflow"]
    spans = {span.name: span for span in receiver.spans}
    run, replayed, paid = (
        spans[name] for name in ("invoke_workflow", "execute_tool double", "execute_tool refund")
    )
    assert attributes(run)["obelisk.run.id"] == "r1"
    assert replayed.parent_span_id == paid.parent_span_id == run.span_id
    assert attributes(replayed)["obelisk.call.replayed"] is True
    assert attributes(paid)["obelisk.approval.id"] == approval
    assert attributes(paid)["obelisk.call.status"] == "succeeded"
    assert [link.span_id for link in paid.links] == [replayed.span_id]


def test_obelisk_worker_otel_sends_the_spans_of_the_runs_it_finishes(
    receiver: Receiver, tmp: Path
) -> None:
    approval = approved(tmp)
    done = cli("worker", "--journal", "runs.db", "--tools", "otel_tools.py", "--once", "--otel")
    assert done.exit_code == 0, done.output
    assert "r1 completed" in done.stdout
    assert receiver.names() == ["execute_tool double", "execute_tool refund", "invoke_workflow"]
    (paid,) = [span for span in receiver.spans if span.name == "execute_tool refund"]
    assert attributes(paid)["obelisk.approval.id"] == approval


def test_obelisk_run_many_otel_sends_one_workflow_per_run(receiver: Receiver, tmp: Path) -> None:
    (tmp / "one.json").write_text(json.dumps(PLAN[:1]))
    (tmp / "inputs.jsonl").write_text("{}\n{}\n")
    done = cli("run-many", "one.json", "--inputs", "inputs.jsonl", "--tools", "otel_tools.py",
               "--otel", "-o", "out.jsonl")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert receiver.names() == ["execute_tool double"] * 2 + ["invoke_workflow"] * 2
