"""The standard tools build their pydantic adapters and JSON schemas on first use.

Importing them, building a registry of them and checking or running a plan that
calls none of them builds nothing; every one of them builds, to the same schemas
and validation as a tool declared at once with :func:`obelisk.tool`.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import obelisk
from obelisk.stdlib_tools import default_registry


def _eager(tool: obelisk.Tool) -> obelisk.Tool:
    """The same function declared as a user tool: built and checked at once."""
    assert tool.function is not None
    return obelisk.Tool.from_function(tool.function, name=tool.name, pure=tool.pure)


def test_every_standard_tool_builds_to_what_an_eager_declaration_gives(tmp_path: Path) -> None:
    registry = default_registry(files_root=tmp_path)
    for tool in registry:
        eager = _eager(tool)
        assert tool.parameters == eager.parameters, tool.name
        assert tool.output_schema == eager.output_schema, tool.name
        assert tool.typed_output is eager.typed_output, tool.name
        assert tool.parameter_names == eager.parameter_names, tool.name
        assert tool.required == eager.required, tool.name
        assert tool.accepts_extra is eager.accepts_extra, tool.name
        assert tool.built, tool.name


def test_a_standard_tool_validates_like_an_eager_one() -> None:
    add = default_registry()["add"]
    eager = _eager(add)
    for arguments in ({"a": 1, "b": 2.5}, {"a": "x", "b": 1}, {"a": 1}, {"a": 1, "b": 2, "c": 3}):
        try:
            expected: object = eager.validate_arguments(arguments)
        except obelisk.ArgumentValidationError as exc:
            expected = exc.problems
        try:
            found: object = add.validate_arguments(arguments)
        except obelisk.ArgumentValidationError as exc:
            found = exc.problems
        assert found == expected


_FRESH = textwrap.dedent(
    """
    import json, sys
    import obelisk
    from obelisk.stdlib_tools import default_registry

    @obelisk.tool
    def one(x: int) -> int:
        "One more."
        return x + 1

    registry = default_registry().merge(obelisk.Registry([one]))
    plan = [{"_tool": "one", "x": 1, "_outputPath": "†state.y"}]
    obelisk.check(plan, registry).raise_for_errors()
    result = obelisk.run_sync(plan, registry)
    built = [t.name for t in registry if t.name != "one" and t.built]
    print(json.dumps([result.state, built, "re2" in sys.modules]))
    """
)


def test_checking_and_running_a_plan_builds_no_standard_tool_it_does_not_call() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _FRESH], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == '[{"y": 2}, [], false]'


class Opaque:
    """A type pydantic has no JSON schema for."""


def test_a_deferred_tool_reports_a_type_without_schema_on_first_use() -> None:
    def broken(value: Opaque) -> int:
        """No JSON schema for the parameter."""
        return 0

    deferred = obelisk.Tool.from_function(broken, _deferred=True)
    assert deferred.parameter_names == ("value",)
    assert deferred.required == frozenset({"value"})
    with pytest.raises(obelisk.ToolDefinitionError, match="parameter 'value' has no JSON schema"):
        deferred.parameters  # noqa: B018
    with pytest.raises(obelisk.ToolDefinitionError, match="parameter 'value' has no JSON schema"):
        deferred.validate_arguments({"value": 1})
    with pytest.raises(obelisk.ToolDefinitionError, match="parameter 'value' has no JSON schema"):
        obelisk.tool(broken)  # a user's tool fails at declaration
