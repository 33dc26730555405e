"""Properties of a plan that lives across turns (issue 27, point 7; docs/loop.md,
"How a plan evolves").

* Random sequences of revisions, in which the model re-emits, edits, drops and adds
  calls: every call of the non-idempotent tool ``act`` runs at most once per distinct
  call identity, and the paths the last revision's calls write hold what a fresh run
  of that revision gives, with the same tool results.  ``act(k, v)`` writes
  ``†state.a{k}``; the pure ``derive(k, x)`` reads some ``†state.a{j}`` of the same
  revision and writes ``†state.d{k}`` (a derived value is refreshed when what it
  reads changes).  A revision writes each path once.
* With ``advance="step"``, a model that always re-emits the whole plan reaches the
  same final state as with ``advance="all"``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import obelisk
from obelisk import Loop, ScriptedModel

RUNS: Counter[tuple[int, int]] = Counter()


@obelisk.tool
def act(k: int, v: int) -> int:
    """A side effect: must not run twice for the same call."""
    RUNS[(k, v)] += 1
    return 100 * v + k


@obelisk.tool(pure=True)
def derive(k: int, x: int) -> int:
    """A pure function of what it reads."""
    return 7 * x + k


TOOLS = [act, derive]

Calls = list[dict[str, Any]]


def _act(k: int, v: int) -> dict[str, Any]:
    return {"_tool": "act", "k": k, "v": v, "_outputPath": f"†state.a{k}"}


def _derive(k: int, j: int) -> dict[str, Any]:
    return {"_tool": "derive", "k": k, "x": f"†state.a{j}", "_outputPath": f"†state.d{k}"}


def _fix(acts: dict[int, int], derives: dict[int, int]) -> Calls:
    """A revision: its acts, then the derives whose source act is in it."""
    calls = [_act(k, v) for k, v in sorted(acts.items())]
    return calls + [_derive(k, j) for k, j in sorted(derives.items()) if j in acts]


@st.composite
def revisions(draw: st.DrawFn) -> list[Calls]:
    """A first plan, then revisions made by re-emitting, editing, dropping, adding."""
    keys = st.integers(0, 4)
    acts = draw(st.dictionaries(keys, st.integers(0, 2), min_size=1, max_size=4))
    derives = draw(st.dictionaries(keys, keys, max_size=3))
    made = [_fix(acts, derives)]
    for _ in range(draw(st.integers(1, 4))):
        acts, derives = dict(acts), dict(derives)
        for operation in draw(
            st.lists(st.sampled_from(["same", "edit", "drop", "add"]), max_size=3)
        ):
            key = draw(keys)
            if operation == "edit" and key in acts:
                acts[key] = draw(st.integers(0, 2))
            elif operation == "drop":
                acts.pop(key, None) if draw(st.booleans()) else derives.pop(key, None)
            elif operation == "add":
                if draw(st.booleans()):
                    acts[key] = draw(st.integers(0, 2))
                else:
                    derives[key] = draw(keys)
        made.append(_fix(acts, derives))
    return made


def _answers(plans: list[Calls]) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = [{"calls": plan, "output": None} for plan in plans]
    answers[-1] = {"calls": plans[-1], "output": "†state"}
    return answers


@given(revisions(), st.sampled_from(["eager", "lazy"]))
def test_a_call_runs_once_per_identity_and_the_last_revision_decides(
    plans: list[Calls], mode: str
) -> None:
    RUNS.clear()
    loop = Loop(ScriptedModel(_answers(plans)), TOOLS, mode=mode, max_turns=len(plans))  # type: ignore[arg-type]
    result = loop.run_sync()
    assert result.status == "completed"
    assert all(count == 1 for count in RUNS.values()), RUNS
    fresh = obelisk.run_sync(plans[-1], TOOLS)
    assert fresh.status == "completed"
    for path in {call["_outputPath"].removeprefix("†state.") for call in plans[-1]}:
        assert result.state[path] == fresh.state[path], (path, plans)


def _chain(draw: st.DrawFn) -> Calls:
    acts = draw(st.dictionaries(st.integers(0, 4), st.integers(0, 2), min_size=1, max_size=4))
    derives = draw(st.dictionaries(st.integers(0, 4), st.integers(0, 4), max_size=4))
    calls = _fix(acts, derives)
    # a derive of a derive: one more level for step mode to walk
    for k, j in sorted(derives.items()):
        if j in acts:
            calls.append(
                {"_tool": "derive", "k": k, "x": f"†state.d{k}", "_outputPath": f"†state.e{k}"}
            )
    return calls


@given(st.composite(_chain)(), st.sampled_from(["eager", "lazy"]))
def test_step_and_all_reach_the_same_state_when_the_model_keeps_its_plan(
    plan: Calls, mode: str
) -> None:
    states = []
    for advance in ("all", "step"):
        RUNS.clear()
        model = ScriptedModel(respond=lambda request: {"calls": plan, "output": "†state"})
        loop = Loop(model, TOOLS, mode=mode, advance=advance, max_turns=8)  # type: ignore[arg-type]
        result = loop.run_sync()
        assert result.status == "completed"
        assert all(count == 1 for count in RUNS.values()), RUNS
        states.append(result.state)
    assert states[0] == states[1]
