"""Quarantine, as a property (docs/loop.md, "Quarantine"): whatever values the
attacker puts in the untrusted sources (Hypothesis draws them, long ones and keys
included, each marked), and whatever the planner does with them over several turns
(copies, fields, fallbacks into error arms, tools that raise with the value, latent
calls, misspelled references, outputs that do not fit), no planning request holds a
mark, in eager and lazy mode."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import obelisk

MARK = "ATTACKER"


def _attacker_value() -> st.SearchStrategy[Any]:
    long = st.text(min_size=60, max_size=90)  # cut short with "..." in messages
    text = (st.text(max_size=10) | long).map(lambda s: f"{MARK}{s}")
    keys = st.sampled_from(["a", "b", f"{MARK}key"])
    return st.recursive(
        text,
        lambda inner: st.dictionaries(keys, inner, max_size=3) | st.lists(inner, max_size=3),
        max_leaves=5,
    )


def _tools(values: list[Any]) -> list[obelisk.Tool]:
    @obelisk.tool(output_trust="untrusted")
    def source(n: int) -> Any:
        """Attacker-controlled content."""
        return values[n % len(values)]

    @obelisk.tool
    def labeled(n: int) -> obelisk.Labeled:
        """A result with one untrusted field."""
        return obelisk.Labeled(
            {"safe": n, "raw": values[n % len(values)]}, fields={"raw": "untrusted"}
        )

    @obelisk.tool
    def copy(x: Any) -> Any:
        """The value as it is."""
        return x

    @obelisk.tool
    def boom(x: Any) -> Any:
        """Raise, quoting the value as it is and changed (only withholding hides that)."""
        raise ValueError(f"cannot take {x!r}: {json.dumps(x).replace(MARK, MARK + '~')}")

    summarize = obelisk.Tool.from_schema(
        {
            "name": "summarize",
            "description": "Summarize.",
            "parameters": {"type": "object", "properties": {"text": {}}, "required": ["text"]},
            "output": {"type": "string"},
        }
    )
    return [source, labeled, copy, boom, summarize]


_FIELDS = st.sampled_from(["", "", "", "", ".raw", ".raw", ".safe", ".a", "[0]", ".zz"])
_TYPO = f".{MARK[:-1]}key"  # "did you mean" would quote the attacker's key


@st.composite
def _answers(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Answers whose calls read what calls before them wrote (a field of it, now and
    then one that is not there, or a misspelled one), each writing a new place."""
    written: list[str] = []
    answers = []
    for _turn in range(draw(st.integers(1, 4))):
        calls = []
        for _ in range(draw(st.integers(0, 4))):
            place = f"†state.v{len(written)}"
            calls.append(draw(_call(written, place)))
            written.append(place)
        output = None
        if written and draw(st.booleans()):
            output = draw(st.sampled_from(written)) + draw(_FIELDS)
        answers.append({"calls": calls, "output": output})
    return answers


def _call(written: list[str], place: str) -> st.SearchStrategy[dict[str, Any]]:
    n = st.integers(0, 5)
    sources = st.one_of(
        n.map(lambda k: {"_tool": "source", "n": k, "_outputPath": place}),
        n.map(lambda k: {"_tool": "labeled", "n": k, "_outputPath": place}),
    )
    if not written:
        return sources
    field = st.one_of(_FIELDS, st.just(_TYPO)) if len(written) % 3 == 2 else _FIELDS
    read = st.tuples(st.sampled_from(written), field).map("".join)
    return st.one_of(
        sources,
        read.map(lambda r: {"_tool": "copy", "x": r, "_outputPath": place}),
        read.map(lambda r: {"_tool": "boom", "x": r, "_outputPath": f"{place}.ok || {place}"}),
        read.map(lambda r: {"_tool": "boom", "x": r}),
        read.map(lambda r: {"_tool": "summarize", "text": r, "_outputPath": place}),
    )


def _respond(answers: list[dict[str, Any]]) -> Any:
    def respond(request: obelisk.Request) -> dict[str, Any]:
        if request.config["mode"] == "latent":
            shown = json.dumps(request.to_data()["context"][2]["input"])
            return {"calls": [], "output": f"summary of {shown}"}
        turn = request.config["turn"]
        return answers[turn - 1] if turn <= len(answers) else {"calls": [], "output": 1}

    return respond


@given(
    values=st.lists(_attacker_value(), min_size=1, max_size=3),
    answers=_answers(),
    mode=st.sampled_from(["eager", "lazy"]),
)
def test_no_planning_request_holds_attacker_text(
    values: list[Any], answers: list[dict[str, Any]], mode: str
) -> None:
    model = obelisk.ScriptedModel(respond=_respond(answers))
    loop = obelisk.Loop(
        model,
        _tools(values),
        mode=mode,  # type: ignore[arg-type]
        quarantine=True,
        output_schema={"type": "integer"},
        max_turns=len(answers) + 1,
        max_corrections=len(answers) + 1,
    )
    with contextlib.suppress(obelisk.LoopError):  # a budget may run out: what was
        loop.run_sync()  # asked so far still counts
    for request in model.requests:
        if request.config["mode"] == "latent":
            continue
        assert MARK not in request.to_json(), request.to_json()
