"""The README is a front door that stays true (issue 26, point 8).

* it is at most 12 KB, and every relative link of it and of docs/ names a file that exists;
* the quick start is exactly two commands, each starting with its virtual environment
  line; the first's ``obelisk`` command line runs and prints the example's expected
  state (the install itself cannot run in a test: the block carries the ``# not run``
  marker of tests/docs/test_docs.py), the second is the test command ``.ci/run`` runs;
* its runtime dependencies, and those of docs/install.md, are pyproject.toml's
  ``[project] dependencies``, names and floors, no more and no fewer;
* the diagnostic codes the docs list are ``obelisk.diagnostics.DIAGNOSTIC_CODES``: one
  ``## `code` `` section of docs/diagnostics.md per code, in order, and a table of
  them, with no code that does not exist.

The README's code blocks themselves run in tests/docs/test_docs.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from obelisk.diagnostics import DIAGNOSTIC_CODES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
VENV = "python3 -m venv .venv && . .venv/bin/activate && "
LINK = re.compile(r"\]\(([^)\s]+)\)")


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end == -1 else text[start:end]


def quick_start() -> list[str]:
    """The quick start's command lines, the ``# not run`` marker line left out."""
    block = section(TEXT, "Quick start").partition("```bash\n")[2].partition("```")[0]
    marker, *commands = block.strip().splitlines()
    assert marker.startswith("# not run: "), "the quick start installs: it is marked"
    return commands


def environment() -> dict[str, str]:
    """This Python's scripts first on PATH, the tested source first on PYTHONPATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


# -- size and links ---------------------------------------------------------------------


def test_the_readme_is_at_most_12_kb() -> None:
    assert len(TEXT.encode("utf-8")) <= 12 * 1024


def test_every_relative_link_names_a_file_that_exists() -> None:
    pages = [README, *sorted(DOCS.glob("*.md"))]
    missing = []
    for page in pages:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            if not (page.parent / target.partition("#")[0]).exists():
                missing.append(f"{page.relative_to(ROOT)}: {target}")
    assert not missing, missing


def test_the_readme_links_every_docs_page() -> None:
    for page in sorted(DOCS.glob("*.md")):
        assert f"(docs/{page.name})" in TEXT, page.name


# -- the quick start --------------------------------------------------------------------


def test_the_quick_start_is_two_commands_each_with_its_venv_line() -> None:
    run, test = quick_start()
    assert run.startswith(VENV + "python3 -m pip install . && obelisk run ")
    assert test.startswith(VENV)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv .venv\n. .venv/bin/activate\n" in ci.replace(
        "# shellcheck disable=SC1091\n", ""
    )
    (ci_test,) = [line for line in ci.splitlines() if line.endswith("-m pytest")]
    assert test.removeprefix(VENV) == ci_test.replace("--quiet ", "")


def test_the_quick_start_example_prints_the_expected_state() -> None:
    """The first command after its install: what it prints, on both streams."""
    run, _ = quick_start()
    command = run.split(" && ")[-1]
    assert command.startswith("obelisk run examples/payment/plan.json ")
    done = subprocess.run(
        shlex.split(command),
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    expected = json.loads((ROOT / "examples" / "payment" / "expected.json").read_text())
    assert json.loads(done.stdout) == expected
    summary = done.stderr.strip().splitlines()[-1]
    assert f"`{summary}`" in " ".join(section(TEXT, "Quick start").split())


# -- dependencies -----------------------------------------------------------------------


def runtime_requirements() -> dict[str, str]:
    """``{name: floor}`` of pyproject.toml's ``[project] dependencies``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert block is not None
    found = re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)"', block.group(1))
    assert len(found) == block.group(1).count('"') // 2, "a requirement without a floor"
    return dict(found)


def test_the_readme_dependencies_are_pyprojects() -> None:
    text = section(TEXT, "Dependencies")
    listed = text.partition("Runtime dependencies:\n")[2].partition(" (")[0]
    names = re.split(r",\s+(?:and\s+)?|\s+and\s+", " ".join(listed.split()))
    floors = " ".join(text.partition("Minimum versions:")[2].partition(";")[0].split())
    pairs = dict(re.findall(r"([A-Za-z0-9_.-]+) ≥ ([0-9.]+)", floors))
    requirements = runtime_requirements()
    assert sorted(names) == sorted(requirements)
    assert pairs == requirements


def test_the_install_page_explains_every_runtime_dependency() -> None:
    text = section((DOCS / "install.md").read_text(encoding="utf-8"), "Runtime dependencies")
    items = re.findall(r"^- (.+?), for ", text, re.M)
    names = [name for item in items for name in item.split(" and ")]
    names = [name.split()[0] for name in names]  # "pydantic v2", "google-re2 (`import re2`)"
    assert sorted(names) == sorted(runtime_requirements())


# -- diagnostic codes -------------------------------------------------------------------


def test_every_code_has_a_section_in_order() -> None:
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    headed = tuple(re.findall(r"^## `([a-z_]+)`$", text, re.M))
    assert headed == DIAGNOSTIC_CODES


def test_the_table_lists_every_code_and_no_other() -> None:
    text = section((DOCS / "diagnostics.md").read_text(encoding="utf-8"), "Every code")
    rows = tuple(re.findall(r"^\| `([a-z_]+)` \| (error|warning) \|", text, re.M))
    assert tuple(code for code, _ in rows) == DIAGNOSTIC_CODES


def test_every_rendered_code_in_the_docs_exists() -> None:
    """``error[code]`` and ``warning[code]`` anywhere in the README or docs/."""
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for code in re.findall(r"\b(?:error|warning)\[([a-z_]+)\]", text):
            assert code in DIAGNOSTIC_CODES, f"{page.name}: {code}"
