"""Logic tools: branch routes by Outcome; boolean helpers."""

from __future__ import annotations

import obelisk
from obelisk.errors import ArgumentValidationError
from obelisk.interpreter.tools.options import Outcome
from obelisk.stdlib_tools import default_registry

R = default_registry()


def test_branch_returns_outcome_zero_when_true_and_one_when_false() -> None:
    assert R["branch"](True, {"x": 1}) == Outcome(0, {"x": 1})
    assert R["branch"](False, "v") == Outcome(1, "v")
    assert R["branch"](condition=False) == Outcome(1, None)
    assert R["branch"].outcomes == ()
    assert R["branch"].output_schema is None


def test_branch_condition_must_be_a_boolean() -> None:
    assert R["branch"].validate_arguments({"condition": True}) == {"condition": True}
    try:
        R["branch"].validate_arguments({"condition": "perhaps"})
    except ArgumentValidationError as exc:
        assert [p.loc for p in exc.problems] == [("condition",)]
    else:  # pragma: no cover
        raise AssertionError("expected ArgumentValidationError")


def test_branch_in_a_plan_writes_exactly_one_alternative() -> None:
    plan = [
        {
            "_tool": "branch",
            "condition": "†input.ok",
            "value": "†input.payload",
            "_outputPath": "†state.yes || †state.no",
        }
    ]
    yes = obelisk.run_sync(plan, R, {"ok": True, "payload": 7})
    no = obelisk.run_sync(plan, R, {"ok": False, "payload": 7})
    assert (yes.state, no.state) == ({"yes": 7}, {"no": 7})


def test_if_else_not_all_any() -> None:
    assert R["if_else"](True, "a", "b") == "a"
    assert R["if_else"](False, "a", "b") == "b"
    assert R["not"](True) is False
    assert R["not"](False) is True
    assert R["all_true"]([True, True]) is True
    assert R["all_true"]([True, False]) is False
    assert R["all_true"]([]) is True
    assert R["any_true"]([False, True]) is True
    assert R["any_true"]([]) is False
