"""Property (issue 28, point 9): the labels a check works out before the run are an
upper bound of the labels the run finds (docs/security.md, "Decided before the run").

Random plans (``obelisk.testing.plans``: fallbacks, ``&&`` gates, error arms,
declared outcomes, ``_instance``, latent calls with ``_output``) over tools whose
``output_trust`` is drawn, with drawn ``input_labels`` (untrusted, or readable by
alice only).  For every argument of every call the run labelled, every source the
run names is among the static label's sources, an untrusted argument at run time is
untrusted statically, and the static readers are among the run's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import obelisk
from obelisk import Outcome
from obelisk.interpreter.analysis.trust import StaticLabels, input_label_pairs
from obelisk.interpreter.tools.labels import TRUSTED, Label
from obelisk.testing import plans

INPUT = {
    "type": "object",
    "required": ["x", "y"],
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
}
TRUSTS = st.sampled_from(["trusted", "untrusted"])
LABELS = st.dictionaries(
    st.sampled_from(["†input.x", "†input.y"]),
    st.sampled_from(["trusted", "untrusted", {"readers": ["alice"]}]),
)


def _inc(a: int) -> int:
    "One more."
    return a + 1


def _add(a: int, b: int = 0) -> int:
    "The sum."
    return a + b


def _fragile(a: int) -> int:
    "Fails on multiples of three."
    if a % 3 == 0:
        raise ValueError("a multiple of three")
    return a


def _sign(a: int) -> Outcome:
    "Positive or negative."
    return Outcome("pos" if a >= 0 else "neg", a)


def _tools(trusts: list[Any]) -> list[obelisk.Tool]:
    made = [
        obelisk.Tool.from_function(_inc, name="inc", output_trust=trusts[0]),
        obelisk.Tool.from_function(_add, name="add", output_trust=trusts[1]),
        obelisk.Tool.from_function(_fragile, name="fragile", output_trust=trusts[2]),
        obelisk.Tool.from_function(
            _sign,
            name="sign",
            outcomes=["pos", "neg"],
            output_schema={"type": "integer"},
            output_trust=trusts[3],
        ),
    ]
    guess = {
        "name": "guess",
        "description": "A model's guess.",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
        "output": {"type": "integer"},
        "output_trust": trusts[4],
    }
    return [*made, obelisk.Tool.from_schema(guess)]


def _check_bound(run: Label, bound: Label, where: str) -> None:
    assert not run.untrusted or bound.untrusted, f"{where}: untrusted at run time only"
    missing = {s.name for s in run.sources} - {s.name for s in bound.sources}
    assert not missing, f"{where}: sources {missing} found only at run time"
    # fewer readers is higher in the lattice: the static readers are among the run's
    if bound.readers is None:
        assert run.readers is None, f"{where}: restricted at run time only"
    else:
        assert run.readers is None or bound.readers <= run.readers, where


@given(st.data())
def test_static_labels_are_an_upper_bound_of_the_runtime_ones(data: st.DataObject) -> None:
    tools = _tools(data.draw(st.lists(TRUSTS, min_size=5, max_size=5), label="trusts"))
    generated = data.draw(plans(tools, INPUT, max_calls=8, instances=True), label="plan")
    given_labels = data.draw(LABELS, label="input_labels")
    plan, document = generated.plan, generated.input
    result = obelisk.run_sync(plan, tools, input=document, input_labels=given_labels)
    checked = obelisk.check(plan, tools, input=document, input_labels=given_labels)
    assert checked.plan is not None and checked.graph is not None
    registry = obelisk.Registry.coerce(tools)
    static = StaticLabels(
        checked.plan,
        checked.graph,
        [registry.get(call.tool) for call in checked.plan.calls],
        "off",
        input_label_pairs(given_labels),
    )
    for record in result.calls:
        for name, shown in (record.labels or {}).items():
            if name == "_result":  # the label the call's result carries
                bound = static.results[record.index]
            else:
                bound = static.arguments[record.index].get(name, TRUSTED)
            _check_bound(Label.from_dict(shown), bound, f"{record.label}, {name}")
