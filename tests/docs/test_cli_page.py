"""docs/cli.md: every ``console`` block runs and prints what the page shows.

A block is one command line starting with ``$ obelisk``, then exactly what it prints
(standard output, then standard error).  A last line ``(exit N)`` gives the exit
code; without it the command must exit 0.  Commands run from the repository root.
A block whose first line is ``# not run: <reason>`` is only shown.
An approval id's 32 hex digits are bound to its run, whose id is new each time, so
they are not compared (``2-<id>`` on both sides).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from obelisk.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cli.md"
BLOCK = re.compile(r"```console\n(.*?)```", re.S)
APPROVAL_ID = re.compile(r"\b([0-9]+)-[0-9a-f]{32}\b")


def without_ids(text: str) -> str:
    return APPROVAL_ID.sub(r"\1-<id>", text)


def blocks() -> list[tuple[str, str, int]]:
    found = []
    for text in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        command, _, shown = text.partition("\n")
        if command.startswith("# not run: "):
            continue  # shown only (tests/docs/test_docs.py's marker)
        assert command.startswith("$ obelisk "), command
        code = 0
        lines = shown.splitlines()
        if lines and re.fullmatch(r"\(exit \d\)", lines[-1]):
            code = int(lines.pop()[6:-1])
        found.append((command[2:], "".join(line + "\n" for line in lines), code))
    return found


def test_the_page_has_examples() -> None:
    assert len(blocks()) >= 5


@pytest.mark.parametrize(("command", "shown", "code"), blocks(), ids=lambda v: str(v)[:40])
def test_console_block(
    command: str, shown: str, code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, shlex.split(command)[1:], env={"COLUMNS": "100"})
    assert without_ids(result.stdout + result.stderr) == without_ids(shown)
    assert result.exit_code == code
