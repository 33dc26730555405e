"""`obelisk run --otel` against a real OpenTelemetry backend (issue 30, point 2;
docs/observability.md).

The backend is an MLflow tracking server (``pip install mlflow``): it receives OTLP/HTTP
at ``/v1/traces`` and gives the spans back through its own REST API
(``/api/3.0/mlflow/traces/get``) with their parents, attributes *and links*.  Arize
Phoenix installs from PyPI too, but drops span links (its span model has none), so it
could not show the plan's data-flow edges; Jaeger and the OpenTelemetry Collector have
no package in the registries this project installs from.

``.ci/run`` installs MLflow in a virtual environment of its own, starts the server once
and names it in ``OBELISK_OTLP_BACKEND``.  Elsewhere the test starts one itself from the
``mlflow`` executable named by ``OBELISK_MLFLOW`` (or on ``PATH``), and skips with the
reason when there is none or it does not come up.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration("otel-collector")

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 240.0  # seconds for a cold MLflow server on a busy machine (~2 min seen)


def _get(url: str, timeout: float = 10.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _wait(base: str, server: subprocess.Popen[bytes] | None) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if _healthy(base):
            return
        if server is not None and server.poll() is not None:
            pytest.skip(f"the MLflow server exited with {server.returncode} before it was up")
        time.sleep(1)
    pytest.skip(f"no OTLP backend answered at {base} within {START_TIMEOUT:.0f} s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def backend() -> Iterator[str]:
    """The base URL of a running MLflow server (see the module docstring)."""
    given = os.environ.get("OBELISK_OTLP_BACKEND")
    if given:
        _wait(given.rstrip("/"), None)
        yield given.rstrip("/")
        return
    executable = os.environ.get("OBELISK_MLFLOW") or shutil.which("mlflow")
    if executable is None and (ROOT / ".venv-mlflow/bin/mlflow").exists():
        executable = str(ROOT / ".venv-mlflow/bin/mlflow")
    if executable is None:
        pytest.skip(
            "no OTLP backend: set OBELISK_OTLP_BACKEND to a running MLflow server, or "
            "OBELISK_MLFLOW to an mlflow executable (pip install mlflow), as .ci/run does"
        )
    port = _free_port()
    with tempfile.TemporaryDirectory() as home:
        command = [
            executable, "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
            "--backend-store-uri", f"sqlite:///{home}/mlflow.db",
            "--default-artifact-root", f"{home}/artifacts",
        ]  # fmt: skip
        with open(Path(home) / "server.log", "wb") as log:
            server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait(f"http://127.0.0.1:{port}", server)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


PLAN = [
    {"_tool": "add", "_id": "sum", "a": 1, "b": 2, "_outputPath": "†state.x"},
    {"_tool": "multiply", "a": "†state.x", "b": 10, "_outputPath": "†state.y"},
    {"_tool": "divide", "a": "†state.y", "b": 0, "_outputPath": "†state.z"},
    {"_tool": "add", "a": "†state.z", "b": 1, "_outputPath": "†state.w"},
]


def _hex(encoded: str) -> str:
    """An id of MLflow's span JSON (base64) as OpenTelemetry's hex."""
    return base64.b64decode(encoded).hex()


def _value(value: dict[str, Any]) -> Any:
    if "array_value" in value:
        return [_value(item) for item in value["array_value"].get("values", [])]
    for kind in ("string_value", "int_value", "bool_value", "double_value"):
        if kind in value:
            return int(value[kind]) if kind == "int_value" else value[kind]
    return None


def _attributes(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {item["key"]: _value(item["value"]) for item in items}


def _spans(backend: str, experiment: str, expected: int) -> list[dict[str, Any]]:
    """The spans of the one trace in ``experiment`` once ``expected`` have arrived."""
    search = f"{backend}/api/3.0/mlflow/traces/search"
    where = [{"type": "MLFLOW_EXPERIMENT", "mlflow_experiment": {"experiment_id": experiment}}]
    spans: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        traces = _post(search, {"locations": where, "max_results": 10}).get("traces", [])
        if len(traces) == 1:
            trace_id = traces[0]["trace_id"]
            found = _get(f"{backend}/api/3.0/mlflow/traces/get?trace_id={trace_id}")
            spans = found["trace"]["spans"]
            if len(spans) >= expected:
                return spans
        time.sleep(1)
    raise AssertionError(f"the backend holds {len(spans)} spans of the run, not {expected}")


def test_obelisk_run_otel_sends_parents_links_and_attributes_to_the_backend(
    backend: str, tmp_path: Path
) -> None:
    experiment = _post(
        f"{backend}/api/2.0/mlflow/experiments/create", {"name": f"obelisk-{uuid.uuid4().hex}"}
    )["experiment_id"]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    env = {  # obelisk as pytest has it (the installed package, or PYTHONPATH)
        **os.environ,
        "OTEL_EXPORTER_OTLP_ENDPOINT": backend,
        "OTEL_EXPORTER_OTLP_HEADERS": f"x-mlflow-experiment-id={experiment}",
    }
    command = [sys.executable, "-m", "obelisk", "run", "--otel", "--json", str(plan)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stderr  # the division by zero failed
    assert "Failed to export" not in done.stderr, done.stderr
    result = json.loads(done.stdout)
    assert [call["status"] for call in result["calls"]] == [
        "succeeded", "succeeded", "failed", "skipped",
    ]  # fmt: skip

    spans = _spans(backend, experiment, expected=5)
    by_index = {}
    (run,) = [span for span in spans if span["name"] == "invoke_workflow"]
    assert "parent_span_id" not in run or not run["parent_span_id"]
    run_attributes = _attributes(run["attributes"])
    assert run_attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert run_attributes["obelisk.run.status"] == "failed"
    for span in spans:
        if span["name"].startswith("execute_tool "):
            attributes = _attributes(span["attributes"])
            by_index[attributes["obelisk.call.index"]] = (span, attributes)
            assert _hex(span["parent_span_id"]) == _hex(run["span_id"])  # all under the run
    assert sorted(by_index) == [0, 1, 2, 3]

    first, first_attributes = by_index[0]
    assert first["name"] == "execute_tool add"
    assert first_attributes["gen_ai.operation.name"] == "execute_tool"
    assert first_attributes["gen_ai.tool.name"] == "add"
    assert first_attributes["gen_ai.tool.call.id"] == "sum"
    assert first_attributes["obelisk.call.paths_written"] == ["†state.x"]
    assert "gen_ai.tool.call.arguments" not in first_attributes  # not asked for

    second, second_attributes = by_index[1]
    assert second_attributes["gen_ai.tool.call.id"] == "#1"
    (link,) = second["links"]
    assert _hex(link["span_id"]) == _hex(first["span_id"])
    assert _attributes(link["attributes"])["obelisk.link.path"] == "†state.x"

    failed, failed_attributes = by_index[2]
    assert failed_attributes["obelisk.call.status"] == "failed"
    assert failed_attributes["error.type"] == "ZeroDivisionError"
    assert failed["status"].get("code") == "STATUS_CODE_ERROR"
    assert [_hex(lk["span_id"]) for lk in failed["links"]] == [_hex(second["span_id"])]

    skipped, skipped_attributes = by_index[3]
    assert skipped_attributes["obelisk.call.status"] == "skipped"
    assert "#2 divide failed" in skipped_attributes["obelisk.call.skip_reason"]
    assert skipped["start_time_unix_nano"] == skipped["end_time_unix_nano"]
    assert skipped["status"].get("code") != "STATUS_CODE_ERROR"
    assert not skipped.get("links")
