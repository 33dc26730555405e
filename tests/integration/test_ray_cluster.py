"""``obelisk.RayExecutor`` against a real Ray cluster on loopback (docs/scale.md).

The session fixture starts a head node and a second node on 127.0.0.1 with ``ray start``
(one CPU each, usage stats and token authentication off: loopback only) and stops them
with ``ray stop --force`` afterwards; where Ray is not installed or a node cannot start,
the tests are skipped with the reason.  They check that ``run_many`` gives what the
local executor gives, that a ``remote=True`` tool runs in a worker process, that
killing the worker under a call makes a non-idempotent call ``unknown`` and has Ray
retry an idempotent one, and that a tool's timeout cancels its Ray task.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import obelisk

pytestmark = pytest.mark.integration("ray")

ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    # a shared test machine: Ray's memory monitor would kill workers for others' memory
    "RAY_memory_monitor_refresh_ms": "0",
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ray_command() -> str:
    """The ``ray`` command of this Python's environment (else the one on ``PATH``)."""
    beside = Path(sys.executable).parent / "ray"
    found = str(beside) if beside.exists() else shutil.which("ray")
    if found is None:
        pytest.skip("the ray command is not installed (pip install 'obelisk[ray]')")
    return found


def _ray_start(*arguments: str) -> None:
    done = subprocess.run(
        [_ray_command(), "start", "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
         "--disable-usage-stats", *arguments],
        env={**os.environ, **ENV}, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"a Ray node could not start: {done.stderr.strip()[-500:]}")


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """The address of a two-node Ray cluster on loopback, this process its driver."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'obelisk[ray]')")
    os.environ.update(ENV)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    try:
        _ray_start("--head", "--port", str(port), "--include-dashboard", "false")
        _ray_start("--address", address)
        ray.init(address=address, log_to_driver=False)
        deadline = time.monotonic() + 60
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            if time.monotonic() > deadline:
                pytest.skip("the second Ray node never joined the cluster")
            time.sleep(0.5)
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run(
            [_ray_command(), "stop", "--force"], capture_output=True, timeout=120, check=False
        )


@obelisk.tool
def score(n: int) -> int:
    "n squared; 3 fails."
    if n == 3:
        raise ValueError("no threes")
    return n * n


@obelisk.tool(remote=True, num_cpus=1)
def where(n: int) -> dict[str, int]:
    "The process that ran this call."
    return {"pid": os.getpid(), "n": n}


def _slow(path: str, wait: float) -> int:
    "Writes its pid to path, then waits."
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(wait)
    return 1


PLAN = [
    {"_tool": "score", "n": "†input.n", "_outputPath": "†state.square"},
    {"_tool": "score", "n": "†state.square", "_outputPath": "†state.fourth"},
]


def test_run_many_on_ray_gives_what_the_local_executor_gives(cluster: str) -> None:
    inputs = [{"n": n} for n in range(10)] + [{"n": "x"}]
    local = obelisk.run_many_sync(inputs, [score], plan=PLAN)
    seen: list[int] = []
    remote = obelisk.run_many_sync(
        inputs, [score], plan=PLAN, on_result=lambda r: seen.append(r.index),
        executor=obelisk.RayExecutor(cluster, max_in_flight=3),
    )  # fmt: skip
    assert [r.to_dict() for r in remote] == [r.to_dict() for r in local]
    assert sorted(seen) == list(range(11))
    assert [r.status for r in remote][3] == "failed"


def test_a_remote_tool_runs_in_a_worker_process(cluster: str) -> None:
    plan = [{"_tool": "where", "n": "†input", "_outputPath": "†state.ran"}]
    with obelisk.RayExecutor(cluster):
        one = obelisk.run_sync(plan, [where], input=1)
    assert one.status == "completed", one.calls[0].error
    assert one.state["ran"]["pid"] != os.getpid()
    many = obelisk.run_many_sync(
        [1, 2, 3], [where], plan=plan, executor=obelisk.RayExecutor(cluster, runs_on="driver")
    )
    assert all(r.status == "completed" and r.state["ran"]["pid"] != os.getpid() for r in many)


def _kill_first_pid(path: Path, killed: list[int]) -> None:
    """Kill (SIGKILL) the process whose pid appears first in ``path``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            pid = int(path.read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.05)


def _run_with_a_kill(tool: obelisk.Tool, path: Path, cluster: str) -> tuple[Any, list[int]]:
    killed: list[int] = []
    killer = threading.Thread(target=_kill_first_pid, args=(path, killed))
    killer.start()
    plan = [
        {"_tool": tool.name, "path": str(path), "wait": 3, "_outputPath": "†state.done"},
        {"_tool": "score", "n": "†state.done", "_outputPath": "†state.after"},
    ]
    with obelisk.RayExecutor(cluster):
        result = obelisk.run_sync(plan, [tool, score])
    killer.join()
    return result, killed


def test_a_killed_worker_makes_a_non_idempotent_call_unknown(cluster: str, tmp_path: Path) -> None:
    charge = obelisk.tool(remote=True, name="charge")(_slow)
    result, killed = _run_with_a_kill(charge, tmp_path / "pids", cluster)
    assert killed, "the call never started"
    assert result.status == "unknown"
    assert [c.status for c in result.calls] == ["unknown", "waiting"]
    assert result.calls[0].reason == "its remote worker was lost mid-call"
    assert len((tmp_path / "pids").read_text().split()) == 1, "Ray ran it again"


