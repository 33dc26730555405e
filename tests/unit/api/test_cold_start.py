"""What ``import obelisk`` and ``obelisk --version`` load: nothing of the interpreter
(docs/performance.md, "Cold start").

Each check runs a fresh interpreter and reads its ``sys.modules``, so a new import at
the top of a module that these paths reach fails here instead of slowing every start
of the command silently.  Speed itself is measured in benchmarks/cold_start.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# packages (or obelisk's own modules) that neither path may load
_HEAVY = (
    "asyncio",
    "click",
    "concurrent",
    "hypothesis",
    "jiter",
    "jsonpath_ng",
    "jsonschema",
    "lark",
    "obelisk.cli.io",
    "obelisk.cli.run",
    "obelisk.grammar",
    "obelisk.interpreter",
    "obelisk.models",
    "obelisk.stdlib_tools",
    "openai",
    "pydantic",
    "pydantic_core",
    "re2",
    "rich",
    "sqlite3",
    "tenacity",
)

_LOADED = """
import json, sys
{action}
heavy = {heavy!r}
inside = tuple(h + "." for h in heavy)
print(json.dumps(sorted(m for m in sys.modules if m in heavy or m.startswith(inside))))
"""


def _loaded(action: str) -> tuple[list[str], str]:
    code = _LOADED.format(action=action, heavy=_HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *printed, modules = done.stdout.splitlines()
    return json.loads(modules), "\n".join(printed)


def test_import_obelisk_loads_only_the_errors_diagnostics_and_limits() -> None:
    modules, _ = _loaded("import obelisk")
    assert modules == []
    code = "import sys, obelisk; print(sorted(m for m in sys.modules if m.startswith('obelisk')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert eval(done.stdout) == [
        "obelisk",
        "obelisk.diagnostics",
        "obelisk.errors",
        "obelisk.json_values",
        "obelisk.limits",
        "obelisk.public_module",
    ]


def test_obelisk_version_builds_no_command_and_loads_no_interpreter() -> None:
    action = (
        "import runpy\n"
        "sys.argv = ['obelisk', '--version']\n"
        "runpy.run_module('obelisk', run_name='__main__')\n"
    )
    modules, printed = _loaded(action)
    assert printed == "obelisk 0.1.0"
    assert modules == []


def test_the_version_option_prints_the_same_among_other_options() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "obelisk", "--version", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "obelisk 0.1.0\n"


def test_a_public_name_loads_its_stage_and_every_loaded_name_reports_obelisk() -> None:
    code = (
        "import inspect, sys, obelisk\n"
        "obelisk.run_sync\n"
        "values = [vars(obelisk)[n] for n in obelisk.__all__ if n in vars(obelisk)]\n"
        "values = [v for v in values if isinstance(v, type) or inspect.isfunction(v)]\n"
        "wrong = [v.__name__ for v in values if v.__module__ != 'obelisk']\n"
        "print(wrong, 'RunResult' in vars(obelisk), 'obelisk.interpreter.loop' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "True", "False"]


_RUN = """
import contextlib, io, json, runpy, sys
sys.argv = ["obelisk", "run", sys.argv[1], "--tools", sys.argv[2]]
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
    runpy.run_module("obelisk", run_name="__main__")
later = ("lark", "jsonpath_ng", "tenacity", "obelisk.grammar.lalr", "obelisk.grammar.jsonpath")
print(json.dumps([json.loads(out.getvalue()), sorted(m for m in sys.modules if m in later)]))
"""


def test_obelisk_run_of_plain_references_loads_neither_lark_nor_jsonpath_nor_tenacity(
    tmp_path: Path,
) -> None:
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
        {"_tool": "double", "n": "†state.b || †state.a", "_outputPath": "†state.c"},
    ]
    plan.write_text(json.dumps(calls, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(plan), str(tools)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == [{"a": 2, "b": 4, "c": 8}, []]


def test_the_slow_paths_still_load_what_they_need() -> None:
    code = (
        "import sys, obelisk\n"
        "obelisk.parse_expression('†state[\"a b\"]')\n"  # a quoted key: the LALR parser
        "from obelisk.grammar import parse_reference, to_jsonpath\n"
        "to_jsonpath(parse_reference('†state.a'))\n"
        "print(sorted(m for m in ('lark', 'jsonpath_ng') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['jsonpath_ng',", "'lark']"]
