"""``RunResult.provenance(path)``: the calls and inputs a value came from, with their
labels (docs/security.md, "Provenance")."""

from __future__ import annotations

from typing import Any

import pytest

import obelisk
from obelisk.interpreter.tools.provenance import Origin, describe_chain


@obelisk.tool(output_trust="untrusted")
def fetch(url: str) -> dict[str, Any]:
    "A web page."
    return {"iban": "X", "note": "hi"}


@obelisk.tool
def pick(a: Any, b: Any = None) -> Any:
    "Picks a."
    return a


PLAN = [
    {"_tool": "fetch", "url": "†input.url", "_outputPath": "†state.page"},
    {"_tool": "pick", "a": "†state.page.iban", "b": "†input.who", "_outputPath": "†state.p"},
    {"_tool": "pick", "a": "†state.p", "_outputPath": "†state.q"},
]


def test_provenance_names_every_call_and_input_with_labels() -> None:
    result = obelisk.run_sync(
        PLAN,
        [fetch, pick],
        input={"url": "u", "who": "me"},
        input_labels={"†input.who": "untrusted"},
    )
    origins = result.provenance("†state.q")
    assert [(o.name, o.depth) for o in origins] == [
        ("#2 pick", 0),
        ("#1 pick", 1),
        ("#0 fetch", 2),
        ("†input.who", 2),
        ("†input.url", 3),
    ]
    assert all(isinstance(o, Origin) for o in origins)
    assert origins[2].label.untrusted and origins[3].label.untrusted
    assert not origins[4].label.untrusted
    assert origins[0].to_dict()["label"]["trust"] == "untrusted"
    text = describe_chain("†state.q", origins)
    assert (
        text.splitlines()[1]
        == "  #2 pick via †state.q (untrusted: a web page, labelled by the caller)"
    )


def test_provenance_of_a_plain_run_is_all_trusted() -> None:
    result = obelisk.run_sync(PLAN[1:], [pick], state={"page": {"iban": "Y"}}, input={"who": 1})
    origins = result.provenance("†state.q")
    assert [o.name for o in origins] == ["#1 pick", "#0 pick", "†state.page.iban", "†input.who"]
    assert not any(o.label.untrusted for o in origins)
    with pytest.raises(obelisk.ReferenceSyntaxError):
        result.provenance("state.q")


def test_a_result_keeps_the_label_map_of_a_run_with_labels() -> None:
    given = {"url": "u", "who": "me"}
    result = obelisk.run_sync(PLAN, [fetch, pick], input=given)
    assert result.labels is not None
    assert result.labels.read(("state", "page", "iban")).untrusted
    assert not result.labels.read(("input", "who")).untrusted
    assert (
        obelisk.run_sync(PLAN[1:], [pick], state={"page": {"iban": 1}}, input=given).labels is None
    )
