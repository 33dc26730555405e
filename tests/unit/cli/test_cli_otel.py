"""``obelisk run --otel`` and ``obelisk loop --otel`` send OTLP/HTTP to
``$OTEL_EXPORTER_OTLP_ENDPOINT`` (issue 30, point 1; docs/observability.md): a receiver
on loopback, in this process, decodes what arrives.  The real backend is
tests/integration/test_otel_backend.py's."""

from __future__ import annotations

import json
import os
import subprocess
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


class Receiver:
    """An OTLP/HTTP traces endpoint on loopback that keeps every span it receives."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self.resources: list[dict[str, Any]] = []
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                for resource_spans in request.resource_spans:
                    attributes = resource_spans.resource.attributes
                    received.resources.append({a.key: a.value.string_value for a in attributes})
                    for scope in resource_spans.scope_spans:
                        received.spans.extend(scope.spans)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    try:
        yield found
    finally:
        found.server.shutdown()


def obelisk(*args: str, endpoint: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}  # obelisk as pytest has it
    env.pop("OTEL_SERVICE_NAME", None)
    command = [sys.executable, "-m", "obelisk", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def attributes(span: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in span.attributes:
        kind = item.value.WhichOneof("value")
        found[item.key] = getattr(item.value, kind) if kind else None
    return found


def test_obelisk_run_otel_sends_the_runs_spans(receiver: Receiver, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            [
                {"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.x"},
                {"_tool": "multiply", "a": "†state.x", "b": 10, "_outputPath": "†state.y"},
            ]
        ),
        encoding="utf-8",
    )
    done = obelisk("run", "--otel", "--json", str(plan), endpoint=receiver.url)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == {"x": 3, "y": 30}
    names = sorted(span.name for span in receiver.spans)  # sent before obelisk exited
    assert names == ["execute_tool add", "execute_tool multiply", "invoke_workflow"]
    assert receiver.resources[0]["service.name"] == "obelisk"
    spans = {span.name: span for span in receiver.spans}
    run, first, second = (
        spans[name] for name in ("invoke_workflow", "execute_tool add", "execute_tool multiply")
    )
    assert first.parent_span_id == second.parent_span_id == run.span_id
    (link,) = second.links
    assert link.span_id == first.span_id
    assert {a.key: a.value.string_value for a in link.attributes if a.key.endswith("path")} == {
        "obelisk.link.path": "†state.x"
    }
    assert attributes(second)["gen_ai.tool.call.id"] == "#1"


def test_obelisk_loop_otel_sends_the_agent_and_its_requests(
    receiver: Receiver, tmp_path: Path
) -> None:
    answers = tmp_path / "answers.jsonl"
    lines = [
        {"calls": [{"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.x"}]},
        {"calls": [], "output": "†state.x"},
    ]
    answers.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    given = tmp_path / "input.json"
    given.write_text("{}", encoding="utf-8")
    done = obelisk(
        "loop", "--otel", "--model", f"scripted:{answers}", "--input", str(given), "--json",
        endpoint=receiver.url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = sorted(span.name for span in receiver.spans)
    assert names == [
        "chat ScriptedModel", "chat ScriptedModel", "execute_tool add", "invoke_agent", "plan",
    ]  # fmt: skip


def test_otel_without_the_extra_exits_2_naming_it(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('[{"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.x"}]', "utf-8")
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if the otel extra were not installed\n"
        "from obelisk.cli.app import main\n"
        "sys.argv = ['obelisk', 'run', '--otel', sys.argv[1]]\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(plan)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert "--otel needs OpenTelemetry" in done.stderr
    assert "pip install 'obelisk[otel]'" in done.stderr
