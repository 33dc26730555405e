"""The public surface of issue 26: ``ToolsLike``, ``DiagnosticCode``, and the public
module every exported class and function reports (docs/tools.md, docs/diagnostics.md)."""

from __future__ import annotations

import inspect
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
    assert len(DIAGNOSTIC_CODES) == len(set(DIAGNOSTIC_CODES)) == 22


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
