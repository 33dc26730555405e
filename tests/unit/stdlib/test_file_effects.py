"""The standard file tools declare world effects on the files root (issue 28, point 6;
docs/tools.md, "Files"; docs/semantics.md, "World effects and order-only edges").

A write and a later read of one file in one plan are an effect edge: they run in plan
order every time, and the graph (``obelisk graph``, ``CheckResult.graph``) shows it.
The resource is ``files:<path>`` for a literal relative path, the whole ``files`` root
for anything else (a reference, an absolute path, ``..``, the root itself).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.stdlib_tools import default_registry

WRITE_THEN_READ: list[dict[str, Any]] = [
    {"_tool": "write_text", "path": "notes/a.txt", "text": "hello"},
    {"_tool": "read_text", "path": "notes//./a.txt", "_outputPath": "†state.text"},
    {"_tool": "read_text", "path": "other.txt", "_outputPath": "†state.other || †state.none"},
    {"_tool": "write_json", "path": "other.txt", "value": [1]},
]


def order_edges(plan: list[dict[str, Any]], **kwargs: Any) -> dict[tuple[int, int], str]:
    graph = obelisk.check(plan, default_registry("."), **kwargs).graph
    assert graph is not None
    return graph.order_edges


def test_a_write_then_a_read_of_one_file_is_an_effect_edge() -> None:
    assert order_edges(WRITE_THEN_READ) == {
        (0, 1): "files:notes/a.txt",  # one file, spelled two ways
        (2, 3): "files:other.txt",  # a read, then a write: the write waits
    }


def test_the_graph_holds_each_calls_own_resources() -> None:
    graph = obelisk.check(WRITE_THEN_READ, default_registry(".")).graph
    assert graph is not None
    assert graph.world_effects == {
        0: {"files:notes/a.txt": "write"},
        1: {"files:notes/a.txt": "read"},
        2: {"files:other.txt": "read"},
        3: {"files:other.txt": "write"},
    }


def test_the_plan_runs_in_order_every_time(tmp_path: Path) -> None:
    registry = default_registry(tmp_path)
    for round_ in range(30):
        plan = [dict(call) for call in WRITE_THEN_READ]
        plan[0]["text"] = f"hello {round_}"
        result = obelisk.run_sync(plan, registry)
        assert result.state == {"text": f"hello {round_}", "none": result.state["none"]}
        assert result.state["none"]["error"]["type"] == "FileNotFoundError"
        (tmp_path / "other.txt").unlink()


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("notes/a.txt", "files:notes/a.txt"),
        ("./notes/a.txt/", "files:notes/a.txt"),
        ("notes", "files:notes"),  # a folder: overlaps every file below it
        ("†input.path", "files"),  # a reference: any file
        ("/etc/notes/a.txt", "files"),  # absolute: where it lands depends on the root
        ("x/../notes/a.txt", "files"),  # '..' after a symlink goes elsewhere
        ("notes\\a.txt", "files"),  # a Windows separator
        (".", "files"),  # the root itself
    ],
)
def test_which_resource_a_call_touches(path: str, resource: str) -> None:
    plan = [
        {"_tool": "write_text", "path": path, "text": "x"},
        {"_tool": "read_text", "path": "notes/a.txt", "_outputPath": "†state.t"},
    ]
    expected = resource if resource != "files:notes" else "files:notes / files:notes/a.txt"
    if resource == "files":
        expected = "files / files:notes/a.txt"
    assert order_edges(plan, input={"path": "p"}) == {(0, 1): expected}


def test_reads_of_files_are_not_ordered_and_other_files_are_not_either() -> None:
    plan = [
        {"_tool": "read_text", "path": "a.txt"},
        {"_tool": "read_json", "path": "a.txt"},
        {"_tool": "list_dir"},
        {"_tool": "write_text", "path": "b.txt", "text": "x"},
        {"_tool": "path_exists", "path": "c.txt"},
    ]
    assert order_edges(plan) == {(2, 3): "files / files:b.txt"}  # list_dir reads the root


def test_obelisk_graph_draws_the_edge(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(obelisk.parse_plan(WRITE_THEN_READ).to_json(), encoding="utf-8")
    result = CliRunner().invoke(app, ["graph", str(plan), "--files-root", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert 'c0 -. "effect: files:notes/a.txt" .-> c1' in result.output
    assert 'c2 -. "effect: files:other.txt" .-> c3' in result.output


def test_file_writers_stay_out_of_a_delegate_by_default() -> None:
    from obelisk.interpreter.tools.delegation import default_tools  # new in issue 28

    names = default_tools(default_registry())
    assert {"read_text", "read_json", "list_dir", "path_exists"} <= set(names)
    assert not {"write_text", "write_json"} & set(names)
