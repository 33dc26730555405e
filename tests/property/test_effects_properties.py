"""With world effects declared, the final world and the records do not depend on timing.

Random plans over tools that append to named lists of a shared world (``effects``
write), read them (``effects`` read) or touch nothing, run twice under random delays;
the world and every call record must be identical.  Without the effect edges, writers
of one list would race (docs/semantics.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import obelisk

RESOURCES = ["crm", "crm.contacts", "crm.deals", "mail"]


def make_tools(world: dict[str, list[Any]], delays: list[float]) -> list[obelisk.Tool]:
    tools = []
    for resource in RESOURCES:
        for access in ("read", "write"):

            async def act(i: int, resource: str = resource, access: str = access) -> Any:
                await asyncio.sleep(delays[i])
                if access == "write":
                    world.setdefault(resource, []).append(i)
                    return i
                # a read sees the resource and everything under or above it
                return sorted(
                    (key, tuple(items))
                    for key, items in world.items()
                    if key.startswith(resource) or resource.startswith(key)
                )

            name = f"{access}_{resource.replace('.', '_')}"
            tools.append(
                obelisk.Tool.from_function(
                    act, name=name, description=f"{access} {resource}", effects={resource: access}
                )
            )
    return tools


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[float], list[float]]:
    n = draw(st.integers(1, 8))
    names = [
        f"{access}_{resource.replace('.', '_')}"
        for resource in RESOURCES
        for access in ("read", "write")
    ]
    plan = [{"_tool": draw(st.sampled_from(names)), "i": i} for i in range(n)]
    delays = st.lists(st.sampled_from([0.0, 0.001, 0.003]), min_size=n, max_size=n)
    return plan, draw(delays), draw(delays)


def run(plan: list[dict[str, Any]], delays: list[float]) -> tuple[Any, Any]:
    world: dict[str, list[Any]] = {}
    result = obelisk.run_sync(plan, make_tools(world, delays))
    records = [(r.status, r.output) for r in result.calls]
    return world, records


@given(scenarios())
def test_world_and_records_do_not_depend_on_timing(
    scenario: tuple[list[dict[str, Any]], list[float], list[float]],
) -> None:
    plan, first, second = scenario
    assert run(plan, first) == run(plan, second)
