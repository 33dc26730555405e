"""The examples of the user documentation (README.md and docs/*.md) run, and say what
obelisk does.

Markdown conventions, kept simple on purpose:

* A fenced block opens with three backticks and an info string at the start of a line
  (never indented) and closes with three backticks.  Every block has an info string,
  one of :data:`INFOS`: a block without one, or with another, fails
  ``test_every_block_is_run_checked_or_shown``.
* Every block whose info string is exactly ``python`` runs.  The blocks of one page
  run in page order, in one namespace, so a later block may use what an earlier one
  defined.
* Every ``sh`` or ``bash`` block runs with ``bash -e -u -o pipefail``, in a temporary
  directory holding a copy of examples/ and docs/ (so ``obelisk run
  examples/payment/plan.json ...`` works as from the repository root), with this
  Python's scripts directory (its ``obelisk``) first on ``PATH`` and the tested source
  first on ``PYTHONPATH``.  It must exit 0.  A block that installs (``pip install``,
  ``uv pip``, ``-m venv``) must carry the marker below: it is refused before it runs.
* ``console`` blocks are transcripts (``$ obelisk ...`` and what it prints); only
  docs/cli.md has them, and tests/docs/test_cli_page.py runs them.
* The one marker: a ``python``, ``sh``, ``bash`` or ``console`` block whose first line
  is ``# not run: <reason>`` is only shown, never run (it installs packages, or its
  files stand for the reader's own).  The reason is required.  A shell block without
  the marker that cannot run fails.
* A ``python``, ``sh`` or ``bash`` block followed (blank lines and text aside, nothing
  else) by an ``output`` block must print exactly that text on standard output
  (trailing spaces and surrounding blank lines ignored).  Every ``output`` block
  belongs to the block just before it.
* Blocks that are data, not code, are checked where there is something to check
  against: a ``json`` block is JSON, the ``lark`` block of docs/language.md is the
  grammar obelisk parses with.  ``text`` (renderings, synopses) and ``mermaid``
  (diagrams) blocks are only shown.
* docs/diagnostics.md: its first ``python`` block defines the example tools; every
  ``obelisk.Tool`` left in the page's namespace is passed to ``obelisk.check``.  Each
  section headed ``## `code` `` documents one diagnostic code, with, in this order:

  - optionally a ``json input`` block (and a ``json state`` block): the input document
    (the starting state) that the section's plans are checked against;
  - a ``json bad`` block: a plan whose check reports ``code``, followed by an
    ``output`` block: ``str(diagnostic)`` of every diagnostic of that code, one after
    the other, exactly as obelisk prints them;
  - a ``json fixed`` block: the plan corrected; its check reports nothing at all.

  A section that cannot show its code with ``obelisk.check`` alone (``stream_order``
  arises only while a plan is streamed) has no ``bad`` block; its ``python`` block
  shows the code instead, and must mention it.

The test uses only the public API (``import obelisk``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import obelisk
from obelisk.diagnostics import DIAGNOSTIC_CODES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = "README.md"  # the one page outside docs/
CODES = DIAGNOSTIC_CODES  # the one list of codes (obelisk.diagnostics.DiagnosticCode)
ALL_PAGES = (README, *sorted(path.name for path in DOCS.glob("*.md")))
NOT_PUBLIC = ("architecture.md",)  # for contributors: it names the internal modules
PAGES = tuple(page for page in ALL_PAGES if page not in NOT_PUBLIC)  # a new page is run too
SHELL = ("sh", "bash")
RUNS = ("python", *SHELL)
MARKABLE = (*RUNS, "console")
INFOS = (
    *MARKABLE,
    "output",
    "json",
    "json bad",
    "json fixed",
    "json input",
    "json state",
    "lark",
    "text",
    "mermaid",
)
NOT_RUN = "# not run"
MARKER = re.compile(r"# not run: \S")
INSTALLS = re.compile(r"\bpip install\b|\buv pip\b|-m venv\b")  # never run by a test


@dataclass(frozen=True)
class Block:
    info: str
    text: str
    line: int  # 1-based line of the opening fence
    section: str  # the text of the last "## " heading before the block

    @property
    def marked(self) -> bool:
        return self.text.startswith(NOT_RUN)

    @property
    def runnable(self) -> bool:
        return self.info == "python" and not self.marked

    @property
    def shell(self) -> bool:
        return self.info in SHELL and not self.marked


def page_path(page: str) -> Path:
    return ROOT / page if page == README else DOCS / page


def blocks(page: str) -> list[Block]:
    """The fenced blocks of a page, in order (a fence without an info string too)."""
    found: list[Block] = []
    section = ""
    lines = page_path(page).read_text(encoding="utf-8").splitlines()
    position = 0
    while position < len(lines):
        line = lines[position]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.startswith("```"):
            start = position
            body: list[str] = []
            position += 1
            while position < len(lines) and lines[position].rstrip() != "```":
                body.append(lines[position])
                position += 1
            assert position < len(lines), f"{page}:{start + 1}: unclosed fence"
            text = "\n".join(body) + "\n"
            found.append(Block(line[3:].strip(), text, start + 1, section))
        position += 1
    return found


def run_block(block: Block, page: str, namespace: dict[str, Any]) -> str:
    """Run one block in ``namespace``; returns what it printed."""
    # dont_inherit: a block runs as a user's module would, without this file's
    # ``from __future__ import annotations`` (pydantic models need real annotations)
    code = compile(block.text, f"{page}:{block.line}", "exec", dont_inherit=True)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(code, namespace)
    return printed.getvalue()


def run_shell(block: Block, page: str, workdir: Path) -> str:
    """Run one shell block with bash in ``workdir``; returns its standard output."""
    assert not INSTALLS.search(block.text), f"{page}:{block.line}: it installs: mark it"
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        ["bash", "-e", "-u", "-o", "pipefail", "-c", block.text],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (
        f"{page}:{block.line}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory where the shell blocks run: a copy of examples/ and docs/."""
    where = tmp_path_factory.mktemp("docs-shell")
    for name in ("examples", "docs"):
        shutil.copytree(ROOT / name, where / name)
    return where


