"""The worst-case attacker (docs/security.md, "Threat model"): every untrusted source
returns values an attacker chose (Hypothesis draws them, each carrying a marker), the
plan passes data through trusted tools, fallbacks, gates and fields in any way, and
no protected argument of a world-writing call ever runs with attacker-derived data
unless a person approved that very call with those very arguments."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

import obelisk
from obelisk import Decision, Labeled

MARK = "ATTACKER"


def _attacker_value() -> st.SearchStrategy[Any]:
    text = st.text(max_size=5).map(lambda s: f"{MARK}{s}")
    return st.recursive(text, lambda inner: st.dictionaries(st.sampled_from("abc"), inner))


def _tainted(value: Any) -> bool:
    return MARK in json.dumps(value, ensure_ascii=False)


class World:
    """The tools of one example: untrusted sources answer with the attacker's values;
    sinks log what they were really called with."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.sent: list[dict[str, Any]] = []
        self.next = 0

    def answer(self) -> Any:
        value = self.answers[self.next % len(self.answers)]
        self.next += 1
        return value

    def tools(self) -> list[obelisk.Tool]:
        world = self

        @obelisk.tool(output_trust="untrusted")
        def read_file(path: Any = None) -> Any:
            "File content."
            return world.answer()

        @obelisk.tool
        def open_mail(n: Any = None) -> Labeled:
            "A mail whose body the attacker wrote."
            return Labeled({"sender": "boss", "body": world.answer()}, fields={"body": "untrusted"})

        @obelisk.tool
        def combine(a: Any = None, b: Any = None) -> Any:
            "A trusted tool that mixes its inputs."
            return {"a": a, "b": b}

        @obelisk.tool(effects={"bank": "write"}, trusted_args=["iban"])
        def send_money(iban: Any = None, amount: Any = None) -> Any:
            "Pay."
            world.sent.append({"tool": "send_money", "iban": iban})
            return "sent"

        @obelisk.tool(effects={"mail": "write"})
        def post(to: Any = None, body: Any = None) -> Any:
            "Post (protected by the strict mode: every argument)."
            world.sent.append({"tool": "post", "to": to, "body": body})
            return "posted"

        return [read_file, open_mail, combine, send_money, post]


TOOLS = {
    "read_file": ("path",),
    "open_mail": ("n",),
    "combine": ("a", "b"),
    "send_money": ("iban", "amount"),
    "post": ("to", "body"),
}


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for index in range(draw(st.integers(2, 8))):
        tool = draw(st.sampled_from(sorted(TOOLS)))
        call: dict[str, Any] = {"_tool": tool, "_outputPath": f"†state.v{index}"}
        for name in TOOLS[tool]:
            call[name] = draw(_argument(index))
        calls.append(call)
    return calls


def _argument(index: int) -> st.SearchStrategy[Any]:
    earlier = [f"†state.v{i}" for i in range(index)]
    places = [*earlier, *(f"{e}.body" for e in earlier), *(f"{e}.a" for e in earlier)]
    trusted = st.sampled_from(["†input.iban", "†input.to"])
    literal = st.one_of(st.sampled_from(["GB00", 5]), trusted)
    if not places:
        return literal
    reference = st.sampled_from(places)
    fallback = st.tuples(reference, trusted).map(lambda pair: f"{pair[0]} || {pair[1]}")
    gate = st.tuples(reference, trusted).map(lambda pair: f"{pair[0]} && {pair[1]}")
    return st.one_of(literal, reference, fallback, gate, st.lists(reference, max_size=2))


@given(plans(), st.lists(_attacker_value(), min_size=1, max_size=4))
def test_attacker_data_reaches_no_protected_argument_unless_approved(
    plan: list[dict[str, Any]], answers: list[Any]
) -> None:
    world = World(answers)
    tools = world.tools()
    given_input = {"iban": "MINE", "to": "me"}
    assume(obelisk.check(plan, tools, input=given_input).ok)
    approved: list[dict[str, Any]] = []
    result = obelisk.run_sync(plan, tools, input=given_input, policy="strict")
    while result.status == "awaiting_approval":  # a person approves whatever is asked
        approved.extend({"tool": p.tool, **p.arguments} for p in result.pending)
        result = obelisk.resume_sync(result, {p.id: Decision.accept() for p in result.pending})
    for sent in world.sent:
        protected = {k: v for k, v in sent.items() if k != "tool"}
        if sent["tool"] == "send_money":
            protected = {"iban": sent["iban"]}
        if _tainted(protected):
            assert any(
                a["tool"] == sent["tool"] and all(a.get(k) == v for k, v in protected.items())
                for a in approved
            ), f"{sent} ran with attacker data and nobody approved it"
