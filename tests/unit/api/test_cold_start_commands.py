"""What ``obelisk run`` loads of the other commands: nothing (docs/performance.md,
"Cold start").

``obelisk <command>`` imports the module of that command alone, and a run whose tools
all run in threads or on the event loop does not import multiprocessing.  A fresh
interpreter runs the command and reports its ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_RUN = """
import contextlib, io, json, runpy, sys
sys.argv = ["obelisk", "run", sys.argv[1], "--tools", sys.argv[2]]
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
    runpy.run_module("obelisk", run_name="__main__")
others = (
    "obelisk.cli.check", "obelisk.cli.durable", "obelisk.cli.explain", "obelisk.cli.loop",
    "obelisk.cli.many", "obelisk.cli.simulate", "obelisk.cli.tools", "obelisk.cli.view",
    "obelisk.cli.worker", "obelisk.interpreter.many.batch", "multiprocessing",
    "obelisk.interpreter.runtime.processes",
)
print(json.dumps([json.loads(out.getvalue()), sorted(m for m in sys.modules if m in others)]))
"""


def test_obelisk_run_loads_no_other_command_and_no_process_workers(tmp_path: Path) -> None:
    tools = tmp_path / "tools.py"
    tools.write_text(
        "import obelisk\n\n@obelisk.tool\ndef double(n: int) -> int:\n"
        '    """Twice n."""\n    return 2 * n\n',
        encoding="utf-8",
    )
    plan = tmp_path / "plan.json"
    calls = [
        {"_tool": "double", "n": 1, "_outputPath": "†state.a"},
        {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"},
    ]
    plan.write_text(json.dumps(calls, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(plan), str(tools)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == [{"a": 2, "b": 4}, []]


def test_every_command_is_still_listed_in_its_place() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "obelisk", "--help"], capture_output=True, text=True, check=True
    )
    listed = [
        line.split()[0]
        for line in done.stdout.splitlines()
        if line.startswith("  ") and line.split() and not line.split()[0].startswith("-")
    ]
    names = ["check", "graph", "run", "run-many", "simulate", "loop", "tools", "resume"]
    names += ["approve", "reject", "explain", "view", "worker", "runs", "approvals"]
    assert [name for name in listed if name in names] == names
