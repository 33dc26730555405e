"""A new user's first hour (issue 24 points 8 and 9).

* ``obelisk.run(plan, [my_tool])`` with a standard tool in the plan says where the
  standard tools are (``obelisk.stdlib_tools.default_registry()``);
* the README names every runtime dependency of pyproject.toml, with its floor;
* the quick start makes a virtual environment, then runs exactly two commands;
* the README says how many tests to expect, skips included;
* docs/durable.md gives the journal's cost the benchmark report gives (docs/performance.md,
  where the report moved from the README, issue 26).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.errors import PlanError
from obelisk.stdlib_tools import default_registry

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PERFORMANCE = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")  # the report
HINT = "obelisk.stdlib_tools.default_registry()"


@obelisk.tool
def shout(text: str) -> str:
    """Text in capitals."""
    return text.upper()


PLAN = [
    {"_tool": "shout", "text": "hi", "_outputPath": "†state.loud"},
    {"_tool": "concat", "parts": ["†state.loud", "!"], "_outputPath": "†state.said"},
]


def test_a_standard_tool_missing_from_my_tools_points_at_the_default_registry() -> None:
    with pytest.raises(PlanError) as caught:
        obelisk.run_sync(PLAN, [shout])
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "unknown_tool" and diagnostic.call == 1
    assert diagnostic.message.startswith("unknown tool 'concat'; 'concat' is a standard tool")
    assert HINT in diagnostic.message
    registry = default_registry()  # following the hint works
    registry.add(shout)
    assert obelisk.run_sync(PLAN, registry).state == {"loud": "HI", "said": "HI!"}


def test_an_empty_registry_points_at_the_default_registry_too() -> None:
    result = obelisk.check(PLAN[1:], obelisk.Registry())
    assert HINT in result.diagnostics[0].message


def test_a_name_that_is_no_standard_tool_keeps_its_did_you_mean() -> None:
    result = obelisk.check([{"_tool": "shuot", "text": "x"}], [shout])
    (diagnostic,) = result.diagnostics
    assert diagnostic.message == "unknown tool 'shuot'; did you mean 'shout'?"
    assert HINT not in diagnostic.message


def test_no_stdlib_on_the_command_line_gets_the_hint(tmp_path: Path) -> None:
    plan = tmp_path / "p.json"
    plan.write_text('[{"_tool": "add", "a": 1, "b": 2}]', encoding="utf-8")
    done = CliRunner().invoke(app, ["check", str(plan), "--no-stdlib"])
    assert done.exit_code == 2
    assert "leave out --no-stdlib" in done.stdout


def test_the_standard_tool_names_are_the_default_registrys() -> None:
    from obelisk.interpreter.tools.standard_names import STANDARD_TOOL_NAMES

    assert set(default_registry().names()) == STANDARD_TOOL_NAMES


# -- the README -------------------------------------------------------------------------


def runtime_requirements() -> dict[str, str]:
    """``{name: floor}`` of pyproject.toml's ``[project] dependencies``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert block is not None
    found = re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)"', block.group(1))
    assert len(found) == block.group(1).count('"') // 2, "a requirement without a floor"
    return dict(found)


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end]


def test_the_readme_names_every_runtime_dependency_with_its_floor() -> None:
    requirements = runtime_requirements()
    assert {"google-re2", "pebble"} <= set(requirements)
    text = section("Dependencies")
    listed = text.partition("Runtime dependencies:\n")[2].partition("\n\n")[0].lower()
    floors = " ".join(text.partition("Minimum versions:")[2].partition("\n\n")[0].split())
    for name, floor in requirements.items():
        assert name.lower() in listed, name
        assert f"{name} ≥ {floor}" in floors, name


def test_the_quick_start_makes_a_venv_then_runs_two_commands() -> None:
    # issue 26: each of the two commands starts with the venv line, and the block
    # carries tests/docs' "# not run: <reason>" marker (it installs packages)
    block = section("Quick start").partition("```bash\n")[2].partition("```")[0]
    marker, *lines = block.strip().splitlines()
    assert marker.startswith("# not run: ")
    first = "python3 -m venv .venv && . .venv/bin/activate"
    assert all(line.startswith(f"{first} && ") for line in lines)
    commands = [line.removeprefix(f"{first} && ") for line in lines]
    assert len(commands) == 2
    assert commands[0].startswith("python3 -m pip install . && obelisk run ")
    assert commands[1] == "python3 -m pip install -e '.[dev]' && python3 -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv .venv\n" in ci  # CI makes its virtual environment the same way


def test_the_readme_says_how_many_tests_to_expect(request: pytest.FixtureRequest) -> None:
    text = " ".join(section("Quick start").split())
    said = re.search(r"about ([0-9,]+) tests should pass", text)
    assert said is not None
    # the number said is the suite's size to within 10%, when the whole suite is collected
    # (no paths but the project's or its tests folder, no -k)
    paths = {Path(arg.split("::")[0]).resolve() for arg in request.config.args}
    whole = paths <= {ROOT, ROOT / "tests"} and not request.config.option.keyword
    if whole:
        collected = len(request.session.items)
        assert abs(int(said[1].replace(",", "")) - collected) <= collected / 10
    assert "skipped, each for a reason `pytest -rs` prints" in text
    assert "nothing should fail" in text


def test_durable_md_gives_the_journal_cost_of_the_readme_report() -> None:
    line = re.search(r"\*\*Run journal\*\*.*", PERFORMANCE)
    assert line is not None
    numbers = re.findall(r"[0-9][0-9,]*\.[0-9]+", line.group(0))
    memory_wall, memory_cpu, journal_wall, journal_cpu, *ratios = numbers[:6]
    resume = re.search(r"committed calls: ([0-9.]+) / ([0-9.]+) s", line.group(0))
    assert resume is not None
    durable = (ROOT / "docs" / "durable.md").read_text(encoding="utf-8")
    row = f"| {memory_wall} / {memory_cpu} | {journal_wall} / {journal_cpu} "
    row += f"({ratios[0]}x / {ratios[1]}x) |"
    assert row in durable
    prose = " ".join(durable.split())
    assert f"takes {resume.group(1)} s ({resume.group(2)} s CPU)" in prose
