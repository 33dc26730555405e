"""``obelisk view --serve`` (obelisk.viewer.serve, docs/viewer.md): the page and its
document on 127.0.0.1, read again from the journal on every request, so a run in
progress is followed; requests are made over the loopback interface."""

from __future__ import annotations

import http.client
import json
import threading
import time
from pathlib import Path
from typing import Any

import obelisk
from obelisk.viewer.load import read_document
from obelisk.viewer.serve import ViewServer

release = threading.Event()
entered = threading.Event()


@obelisk.tool
def first(n: int) -> int:
    """Return ``n``."""
    return n


@obelisk.tool
def slow(n: int) -> int:
    """Wait until the test lets it go, then return ``n + 1``."""
    entered.set()
    release.wait(20)
    return n + 1


PLAN = [
    {"_tool": "first", "n": 1, "_outputPath": "†state.a"},
    {"_tool": "slow", "n": "†state.a", "_outputPath": "†state.b"},
]


def _get(server: ViewServer, path: str, host: str | None = None) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        headers = {"Host": host} if host is not None else {}
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        connection.close()


def _calls(server: ViewServer) -> dict[int, dict[str, Any]]:
    status, kind, body = _get(server, "/data.json")
    assert status == 200 and kind == "application/json"
    document = json.loads(body)
    assert document["live"] is True
    return {call["index"]: call for call in document["calls"]}


def test_the_server_follows_a_journaled_run_while_it_is_in_progress(tmp_path: Path) -> None:
    journal = str(tmp_path / "runs.db")
    release.clear()
    entered.clear()
    worker = threading.Thread(
        target=lambda: obelisk.run_sync(PLAN, [first, slow], journal=journal, run_id="live-1"),
        daemon=True,
    )
    worker.start()
    try:
        assert entered.wait(20)
        with ViewServer(lambda: read_document("live-1", journal=journal)) as server:
            assert server.url.startswith("http://127.0.0.1:")
            status, kind, page = _get(server, "/")
            assert status == 200 and kind.startswith("text/html")
            assert b'id="obelisk-data"' in page
            during = _calls(server)
            assert during[0]["status"] == "succeeded"
            assert during[1]["status"] == "running"  # started, its process still runs
            release.set()
            worker.join(20)
            deadline = time.monotonic() + 10
            after = _calls(server)
            while after[1]["status"] != "succeeded" and time.monotonic() < deadline:
                time.sleep(0.05)
                after = _calls(server)
            assert after[1]["status"] == "succeeded" and after[1]["output"] == 2
    finally:
        release.set()
        worker.join(20)


def test_the_server_answers_only_its_loopback_host_and_its_two_paths(tmp_path: Path) -> None:
    journal = str(tmp_path / "runs.db")
    release.set()
    obelisk.run_sync(PLAN, [first, slow], journal=journal, run_id="done-1")
    with ViewServer(lambda: read_document("done-1", journal=journal)) as server:
        assert _get(server, "/", host="attacker.example:80")[0] == 421
        assert _get(server, "/etc/passwd")[0] == 404
        assert _get(server, "/data.json", host=f"localhost:{server.port}")[0] == 200
    with ViewServer(lambda: read_document("nope", journal=journal)) as server:
        status, _, body = _get(server, "/data.json")
        assert status == 503 and b"nope" in body


def test_obelisk_view_serve_prints_its_loopback_address_and_serves_the_run(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    journal = str(tmp_path / "runs.db")
    release.set()
    obelisk.run_sync(PLAN, [first, slow], journal=journal, run_id="cli-1")
    env = {**os.environ, "PYTHONPATH": str(Path(obelisk.__file__).parents[1])}
    command = [sys.executable, "-m", "obelisk", "view", "cli-1", "--journal", journal]
    server = subprocess.Popen(
        [*command, "--serve", "--port", "0"], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        assert line.startswith("serving http://127.0.0.1:"), line
        port = int(line.split("127.0.0.1:", 1)[1].split("/", 1)[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/data.json")
        document = json.loads(connection.getresponse().read())
        connection.close()
        assert document["title"] == "run cli-1" and document["status"] == "completed"
    finally:
        server.terminate()
        server.wait(10)
