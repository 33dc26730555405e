"""World effects and ``_after``: order-only edges between calls (docs/semantics.md)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.errors import ToolDefinitionError


def world_tools(world: dict[str, Any], delays: dict[str, float] | None = None) -> list[Any]:
    delays = delays or {}

    @obelisk.tool(effects={"slack.users": "write"})
    async def invite_user(name: str) -> str:
        """Invite someone."""
        await asyncio.sleep(delays.get("invite", 0.0))
        world["users"].append(name)
        return name

    @obelisk.tool(effects={"slack": "write"})
    async def send_direct_message(to: str, text: str) -> str:
        """Message a member."""
        await asyncio.sleep(delays.get("send", 0.0))
        if to not in world["users"]:
            raise LookupError(f"Recipient {to} not found")
        world["sent"].append(to)
        return "sent"

    @obelisk.tool(effects={"slack.users": "read"})
    async def count_users() -> int:
        """Count the members."""
        await asyncio.sleep(delays.get("count", 0.0))
        return len(world["users"])

    @obelisk.tool
    def note(text: str) -> str:
        """No effects at all."""
        return text

    return [invite_user, send_direct_message, count_users, note]


def test_conflicting_effects_run_in_plan_order_whatever_the_delays() -> None:
    plan = [
        {"_tool": "invite_user", "name": "Dora"},
        {"_tool": "send_direct_message", "to": "Dora", "text": "hi"},
    ]
    for delays in ({"invite": 0.05}, {"send": 0.05}, {}):
        world: dict[str, Any] = {"users": [], "sent": []}
        result = obelisk.run_sync(plan, world_tools(world, delays))
        assert [r.status for r in result.calls] == ["succeeded", "succeeded"]
        assert world == {"users": ["Dora"], "sent": ["Dora"]}


def test_edges_reads_in_parallel_and_labels() -> None:
    tools = world_tools({"users": [], "sent": []})
    plan = [
        {"_tool": "count_users"},
        {"_tool": "count_users"},
        {"_tool": "invite_user", "name": "A"},
        {"_tool": "count_users"},
        {"_tool": "note", "text": "free"},
    ]
    graph = obelisk.check(plan, tools).graph
    assert graph is not None
    assert graph.edges == [(0, 2), (1, 2), (2, 3)]  # the two first reads are not ordered
    assert graph.order_edges == {
        (0, 2): "slack.users",
        (1, 2): "slack.users",
        (2, 3): "slack.users",
    }


def test_a_data_dependency_orders_them_the_other_way() -> None:
    tools = world_tools({"users": [], "sent": []})
    plan = [
        {"_tool": "send_direct_message", "to": "†state.who", "text": "hi"},
        {"_tool": "invite_user", "name": "Dora", "_outputPath": "†state.who"},
    ]
    graph = obelisk.check(plan, tools).graph
    assert graph is not None
    assert graph.edges == [(1, 0)] and graph.order_edges == {}  # data decides, no cycle


def test_after_orders_calls_and_its_cycles_are_reported() -> None:
    tools = world_tools({"users": [], "sent": []})
    plan = [
        {"_tool": "note", "text": "a", "_id": "a", "_after": ["b"]},
        {"_tool": "note", "text": "b", "_id": "b", "_after": [0]},
    ]
    result = obelisk.check(plan, tools)
    assert [(d.code, d.message) for d in result.errors] == [
        ("dependency_cycle", "dependency cycle: #0 note (a) -> #1 note (b) -> #0 note (a)")
    ]
    ordered = [
        {"_tool": "note", "text": "a", "_after": [1]},
        {"_tool": "note", "text": "b", "_id": 7},
        {"_tool": "note", "text": "c", "_after": [7]},
    ]
    graph = obelisk.check(ordered, tools).graph
    assert graph is not None
    assert graph.order_edges == {(1, 0): "after", (1, 2): "after"}


def test_a_failed_call_does_not_skip_what_only_waits_for_it() -> None:
    world: dict[str, Any] = {"users": [], "sent": []}
    plan = [
        {"_tool": "send_direct_message", "to": "Nobody", "text": "hi"},
        {"_tool": "count_users", "_outputPath": "†state.n"},
    ]
    result = obelisk.run_sync(plan, world_tools(world))
    assert [r.status for r in result.calls] == ["failed", "succeeded"]
    assert result.state == {"n": 0}


def test_bad_effects_are_definition_errors() -> None:
    for effects, message in [
        ("slack", "effects must be an object"),
        ({"slack..x": "write"}, "must be a dotted name"),
        ({"slack": "delete"}, "must be 'read' or 'write'"),
    ]:
        with pytest.raises(ToolDefinitionError, match=message):

            @obelisk.tool(effects=effects)
            def broken() -> None:
                """Never declared."""

    spec = {"name": "lookup", "parameters": {"type": "object"}, "effects": {"crm": "read"}}
    assert obelisk.Tool.from_schema(spec).effects == {"crm": "read"}


def test_graph_draws_order_edges_dashed_and_labelled(tmp_path: Any) -> None:
    (tmp_path / "tools.py").write_text(
        "from obelisk import tool\n\n"
        "@tool(effects={'slack.users': 'write'})\n"
        "def invite_user(name: str) -> str:\n    'Invite.'\n    return name\n\n"
        "@tool(effects={'slack': 'write'})\n"
        "def send_direct_message(to: str) -> str:\n    'DM.'\n    return to\n"
    )
    plan = [{"_tool": "invite_user", "name": "D"}, {"_tool": "send_direct_message", "to": "D"}]
    (tmp_path / "p.json").write_text(json.dumps(plan))
    args = [str(tmp_path / "p.json"), "--tools", str(tmp_path / "tools.py")]
    mermaid = CliRunner().invoke(app, ["graph", *args])
    assert mermaid.exit_code == 0
    assert mermaid.stdout.splitlines()[-1] == '  c0 -. "effect: slack.users / slack" .-> c1'
    dot = CliRunner().invoke(app, ["graph", *args, "-f", "dot"])
    assert '  c0 -> c1 [label="effect: slack.users / slack", style=dashed];' in dot.stdout
