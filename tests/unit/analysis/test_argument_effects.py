"""World effects on a path inside a resource, and on a resource named by an argument
(issue 28, point 6; docs/semantics.md, "World effects and order-only edges").

``files:notes/a.txt`` lies below ``files``; ``effects={"files:{path}": "write"}`` makes
each call touch ``files:<its literal path>``, or the whole ``files`` when its ``path``
is a reference or missing.
"""

from __future__ import annotations

from typing import Any

import pytest

import obelisk
from obelisk import ToolDefinitionError


def tool(name: str, effects: dict[str, str]) -> obelisk.Tool:
    def body(path: str = ".", table: str = "t") -> None:
        return None

    return obelisk.Tool.from_function(body, name=name, effects=effects)


TOOLS = [
    tool("save", {"files:{path}": "write"}),
    tool("load", {"files:{path}": "read"}),
    tool("wipe", {"files": "write"}),
    tool("log", {"files:logs/today.txt": "write", "db.{table}": "read"}),
    tool("drop", {"db:{table}": "write", "files:{path}": "read"}),
]


def edges(*calls: dict[str, Any], **documents: Any) -> dict[tuple[int, int], str]:
    result = obelisk.check(list(calls), TOOLS, **documents)
    assert result.ok, result.diagnostics
    assert result.graph is not None
    return result.graph.order_edges


def test_one_literal_path_orders_its_writer_and_reader() -> None:
    save, load = {"_tool": "save", "path": "a/b.txt"}, {"_tool": "load", "path": "a/b.txt"}
    assert edges(save, load) == {(0, 1): "files:a/b.txt"}
    assert edges(save, {"_tool": "load", "path": "a/c.txt"}) == {}
    assert edges(save, {"_tool": "load", "path": "a"}) == {(0, 1): "files:a/b.txt / files:a"}
    assert edges(save, {"_tool": "wipe"}) == {(0, 1): "files:a/b.txt / files"}


def test_a_reference_or_a_missing_argument_is_the_whole_resource() -> None:
    save = {"_tool": "save", "path": "a.txt"}
    by_reference = {"_tool": "load", "path": "†input.p"}
    assert edges(save, by_reference, input={"p": "z.txt"}) == {(0, 1): "files:a.txt / files"}
    assert edges(save, {"_tool": "load"}) == {(0, 1): "files:a.txt / files"}
    assert edges({"_tool": "save", "path": "††x"}, {"_tool": "load", "path": "x"}) == {
        (0, 1): "files / files:x"  # an escaped literal: taken as the whole resource too
    }


def test_a_static_path_resource_and_a_dotted_one_stay_apart() -> None:
    log = {"_tool": "log", "table": "x"}
    assert edges(log, {"_tool": "load", "path": "logs/today.txt"}) == {
        (0, 1): "files:logs/today.txt"
    }
    # "db.{table}" is a plain dotted name (no ':'): nothing is taken from the argument
    assert edges(log, {"_tool": "drop", "table": "{table}", "path": "b.txt"}) == {}
    assert edges({"_tool": "drop", "table": "t1"}, {"_tool": "drop", "table": "t1"}) == {
        (0, 1): "db:t1"
    }


@pytest.mark.parametrize(
    ("resource", "message"),
    [
        ("files:", "the part after ':' must be a relative path"),
        ("files:../x", "the part after ':' must be a relative path"),
        ("files:a//b", "the part after ':' must be a relative path"),
        ("a b:c", "must be a dotted name"),
        (":x", "must be a dotted name"),
    ],
)
def test_bad_resources_are_refused_at_declaration(resource: str, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        tool("bad", {resource: "write"})


def test_a_json_description_may_name_an_argument() -> None:
    spec = {
        "name": "put",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
        "effects": {"store:{key}": "write"},
    }
    put = obelisk.Tool.from_schema(spec)
    plan = [{"_tool": "put", "key": "k/1"}, {"_tool": "put", "key": "k/1"}]
    graph = obelisk.check(plan, [put]).graph
    assert graph is not None
    assert graph.order_edges == {(0, 1): "store:k/1"}
