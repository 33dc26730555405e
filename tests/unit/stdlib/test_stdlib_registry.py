"""default_registry: names, descriptions, schemas, purity, layering."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import obelisk
import obelisk.stdlib_tools as stdlib
from obelisk.interpreter.tools.registry import Registry
from obelisk.stdlib_tools import default_registry

PACKAGE = Path(stdlib.__file__).resolve().parent

# Tools whose result has no output schema: they return Any or an Outcome.
WITHOUT_OUTPUT_SCHEMA = {
    "branch",
    "const",
    "default",
    "first",
    "get",
    "if_else",
    "json_parse",
    "last",
    "read_json",
}
NOT_PURE = {
    "now",
    "today",
    "sleep",
    "read_text",
    "write_text",
    "read_json",
    "write_json",
    "list_dir",
    "path_exists",
}
REQUIRED = {
    # data
    "get", "const", "merge", "pick", "omit", "default",
    # text
    "format", "concat", "split", "join", "replace", "regex_match", "regex_find_all",
    "lower", "upper", "strip", "length",
    # arithmetic and comparison
    "add", "subtract", "multiply", "divide", "modulo", "power", "round", "min", "max",
    "sum", "mean", "compare", "equals",
    # logic
    "branch", "not", "all_true", "any_true",
    # lists
    "count", "sort", "unique", "flatten", "zip", "range", "filter", "map",
    # json
    "json_parse", "json_dump", "json_validate",
    # clock
    "now", "sleep",
    # files
    "read_text", "write_text", "read_json", "write_json", "list_dir",
}  # fmt: skip


def test_public_names() -> None:
    assert stdlib.__all__ == sorted(stdlib.__all__) == ["default_registry", "file_tools"]


def test_registry_holds_every_required_tool_under_a_unique_snake_case_name() -> None:
    registry = default_registry()
    names = registry.names()
    assert isinstance(registry, Registry)
    assert len(names) == len(set(names)) == len(registry) == 73
    assert set(names) >= REQUIRED
    for name in names:
        assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", name), name


def test_every_tool_is_described_and_typed() -> None:
    registry = default_registry()
    for tool in registry:
        assert tool.description, tool.name
        assert len(tool.description) <= 300, tool.name
        assert "\n" not in tool.description, tool.name
        assert not tool.latent, tool.name
        assert tool.outcomes == (), tool.name
        assert tool.parameters["additionalProperties"] is False, tool.name
        if tool.name in WITHOUT_OUTPUT_SCHEMA:
            assert tool.output_schema is None, tool.name
        else:
            assert tool.output_schema is not None, tool.name


def test_purity() -> None:
    for tool in default_registry():
        assert tool.pure is (tool.name not in NOT_PURE), tool.name
    assert [tool.name for tool in default_registry() if tool.is_async] == ["sleep"]


def test_each_call_builds_a_new_registry_with_its_own_files_root(tmp_path: Path) -> None:
    first, second = default_registry(), default_registry(files_root=tmp_path)
    assert first is not second
    assert first["add"] is second["add"]
    assert first["read_text"] is not second["read_text"]
    assert first.names() == second.names()


def test_stdlib_tools_run_in_a_plan() -> None:
    plan = [
        {"_tool": "map", "items": "†input.orders", "path": "amount", "_outputPath": "†state.a"},
        {"_tool": "sum", "values": "†state.a", "_outputPath": "†state.total"},
        {"_tool": "round", "value": "†state.total", "digits": 1, "_outputPath": "†state.rounded"},
        {"_tool": "sleep", "seconds": 0.01, "_outputPath": "†state.slept"},
        {
            "_tool": "format",
            "template": "{count} orders, {total} EUR",
            "fields": {"count": 3, "total": "†state.rounded"},
            "_outputPath": "†state.line",
        },
        {"_tool": "divide", "a": 1, "b": 0, "_outputPath": "†state.ratio || †state.error"},
    ]  # fmt: skip
    orders = [{"amount": 10.25}, {"amount": 5}, {"amount": 2.5}]
    result = obelisk.run_sync(plan, default_registry(), {"orders": orders})
    assert result.status == "completed"
    assert result.state == {
        "a": [10.25, 5, 2.5],
        "total": 17.75,
        "rounded": 17.8,
        "slept": 0.01,
        "line": "3 orders, 17.8 EUR",
        "error": {
            "error": {
                "type": "ZeroDivisionError",
                "message": "cannot divide 1 by zero",
                "tool": "divide",
                "call": 5,
            }
        },
    }


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_families_and_module_size() -> None:
    """One module per family (which imports they may make is an import-linter contract)."""
    modules = sorted(PACKAGE.glob("*.py"))
    assert [m.name for m in modules] == [
        "__init__.py",
        "_common.py",
        "arithmetic.py",
        "clock.py",
        "data.py",
        "files.py",
        "json_tools.py",
        "lists.py",
        "logic.py",
        "text.py",
    ]
    for module in modules:
        assert len(module.read_text(encoding="utf-8").splitlines()) < 400, module.name
