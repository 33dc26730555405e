"""``obelisk view --serve``: the viewer's page on 127.0.0.1, following a run in progress
(docs/viewer.md).

``GET /`` is the page, ``GET /data.json`` the document, read again on every request (a
journal is read without its lock, so a running run goes on undisturbed); the page polls
``data.json`` once a second and draws again when it changed.  Only 127.0.0.1 is bound,
and a request whose ``Host`` is not this loopback address is refused (a web page
elsewhere cannot read a run through DNS rebinding).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from obelisk.errors import ObeliskError
from obelisk.viewer.page import document_json, render_page

__all__ = ["ViewServer"]

Reader = Callable[[], dict[str, Any]]


class ViewServer:
    """Serves the page of ``read()``'s document on ``127.0.0.1:port`` (``port=0``: a
    free port; :attr:`url` says which).  ``serve_forever()`` blocks; ``start()`` serves
    in a daemon thread; ``close()`` stops."""

    def __init__(self, read: Reader, port: int = 0) -> None:
        self.read = read
        handler = type("_Handler", (_Handler,), {"server_of": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/"
        self._thread: threading.Thread | None = None

    def document(self) -> dict[str, Any]:
        """The document now, marked live."""
        document = self.read()
        document["live"] = True
        return document

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> ViewServer:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Handler(BaseHTTPRequestHandler):
    server_of: ViewServer

    def do_GET(self) -> None:
        hosts = {f"127.0.0.1:{self.server_of.port}", f"localhost:{self.server_of.port}"}
        if self.headers.get("Host") not in hosts:
            self._send(421, "text/plain", b"this viewer answers only on its loopback address\n")
            return
        path = self.path.split("?", 1)[0]
        if path not in ("/", "/index.html", "/data.json"):
            self._send(404, "text/plain", b"not found\n")
            return
        try:
            document = self.server_of.document()
        except (ObeliskError, OSError) as exc:
            self._send(503, "text/plain", f"cannot read the run: {exc}\n".encode())
            return
        if path == "/data.json":
            self._send(200, "application/json", document_json(document).encode())
        else:
            self._send(200, "text/html; charset=utf-8", render_page(document).encode())

    def _send(self, code: int, kind: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return