def normalized(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def run_page(page: str, workdir: Path | None = None) -> dict[str, Any]:
    """Run every runnable block of ``page`` (its shell blocks in ``workdir``), checking the
    outputs shown; returns the namespace."""
    namespace: dict[str, Any] = {"__name__": f"docs_{page.replace('.', '_')}"}
    found = blocks(page)
    previous: Block | None = None
    printed = ""
    for block in found:
        if block.info == "output":
            assert previous is not None and previous.info in (*RUNS, "json bad"), (
                f"{page}:{block.line}: an output block must follow a python, shell or bad block"
            )
            if previous.runnable or previous.shell:
                assert normalized(printed) == normalized(block.text), (
                    f"{page}:{previous.line}: printed\n{printed}\nbut the page shows\n{block.text}"
                )
        elif block.runnable:
            printed = run_block(block, page, namespace)
        elif block.shell:
            assert workdir is not None, f"{page}:{block.line}: a shell block needs a workdir"
            printed = run_shell(block, page, workdir)
        previous = block
    return namespace


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run_and_print_what_they_show(page: str, workdir: Path) -> None:
    run_page(page, workdir)


def test_every_page_is_run() -> None:
    assert {README, "api.md", "cli.md", "durable.md", "install.md", "performance.md"} <= set(PAGES)
    assert all(b.info == "mermaid" for name in NOT_PUBLIC for b in blocks(name))


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_block_is_run_checked_or_shown(page: str) -> None:
    """The conventions of this module's docstring, block by block."""
    for block in blocks(page):
        where = f"{page}:{block.line}"
        assert block.info in INFOS, f"{where}: a block with info string {block.info!r}"
        if block.marked:
            assert block.info in MARKABLE, f"{where}: only code is marked not run"
            assert MARKER.match(block.text), f"{where}: '# not run: <reason>', with a reason"
        if block.shell:
            assert not INSTALLS.search(block.text), f"{where}: it installs: mark it"
        if block.info == "console":
            assert page == "cli.md", f"{where}: a console transcript outside docs/cli.md"
        if block.info == "json":
            json.loads(block.text)  # a json block is JSON


def test_the_grammar_shown_is_the_grammar_obelisk_parses_with() -> None:
    (shown,) = [b for b in blocks("language.md") if b.info == "lark"]
    source = ROOT / "src" / "obelisk" / "grammar" / "reference.lark"
    lines = source.read_text(encoding="utf-8").splitlines()
    grammar = "\n".join(line for line in lines if not line.startswith("//")).strip()
    assert normalized(shown.text) == normalized(grammar)


def test_the_pages_run_python_and_shell_blocks() -> None:
    """Every page with code runs some of it, and the README's tour runs."""
    run = {page: [b for b in blocks(page) if b.runnable or b.shell] for page in ALL_PAGES}
    assert any(b.info == "python" for b in run[README])
    assert any(b.shell for page in PAGES for b in run[page])


# -- diagnostics.md ---------------------------------------------------------------------


def sections() -> dict[str, list[Block]]:
    """Blocks of docs/diagnostics.md by diagnostic code (sections headed ``## `code` ``)."""
    found: dict[str, list[Block]] = {}
    for block in blocks("diagnostics.md"):
        match = re.fullmatch(r"`([a-z_]+)`", block.section)
        if match:
            found.setdefault(match.group(1), []).append(block)
    return found


@pytest.fixture(scope="module")
def tools() -> list[obelisk.Tool]:
    first = next(b for b in blocks("diagnostics.md") if b.runnable)
    namespace: dict[str, Any] = {"__name__": "docs_diagnostics_tools"}
    run_block(first, "diagnostics.md", namespace)
    found = [value for value in namespace.values() if isinstance(value, obelisk.Tool)]
    assert found, "the first python block of diagnostics.md defines no tools"
    return found


def test_every_code_has_a_section() -> None:
    assert tuple(sections()) == CODES


def test_every_code_the_source_emits_is_documented() -> None:
    """A plain-text scan of the source (no import): codes passed to a diagnostic."""
    pattern = re.compile(r"(?:fail|Diagnostic)\(\s*\"([a-z_]+)\"")
    emitted = {
        code
        for path in (ROOT / "src" / "obelisk").rglob("*.py")
        for code in pattern.findall(path.read_text(encoding="utf-8"))
    }
    assert emitted <= set(CODES), f"undocumented codes: {sorted(emitted - set(CODES))}"


def one(found: list[Block], info: str) -> Block | None:
    matching = [b for b in found if b.info == info]
    assert len(matching) <= 1, f"more than one {info!r} block in one section"
    return matching[0] if matching else None


@pytest.mark.parametrize("code", CODES)
def test_bad_plan_gives_its_code_and_fixed_plan_gives_nothing(
    code: str, tools: list[obelisk.Tool]
) -> None:
    found = sections()[code]
    bad = one(found, "json bad")
    if bad is None:
        shown = [b for b in found if b.runnable]
        assert shown and any(code in b.text for b in shown), f"{code}: no example"
        return  # run by test_page_examples_run_and_print_what_they_show
    fixed = one(found, "json fixed")
    assert fixed is not None, f"{code}: a bad plan without a fixed one"
    documents = {
        name: json.loads(block.text)
        for name in ("input", "state")
        if (block := one(found, f"json {name}")) is not None
    }
    result = obelisk.check(bad.text, tools, **documents)
    matching = [d for d in result.diagnostics if d.code == code]
    assert matching, f"{code}: the bad plan gives {result.diagnostics}"
    following = found[found.index(bad) + 1]
    assert following.info == "output", f"{code}: the bad plan is not followed by its output"
    rendered = "\n".join(str(d) for d in matching)
    assert normalized(rendered) == normalized(following.text), rendered
    corrected = obelisk.check(fixed.text, tools, **documents)
    assert corrected.diagnostics == (), f"{code}: the fixed plan gives {corrected.diagnostics}"


# -- what the pages must not say --------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_pages_use_only_the_public_api(page: str) -> None:
    text = page_path(page).read_text(encoding="utf-8")
    assert "obelisk.interpreter" not in text
    assert "obelisk.grammar" not in text
    internal = ("DES" + "IGN", "\u00a7", "sha" + "red/")
    for word in internal:
        assert word not in text, f"{page} mentions {word!r}"