def test_a_killed_worker_is_retried_by_ray_for_an_idempotent_tool(
    cluster: str, tmp_path: Path
) -> None:
    fetch = obelisk.tool(remote=True, idempotent=True, name="fetch")(_slow)
    result, killed = _run_with_a_kill(fetch, tmp_path / "pids", cluster)
    assert killed
    assert result.status == "completed", result.calls[0].error
    assert result.state == {"done": 1, "after": 1}
    pids = (tmp_path / "pids").read_text().split()
    assert len(pids) == 2 and int(pids[1]) != killed[0]


def test_a_tool_timeout_cancels_its_ray_task(cluster: str, tmp_path: Path) -> None:
    stuck = obelisk.tool(remote=True, name="stuck", timeout=1.0)(_slow)
    path = tmp_path / "pids"
    plan = [{"_tool": "stuck", "path": str(path), "wait": 60, "_outputPath": "†state.x"}]
    started = time.monotonic()
    with obelisk.RayExecutor(cluster):
        result = obelisk.run_sync(plan, [stuck])
    assert time.monotonic() - started < 30
    assert result.calls[0].status == "failed"
    assert "timed out after 1 s" in str(result.calls[0].error)
    pid = int(path.read_text().split()[0])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    assert not _alive(pid), "the cancelled task's worker still runs the call"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (dead, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


@obelisk.tool
def refuse(n: int) -> int:
    "Fails at once."
    raise ValueError(f"refused {n}")


def test_fail_fast_cancels_the_remote_call_in_flight(cluster: str, tmp_path: Path) -> None:
    stuck = obelisk.tool(remote=True, name="stuck")(_slow)
    path = tmp_path / "pids"
    plan = [
        {"_tool": "stuck", "path": str(path), "wait": 60, "_outputPath": "†state.x"},
        {"_tool": "refuse", "n": 1, "_outputPath": "†state.y"},
    ]
    started = time.monotonic()
    with obelisk.RayExecutor(cluster):
        result = obelisk.run_sync(plan, [stuck, refuse], fail_fast=True)
    assert time.monotonic() - started < 40
    assert [c.status for c in result.calls] == ["cancelled", "failed"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.2)  # the task may have been cancelled before it started
    if path.exists():
        pid = int(path.read_text().split()[0])
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        assert not _alive(pid), "the cancelled task's worker still runs the call"


def test_a_journaled_batch_on_ray_is_read_back_without_running(
    cluster: str, tmp_path: Path
) -> None:
    journal = tmp_path / "runs.db"
    inputs = [{"n": n} for n in range(6)]
    on_ray = obelisk.run_many_sync(
        inputs, [score], plan=PLAN, journal=journal, batch="b",
        executor=obelisk.RayExecutor(cluster),
    )  # fmt: skip
    assert [r.run_id for r in on_ray] == [f"b-{n}" for n in range(6)]
    assert [r.status for r in on_ray] == ["completed"] * 3 + ["failed"] + ["completed"] * 2
    again = obelisk.run_many_sync(inputs, [score], plan=PLAN, journal=journal, batch="b")
    assert {r.resumed for r in again} == {"journal"}
    assert [r.state for r in again] == [r.state for r in on_ray]


def test_run_many_on_the_command_line_with_ray(cluster: str, tmp_path: Path) -> None:
    import json

    tools, plan, inputs = tmp_path / "tools.py", tmp_path / "plan.json", tmp_path / "in.jsonl"
    tools.write_text(
        "import obelisk\n\n@obelisk.tool\ndef score(n: int) -> int:\n"
        '    "n squared; 3 fails."\n    if n == 3:\n        raise ValueError("no threes")\n'
        "    return n * n\n"
    )
    plan.write_text(json.dumps(PLAN))
    inputs.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(6)))
    command = [sys.executable, "-m", "obelisk", "run-many", str(plan), "--inputs", str(inputs),
               "--tools", str(tools), "--no-stdlib"]  # fmt: skip
    env = {**os.environ, **ENV}
    local = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    remote = subprocess.run(
        [*command, "--ray", cluster], capture_output=True, text=True, timeout=300, env=env
    )
    assert remote.returncode == local.returncode == 1, remote.stderr[-2000:]
    assert remote.stdout == local.stdout
    assert "6 runs: completed 5, failed 1" in remote.stderr


def test_a_remote_tool_that_raises_fails_as_it_would_here(cluster: str) -> None:
    @obelisk.tool(remote=True, name="bad")
    def bad(n: int) -> int:
        "Fails."
        raise ValueError(f"bad {n}")

    plan = [{"_tool": "bad", "n": 1, "_outputPath": "†state.x"}]
    here = obelisk.run_sync(plan, [bad])
    with obelisk.RayExecutor(cluster):
        there = obelisk.run_sync(plan, [bad])
    assert there.status == here.status == "failed"
    assert there.calls[0].error == here.calls[0].error == {"type": "ValueError", "message": "bad 1"}
