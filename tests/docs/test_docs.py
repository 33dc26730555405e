"""The examples of the user documentation (docs/*.md) run, and say what obelisk does.

Markdown conventions, kept simple on purpose:

* A fenced block opens with three backticks and an info string at the start of a line
  (never indented) and closes with three backticks.
* Every block whose info string is exactly ``python`` runs.  The blocks of one page
  run in page order, in one namespace, so a later block may use what an earlier one
  defined.  A block whose first line is ``# not run`` is only shown, never run.
* A ``python`` block followed (blank lines and text aside, nothing else) by an
  ``output`` block must print exactly that text (trailing spaces and surrounding blank
  lines ignored).  Every ``output`` block belongs to the block just before it.
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
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import obelisk

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = (
    "language.md",
    "semantics.md",
    "diagnostics.md",
    "loop.md",
    "tools.md",
    "testing.md",
    "simulate.md",
    "approvals.md",
    "limits.md",
)
CODES = (
    "json_syntax",
    "plan_shape",
    "reference_syntax",
    "unknown_meta",
    "limit",
    "unknown_tool",
    "invalid_argument",
    "missing_argument",
    "invalid_output",
    "outcome_mismatch",
    "ambiguous_output",
    "lazy_output",
    "unresolved_reference",
    "unknown_call",
    "readonly_target",
    "dependency_cycle",
    "type_mismatch",
    "write_conflict",
    "unreachable_call",
    "stream_order",
    "invalid_stub",
    "unsatisfiable_output",
)


@dataclass(frozen=True)
class Block:
    info: str
    text: str
    line: int  # 1-based line of the opening fence
    section: str  # the text of the last "## " heading before the block

    @property
    def runnable(self) -> bool:
        return self.info == "python" and not self.text.startswith("# not run")


def blocks(page: str) -> list[Block]:
    """The fenced blocks of a page, in order."""
    found: list[Block] = []
    section = ""
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    position = 0
    while position < len(lines):
        line = lines[position]
        if line.startswith("## "):
            section = line[3:].strip()
        if line.startswith("```") and line.strip() != "```":
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


def normalized(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def run_page(page: str) -> dict[str, Any]:
    """Run every runnable block of ``page``, checking the outputs shown; returns the namespace."""
    namespace: dict[str, Any] = {"__name__": f"docs_{page.replace('.', '_')}"}
    found = blocks(page)
    previous: Block | None = None
    printed = ""
    for block in found:
        if block.info == "output":
            assert previous is not None and previous.info in ("python", "json bad"), (
                f"{page}:{block.line}: an output block must follow a python or bad block"
            )
            if previous.runnable:
                assert normalized(printed) == normalized(block.text), (
                    f"{page}:{previous.line}: printed\n{printed}\nbut the page shows\n{block.text}"
                )
        elif block.runnable:
            printed = run_block(block, page, namespace)
        previous = block
    return namespace


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run_and_print_what_they_show(page: str) -> None:
    run_page(page)


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
    text = (DOCS / page).read_text(encoding="utf-8")
    assert "obelisk.interpreter" not in text
    assert "obelisk.grammar" not in text
    internal = ("DES" + "IGN", "\u00a7", "sha" + "red/")
    for word in internal:
        assert word not in text, f"{page} mentions {word!r}"
