"""What the 1.5B model wrote once each turn's schema was narrowed to the request
(tests/data/real_model/json-eager-narrowed; docs/performance.md, "A real model"):
every answer parsed and needed no correction (no ``invalid_output``: each finishing
output read a path the state had), and every answer either called (``output``
null) or finished (no calls), never ``{"calls": [], "output": null}``.

In tests/data/real_model/json-eager-narrowed-2 the schema also allowed an answer
with calls and an output (reading what the calls write): there too every answer
parsed, needed no correction and made progress."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.real_model.runner import is_correction

DATA = Path(__file__).resolve().parents[2] / "data" / "real_model" / "json-eager-narrowed"
RECORDINGS = sorted(DATA.glob("*.jsonl"))
SECOND = sorted(DATA.with_name("json-eager-narrowed-2").glob("*.jsonl"))


def turns(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [line for line in lines[1:] if "turn" in line]


def test_there_are_narrowed_recordings() -> None:
    assert len(RECORDINGS) >= 6


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_every_narrowed_answer_parsed_fitted_and_made_progress(path: Path) -> None:
    for turn in turns(path):
        solution = turn["solution"]
        assert turn["raw"] is None and solution is not None
        assert not [e for e in turn["errors"] if is_correction(str(e["type"]))], turn
        assert bool(solution["calls"]) != (solution["output"] is not None), turn


def test_there_are_second_narrowed_recordings() -> None:
    assert len(SECOND) >= 1


@pytest.mark.parametrize("path", SECOND, ids=lambda p: p.stem)
def test_every_answer_of_the_second_run_parsed_fitted_and_made_progress(path: Path) -> None:
    for turn in turns(path):
        solution = turn["solution"]
        assert turn["raw"] is None and solution is not None
        assert not [e for e in turn["errors"] if is_correction(str(e["type"]))], turn
        assert solution["calls"] or solution["output"] is not None, turn
