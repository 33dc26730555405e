"""A local HTTP server on the loopback interface that replays recorded responses
(tests/data/models/), for the model adapters' tests: no network, the real SDKs and
their real HTTP clients.

``loopback`` is a :class:`Loopback`: ``url`` its root (``http://127.0.0.1:PORT``),
``recorded(name)`` reads a recorded response, ``answer(...)`` queues one (a status,
JSON or an SSE text, headers), ``hang()`` queues an answer that never comes,
``bodies`` holds the JSON bodies received and ``paths`` their paths. A request with
no queued response gets HTTP 599, which fails the test that sent it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

RECORDED = Path(__file__).resolve().parents[2] / "data" / "models"


class Loopback:
    def __init__(self) -> None:
        self.responses: list[tuple[int, str, bytes, dict[str, str]]] = []
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.release = threading.Event()  # set when the test ends: hanging answers stop
        self.url = ""

    @staticmethod
    def recorded(name: str) -> str:
        """The text of a recorded response in tests/data/models/."""
        return (RECORDED / name).read_text(encoding="utf-8")

    def answer(
        self,
        body: Any = None,
        *,
        status: int = 200,
        sse: str | None = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Queue a response: JSON ``body``, or the event stream ``sse``."""
        if sse is not None:
            kind, data = "text/event-stream", sse.encode()
        elif isinstance(body, (bytes, str)):
            kind, data = "application/json", body.encode() if isinstance(body, str) else body
        else:
            kind, data = "application/json", json.dumps(body).encode()
        for _ in range(times):
            self.responses.append((status, kind, data, dict(headers or {})))

    def hang(self, times: int = 1) -> None:
        """Queue an answer that never comes (until the test ends)."""
        for _ in range(times):
            self.responses.append((0, "", b"", {}))

    def take(
        self, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, str, bytes, dict[str, str]]:
        with self.lock:
            self.paths.append(path)
            self.headers.append(headers)
            try:
                self.bodies.append(json.loads(body) if body else {})
            except ValueError:
                self.bodies.append({"raw": body.decode("utf-8", "replace")})
            if not self.responses:
                return 599, "text/plain", b"no recorded response left", {}
            return self.responses.pop(0)


def _handler(server: Loopback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            status, kind, data, extra = server.take(self.path, body, dict(self.headers))
            if status == 0:  # hang
                server.release.wait(20)
                self.close_connection = True
                return
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = Loopback()
    http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{http.server_port}"
    try:
        yield server
    finally:
        server.release.set()
        http.shutdown()
        http.server_close()
