"""The public surface of issue 26: ``ToolsLike``, ``DiagnosticCode``, and the public
module every exported class and function reports (docs/tools.md, docs/diagnostics.md)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pickle
import subprocess
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

import obelisk
import obelisk.testing
from obelisk.diagnostics import DIAGNOSTIC_CODES


def echo(value: Any) -> Any:
    """Return its argument."""
    return value


# -- ToolsLike ------------------------------------------------------------------------

TAKE_TOOLS: list[Callable[..., Any]] = [
    obelisk.check,
    obelisk.run,
    obelisk.run_sync,
    obelisk.resume,
    obelisk.resume_sync,
    obelisk.simulate,
    obelisk.Loop.__init__,
    obelisk.Loop.resume,
    obelisk.Loop.resume_sync,
    obelisk.Journal.decide,
    obelisk.Registry.coerce,
    obelisk.testing.plans,
    obelisk.testing.invalid_plans,
    obelisk.testing.FakeTools.__init__,
]


@pytest.mark.parametrize("function", TAKE_TOOLS, ids=lambda f: f.__qualname__)
def test_public_signatures_take_tools_like(function: Callable[..., Any]) -> None:
    assert inspect.signature(function).parameters["tools"].annotation == "ToolsLike"


def test_tools_like_names_everything_registry_coerce_takes() -> None:
    assert typing.get_args(obelisk.ToolsLike) == (
        obelisk.Registry,
        types.ModuleType,
        Mapping[str, Any],
        Iterable[obelisk.Tool | Callable[..., Any] | Mapping[str, Any]],
        type(None),
    )
    described = {"name": "echo", "parameters": {"type": "object"}}
    registry = obelisk.Registry([echo])
    examples: list[obelisk.ToolsLike] = [
        registry,
        {"echo": echo},
        described,
        [echo, obelisk.Tool.from_function(echo, name="again"), {**described, "name": "third"}],
        None,
    ]
    names = [obelisk.Registry.coerce(tools).names() for tools in examples]
    assert names == [["echo"], ["echo"], ["echo"], ["echo", "again", "third"], []]
    assert obelisk.Registry.coerce(registry) is registry


# -- DiagnosticCode -------------------------------------------------------------------


def test_diagnostic_code_is_exported_and_lists_every_code() -> None:
    assert typing.get_args(obelisk.DiagnosticCode) == DIAGNOSTIC_CODES
    assert (
        len(DIAGNOSTIC_CODES) == len(set(DIAGNOSTIC_CODES)) == 24
    )  # issue 28: invalid_tools, untrusted_flow


def test_invalid_plans_codes_come_from_the_diagnostic_codes_in_their_order() -> None:
    codes = obelisk.testing.INVALID_CODES
    assert codes == tuple(code for code in DIAGNOSTIC_CODES if code in codes)
    assert codes == (  # unchanged: the codes invalid_plans has always made
        "json_syntax",
        "plan_shape",
        "reference_syntax",
        "unknown_tool",
        "invalid_argument",
        "missing_argument",
        "invalid_output",
        "outcome_mismatch",
        "unresolved_reference",
        "readonly_target",
        "dependency_cycle",
        "type_mismatch",
    )


# -- the public module ------------------------------------------------------------------


def exported(module: types.ModuleType) -> list[tuple[str, Any]]:
    """The classes and functions of ``module.__all__`` (type aliases and constants aside)."""
    values = [(name, getattr(module, name)) for name in module.__all__]
    return [(n, v) for n, v in values if isinstance(v, type) or inspect.isfunction(v)]


def test_every_public_class_and_function_reports_obelisk_as_its_module() -> None:
    wrong = {name: v.__module__ for name, v in exported(obelisk) if v.__module__ != "obelisk"}
    assert wrong == {}
    assert len(exported(obelisk)) >= 60
    assert repr(obelisk.PlanError) == "<class 'obelisk.PlanError'>"
    assert repr(obelisk.Loop) == "<class 'obelisk.Loop'>"


def test_the_testing_names_report_obelisk_testing_and_scripted_model_obelisk() -> None:
    modules = {name: v.__module__ for name, v in exported(obelisk.testing)}
    assert modules.pop("ScriptedModel") == "obelisk"
    assert set(modules.values()) == {"obelisk.testing"}
    assert "plans" in modules and "FakeTools" in modules


def test_a_lazy_name_reports_obelisk_once_imported_through_obelisk() -> None:
    code = (
        "import obelisk, pickle\n"
        "print(obelisk.LoopResult.__module__, obelisk.simulate.__module__)\n"
        "print(pickle.loads(pickle.dumps(obelisk.LoopResult)) is obelisk.LoopResult)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["obelisk obelisk", "True"]


def _round_trip(value: Any) -> Any:
    data = pickle.dumps(value)
    assert b"obelisk.errors" not in data and b"obelisk.interpreter" not in data
    assert b"obelisk.diagnostics" not in data and b"obelisk.limits" not in data
    return pickle.loads(data)


def test_pickles_name_the_public_path_and_round_trip() -> None:
    tool = obelisk.Tool.from_function(echo)
    result = obelisk.run_sync([{"_tool": "echo", "value": 1, "_outputPath": "†state.x"}], [tool])
    diagnostic = obelisk.check([{"_tool": "nope"}], [tool]).diagnostics[0]
    values = [
        result.calls[0],
        result.log[0],
        diagnostic,
        obelisk.parse_plan([{"_tool": "echo", "value": 1}]),
        obelisk.Limits(),
        obelisk.Decision(True),
    ]
    for value in values:
        assert _round_trip(value) == value
    for error in (obelisk.UsageError("bad"), obelisk.JournalError("gone", "run.db")):
        copy = _round_trip(error)
        assert type(copy) is type(error) and copy.args == error.args
    # a pickle made before, naming the defining module, still loads
    old = pickle.dumps(diagnostic).replace(b"\x8c\x07obelisk", b"\x8c\x13obelisk.diagnostics", 1)
    assert b"obelisk.diagnostics" in old
    assert pickle.loads(old) == diagnostic


def test_type_hints_and_doctests_still_resolve_in_the_defining_modules() -> None:
    for _, value in exported(obelisk):
        if isinstance(value, type):
            typing.get_type_hints(value)  # raises NameError if looked up in obelisk
    loop_module = importlib.import_module("obelisk.interpreter.loop.loop")
    assert obelisk.Loop.__module__ == "obelisk"
    found = [t.name for t in doctest.DocTestFinder().find(loop_module) if t.examples]
    assert found == ["obelisk.interpreter.loop.loop.__test__.Loop"]
