"""Every folder under examples/ is checked the way its README command runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from obelisk import Registry, check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FOLDERS = sorted(p for p in EXAMPLES.iterdir() if (p / "plan.json").exists())


def test_there_are_examples() -> None:
    assert [p.name for p in FOLDERS] == ["payment"]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_example_checks_clean(folder: Path) -> None:
    tools = Registry.from_module(str(folder / "tools.py"))
    input_path = folder / "input.json"
    data = json.loads(input_path.read_text()) if input_path.exists() else None
    result = check((folder / "plan.json").read_text(encoding="utf-8"), tools, input=data)
    assert result.diagnostics == ()
    assert result.graph is not None


def test_payment_example_through_the_cli() -> None:
    folder = EXAMPLES / "payment"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "obelisk",
            "check",
            str(folder / "plan.json"),
            "--tools",
            str(folder / "tools.py"),
            "--input",
            str(folder / "input.json"),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {"ok": True, "diagnostics": []}


def test_payment_branches_are_exclusive() -> None:
    folder = EXAMPLES / "payment"
    tools = Registry.from_module(str(folder / "tools.py"))
    result = check((folder / "plan.json").read_text(encoding="utf-8"), tools)
    assert result.graph is not None
    # send_receipt (#2) and report_failure (#3) hang off different alternatives of #1
    assert result.graph.exclusive(2, 3)
    assert result.graph.edges == [(0, 1), (0, 2), (1, 2), (1, 3)]
