"""``obelisk worker --journal URL`` (docs/scale.md): it claims the runs that are ready to
continue (crashed, or whose approvals were decided) and finishes them; a worker killed
with SIGKILL mid-run leaves the run to the next worker, which finishes it with nothing
that has side effects repeated (a counter in a file, outside every process).  Each test
runs on SQLite and on a real PostgreSQL server (conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BACKENDS = [  # the fixture journal_at (conftest.py) gives a journal of each
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.integration("postgresql")),
]
pytestmark = pytest.mark.parametrize("backend", BACKENDS)

TOOLS = '''
import os
import time

import obelisk

COUNT = os.environ["OBELISK_TEST_COUNT"]
HOLD = os.environ["OBELISK_TEST_HOLD"]


def note(line):
    with open(COUNT, "a") as file:
        file.write(line + "\\n")


@obelisk.tool
def charge(name: str, after: str = "") -> str:
    """A side effect: never to run twice."""
    note(f"charge {name}")
    return name


@obelisk.tool(idempotent=True)
def wait(name: str) -> str:
    """Idempotent; blocks while the HOLD file exists (until its process is killed)."""
    note(f"wait {name}")
    while os.path.exists(HOLD):
        time.sleep(0.02)
    return name


@obelisk.tool(requires_approval=True)
def refund(amount: int) -> str:
    """Give money back (a person approves)."""
    note(f"refund {amount}")
    return f"refunded {amount}"
'''

PLAN = [
    {"_tool": "charge", "name": "one", "_outputPath": "†state.one"},
    {"_tool": "wait", "name": "†state.one", "_outputPath": "†state.w"},
    {"_tool": "charge", "name": "two", "after": "†state.w", "_outputPath": "†state.two"},
]
APPROVAL_PLAN = [
    {"_tool": "charge", "name": "one", "_outputPath": "†state.one"},
    {"_tool": "refund", "amount": 5, "_outputPath": "†state.r"},
]


class Place:
    """A test's folder: the tools, the plans, the counter and the hold file."""

    def __init__(self, folder: Path, journal: str) -> None:
        self.folder, self.journal = folder, journal
        (folder / "worker_tools.py").write_text(TOOLS)
        (folder / "plan.json").write_text(json.dumps(PLAN))
        (folder / "approval.json").write_text(json.dumps(APPROVAL_PLAN))
        self.count, self.hold = folder / "count.txt", folder / "hold"
        self.env = {
            **os.environ,
            "OBELISK_TEST_COUNT": str(self.count),
            "OBELISK_TEST_HOLD": str(self.hold),
        }

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "obelisk", *args]

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(*args), cwd=self.folder, env=self.env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args), cwd=self.folder, env=self.env, text=True,
            capture_output=True, timeout=120, check=False,
        )  # fmt: skip

    def worker(self, *more: str) -> list[str]:
        return ["worker", "--journal", self.journal, "--tools", "worker_tools.py", *more]

    def lines(self) -> list[str]:
        return self.count.read_text().splitlines() if self.count.exists() else []

    def wait_for(self, line: str, times: int, process: subprocess.Popen[str]) -> None:
        """Until ``line`` was counted ``times`` times (the process must still run)."""
        deadline = time.monotonic() + 60
        while self.lines().count(line) < times:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, self.lines()
            time.sleep(0.02)

    def status(self, run_id: str) -> Any:
        shown = self.run("runs", "show", run_id, "--journal", self.journal, "--json")
        assert shown.returncode == 0, shown.stderr
        return json.loads(shown.stdout)["status"]


@pytest.fixture
def place(journal_at: Callable[[str], str], tmp_path: Path) -> Place:
    return Place(tmp_path, journal_at("runs"))


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL


def test_a_worker_killed_mid_run_leaves_the_run_to_another_that_repeats_nothing(
    place: Place,
) -> None:
    place.hold.touch()
    first = place.start("run", "plan.json", "--tools", "worker_tools.py",
                        "--journal", place.journal, "--run-id", "r1")  # fmt: skip
    place.wait_for("wait one", 1, first)
    _kill(first)  # the process that started the run dies in #1 wait
    killed = place.start(*place.worker("--once"))
    place.wait_for("wait one", 2, killed)  # a worker claimed the run: #1 runs again
    _kill(killed)  # and that worker dies mid-run too
    assert place.status("r1") == "running"  # as a crash leaves it
    place.hold.unlink()
    done = place.run(*place.worker("--once"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["r1", "completed"]
    assert place.status("r1") == "completed"
    # #1 wait is idempotent: run again after each crash; #0 and #2 charge ran once each
    assert place.lines() == ["charge one", "wait one", "wait one", "wait one", "charge two"]


def test_a_worker_finishes_a_run_whose_approvals_were_decided(place: Place) -> None:
    started = place.run("run", "approval.json", "--tools", "worker_tools.py",
                        "--journal", place.journal, "--run-id", "p1")  # fmt: skip
    assert started.returncode == 1, started.stderr  # paused: awaiting approval
    idle = place.run(*place.worker("--once"))  # nothing is ready: a person must decide
    assert (idle.returncode, idle.stdout) == (0, ""), idle.stderr
    listed = place.run("approvals", "list", "--journal", place.journal, "--json")
    [pending] = json.loads(listed.stdout)
    approved = place.run("approve", pending["id"], "--journal", place.journal)
    assert approved.returncode == 0, approved.stderr
    done = place.run(*place.worker("--once"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["p1", "completed"]
    assert place.lines() == ["charge one", "refund 5"]


def test_a_run_the_worker_cannot_resume_is_reported_and_left_alone(place: Place) -> None:
    place.hold.touch()
    first = place.start("run", "plan.json", "--tools", "worker_tools.py",
                        "--journal", place.journal, "--run-id", "r1")  # fmt: skip
    place.wait_for("wait one", 1, first)
    _kill(first)
    (place.folder / "other_tools.py").write_text(
        TOOLS.replace('name: str, after: str = ""', "name: int, after: str = ''")
    )
    refused = place.run("worker", "--journal", place.journal, "--tools", "other_tools.py",
                        "--once")  # fmt: skip
    assert refused.returncode == 1
    assert "obelisk worker: run r1:" in refused.stderr and "changed" in refused.stderr
    assert place.status("r1") == "running" and place.lines() == ["charge one", "wait one"]
