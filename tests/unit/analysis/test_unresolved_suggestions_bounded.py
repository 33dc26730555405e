"""A "did you mean" is looked for only for the unresolved references that are
reported (docs/limits.md, "Too many diagnostics"): 8,000 of them used to cost 8,000
searches over every written path (33 s)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

import obelisk


@obelisk.tool
def take(value: Any = None) -> int:
    return 1


def _plan(unresolved: int) -> list[dict[str, Any]]:
    writers = [{"_tool": "take", "_outputPath": f"†state.result{i}"} for i in range(unresolved)]
    readers = [{"_tool": "take", "value": f"†state.resutl{i}x"} for i in range(unresolved)]
    return writers + readers


def test_suggestions_are_looked_for_only_for_the_reported_diagnostics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searches = 0
    close_matches = difflib.get_close_matches

    def counted(*args: Any, **kwargs: Any) -> list[str]:
        nonlocal searches
        searches += 1
        return close_matches(*args, **kwargs)

    monkeypatch.setattr(difflib, "get_close_matches", counted)
    result = obelisk.check(_plan(2000), [take])
    unresolved = [d for d in result.diagnostics if d.code == "unresolved_reference"]
    assert len(unresolved) == 101  # 100 shown, and one that counts the rest
    summary = [d for d in unresolved if d.call is None]
    assert [d.message[:40] for d in summary] == ["... and 1900 more unresolved_reference d"]
    shown = [d for d in unresolved if d.call is not None]
    assert shown[0].message == (
        "nothing in the plan writes †state.resutl0x, and the state does not hold it; "
        "did you mean †state.result0?"
    )
    assert searches <= 2 * 100  # a whole-path search, then one per segment at most


def test_every_shown_diagnostic_keeps_its_suggestion_when_the_limit_is_raised() -> None:
    limits = obelisk.Limits(max_diagnostics_per_code=10_000)
    result = obelisk.check(_plan(300), [take], limits=limits)
    unresolved = [d for d in result.diagnostics if d.code == "unresolved_reference"]
    assert len(unresolved) == 300
    assert all(d.message.endswith(f"did you mean †state.result{d.call - 300}?") for d in unresolved)


def test_a_reference_written_under_another_instance_gets_no_suggestion() -> None:
    plan = [
        {"_tool": "take", "_outputPath": "†state.x", "_instance": "a"},
        {"_tool": "take", "value": "†state.x", "_instance": "b"},
    ]
    (diagnostic,) = obelisk.check(plan, [take]).errors
    assert diagnostic.message == (
        "†state.x is written only under another _instance (#0 take), which instance 'b' cannot see"
    )
