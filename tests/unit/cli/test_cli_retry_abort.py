"""``obelisk resume RUN --retry-failed`` and ``obelisk runs abort RUN --reason TEXT``
(issue 27, point 6; docs/cli.md, docs/durable.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

runner = CliRunner()

TOOLS = '''
from pathlib import Path
from obelisk import tool

@tool
def step(name: str) -> str:
    """Logs each call; fails for 'flaky' while the file 'down' exists."""
    with open("calls.log", "a") as log:
        log.write(name + "\\n")
    if name == "flaky" and Path("down").exists():
        raise RuntimeError("flaky is down")
    return name.upper()
'''

PLAN = [
    {"_tool": "step", "name": "a", "_outputPath": "†state.a"},
    {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
    {"_tool": "step", "name": "†state.f", "_outputPath": "†state.g"},
]


@pytest.fixture()
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "retry_tools.py").write_text(TOOLS)
    (tmp_path / "p.json").write_text(json.dumps(PLAN))
    (tmp_path / "down").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("retry_tools", None)
    return tmp_path


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


def _failed_run(run_id: str) -> None:
    done = cli("run", "p.json", "--tools", "retry_tools.py", "--journal", "runs.db",
               "--run-id", run_id)  # fmt: skip
    assert done.exit_code == 1, done.output


def test_resume_retry_failed_runs_the_failed_step_and_what_it_skipped(tmp: Path) -> None:
    done = cli("run", "p.json", "--tools", "retry_tools.py", "--journal", "runs.db",
               "--run-id", "r1")  # fmt: skip
    assert done.exit_code == 1, done.output
    assert (
        "run r1 failed in runs.db: run its failed calls again with obelisk resume r1 "
        "--journal runs.db --tools retry_tools.py --retry-failed, or give it up with "
        "obelisk runs abort r1 --journal runs.db --reason TEXT"
    ) in " ".join(done.stderr.split())
    over = cli("resume", "r1", "--journal", "runs.db", "--tools", "retry_tools.py")
    assert over.exit_code == 2
    assert "obelisk resume r1 --journal runs.db --retry-failed" in over.stderr
    (tmp / "down").unlink()
    done = cli("resume", "r1", "--journal", "runs.db", "--tools", "retry_tools.py",
               "--retry-failed", "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    shown = json.loads(done.stdout)
    assert shown["status"] == "completed"
    assert shown["state"] == {"a": "A", "f": "FLAKY", "g": "FLAKY"}
    calls = sorted((tmp / "calls.log").read_text().split())  # #0 and #1 run at once
    assert calls == ["FLAKY", "a", "flaky", "flaky"]
    text = cli("runs", "show", "r1", "--journal", "runs.db")
    assert text.exit_code == 0, text.output
    assert "run r1 (run): completed" in text.stdout
    assert "retried #1 in session 1 (it had ended failed: RuntimeError: flaky is down)" in (
        text.stdout
    )
    again = cli("resume", "r1", "--journal", "runs.db", "--tools", "retry_tools.py",
                "--retry-failed")  # fmt: skip
    assert again.exit_code == 2 and "it completed: nothing failed" in again.stderr


def test_runs_abort_then_resume_is_refused_with_the_reason(tmp: Path) -> None:
    _failed_run("r2")
    aborted = cli("runs", "abort", "r2", "--journal", "runs.db", "--reason", "done by hand")
    assert aborted.exit_code == 0, aborted.output
    assert "run r2 aborted: done by hand" in aborted.stderr
    listed = cli("runs", "list", "--journal", "runs.db")
    assert "r2  run  aborted  3 calls, aborted: done by hand" in listed.stdout
    rows = json.loads(cli("runs", "list", "--journal", "runs.db", "--json").stdout)
    assert (rows[0]["status"], rows[0]["reason"]) == ("aborted", "done by hand")
    (tmp / "down").unlink()
    refused = cli("resume", "r2", "--journal", "runs.db", "--tools", "retry_tools.py",
                  "--retry-failed")  # fmt: skip
    assert refused.exit_code == 2
    assert "run 'r2' was aborted (done by hand): an aborted run is never resumed" in (
        refused.stderr
    )
    twice = cli("runs", "abort", "r2", "--journal", "runs.db", "--reason", "again")
    assert twice.exit_code == 2 and "aborted already (done by hand)" in twice.stderr
    assert sorted((tmp / "calls.log").read_text().split()) == ["a", "flaky"]


def test_runs_that_replace_each_other_show_the_link(tmp: Path) -> None:
    _failed_run("old")
    assert cli("runs", "abort", "old", "--journal", "runs.db", "--reason", "x").exit_code == 0
    (tmp / "down").unlink()
    done = cli("run", "p.json", "--tools", "retry_tools.py", "--journal", "runs.db",
               "--run-id", "new", "--replaces", "old")  # fmt: skip
    assert done.exit_code == 0, done.output
    listed = cli("runs", "list", "--journal", "runs.db").stdout
    assert "old  run  aborted  3 calls, aborted: x, replaced by new" in listed
    assert "new  run  completed  3 calls, replaces old" in listed
    shown = cli("runs", "show", "new", "--journal", "runs.db").stdout
    assert "run new (run): completed, replaces old" in shown
    again = cli("run", "p.json", "--tools", "retry_tools.py", "--journal", "runs.db",
                "--run-id", "newer", "--replaces", "old")  # fmt: skip
    assert again.exit_code == 2 and "replaced already, by run 'new'" in again.stderr
    alone = cli("run", "p.json", "--tools", "retry_tools.py", "--replaces", "old")
    assert alone.exit_code == 2
    assert "--replaces names a durable run: it needs --journal FILE too" in alone.stderr
