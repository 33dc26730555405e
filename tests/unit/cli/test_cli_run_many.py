"""``obelisk run-many`` (docs/scale.md, "Many runs"): JSON Lines in, JSON Lines out in the
inputs' order, a summary of statuses on standard error, exit 1 when a run did not
complete; with ``--journal``, a ``run-many`` killed mid-way and run again runs nothing
that had finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TOOLS = """
import os, time
import obelisk

@obelisk.tool(idempotent=True)
def double(n: int) -> int:
    "Twice n, slowly; 3 fails; each call is logged to $RUN_MANY_LOG."
    log = os.environ.get("RUN_MANY_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{n}\\n")
    time.sleep(float(os.environ.get("RUN_MANY_SLEEP", "0")))
    if n == 3:
        raise ValueError("no threes")
    return 2 * n
"""
PLAN = [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"}]


def _files(tmp_path: Path, count: int) -> tuple[Path, Path, Path]:
    tools, plan, inputs = tmp_path / "tools.py", tmp_path / "plan.json", tmp_path / "in.jsonl"
    tools.write_text(TOOLS)
    plan.write_text(json.dumps(PLAN))
    inputs.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(count)))
    return tools, plan, inputs


def _command(tools: Path, plan: Path, inputs: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "obelisk", "run-many", str(plan), "--inputs", str(inputs),
            "--tools", str(tools), "--no-stdlib", *extra]  # fmt: skip


def test_results_in_order_with_a_summary_and_exit_1(tmp_path: Path) -> None:
    tools, plan, inputs = _files(tmp_path, 5)
    done = subprocess.run(
        _command(tools, plan, inputs, "-c", "3"), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["index"] for line in lines] == [0, 1, 2, 3, 4]
    assert [line["state"] for line in lines] == [
        {"twice": 0}, {"twice": 2}, {"twice": 4}, {}, {"twice": 8}
    ]  # fmt: skip
    assert "5 runs: completed 4, failed 1" in done.stderr
    assert "run 3: failed (#0 double: ValueError: no threes)" in done.stderr


def test_bad_lines_and_missing_options_exit_2(tmp_path: Path) -> None:
    tools, plan, inputs = _files(tmp_path, 2)
    inputs.write_text('{"n": 1}\n{"n": }\n')
    done = subprocess.run(_command(tools, plan, inputs), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "line 2 of inputs" in done.stderr and "is not valid JSON" in done.stderr
    neither = [sys.executable, "-m", "obelisk", "run-many", str(plan)]
    done = subprocess.run(neither, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "give --inputs FILE" in done.stderr


def test_many_plans_from_a_file(tmp_path: Path) -> None:
    tools, _, _ = _files(tmp_path, 0)
    plans = tmp_path / "plans.jsonl"
    plans.write_text(
        json.dumps([{"_tool": "double", "n": 2, "_outputPath": "†state.x"}]) + "\n"
        + json.dumps([{"_tool": "nope"}]) + "\n"
    )  # fmt: skip
    command = [sys.executable, "-m", "obelisk", "run-many", "--plans", str(plans),
               "--tools", str(tools), "--no-stdlib", "-o", str(tmp_path / "out.jsonl")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [line["status"] for line in out] == ["completed", "error"]
    assert out[1]["error"].startswith("PlanError: ")


def test_a_killed_run_many_resumes_where_it_stopped(tmp_path: Path) -> None:
    tools, plan, inputs = _files(tmp_path, 12)
    inputs.write_text("".join(json.dumps({"n": n}) + "\n" for n in range(4, 16)))
    log, out = tmp_path / "calls.log", tmp_path / "out.jsonl"
    env = {**os.environ, "RUN_MANY_LOG": str(log), "RUN_MANY_SLEEP": "0.25"}
    journal = str(tmp_path / "runs.db")
    command = _command(tools, plan, inputs, "-c", "2", "--journal", journal, "-o", str(out))
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and len(out.read_text().splitlines()) >= 4:
            break
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    finished = {json.loads(line)["state"]["twice"] // 2 for line in out.read_text().splitlines()}
    assert 4 <= len(finished) < 12, "the kill came too late to test anything"
    before = log.read_text().split()
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["state"]["twice"] for r in results] == [2 * n for n in range(4, 16)]
    assert {r["resumed"] for r in results if r["state"]["twice"] // 2 in finished} == {"journal"}
    calls = log.read_text().split()
    rerun = calls[len(before) :]
    assert not finished & {int(n) for n in rerun}, "a finished run ran again"
    assert sorted(int(n) for n in set(calls)) == list(range(4, 16))
    assert len(calls) <= 12 + 2  # at most the two calls in flight at the kill ran twice


def test_a_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    import pty

    tools, plan, inputs = _files(tmp_path, 3)
    inputs.write_text("".join(json.dumps({"n": n}) + "\n" for n in (1, 2, 4)))
    env = {**os.environ, "RUN_MANY_SLEEP": "0.3", "COLUMNS": "80", "TERM": "xterm"}
    leader, follower = pty.openpty()
    done = subprocess.run(
        _command(tools, plan, inputs), stdout=subprocess.PIPE, stderr=follower, env=env,
        timeout=120, check=False,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == 3  # the results, not the bar
    assert "runs" in shown.decode(errors="replace") and "━" in shown.decode(errors="replace")
    piped = subprocess.run(_command(tools, plan, inputs), capture_output=True, env=env, timeout=120)
    assert "━" not in piped.stderr.decode(errors="replace")
