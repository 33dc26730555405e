"""What a real model wrote, replayed (issue 29, point 7; docs/performance.md, "A real
model").

``tests/data/real_model/<protocol>-<mode>[-noprimer]/<task>.jsonl`` are answers of
Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, llama.cpp's server, temperature 0), recorded by
``python -m benchmarks.real_model --record``: a header line (model, settings, task,
verdict), then each turn's solution or raw text and the error records the loop sent
back.  Each replays through ``ScriptedModel`` into the benchmark's task, and the
loop must do again what it did with the model: the same corrections with the same
codes, turn by turn, and the same outcome, judged by the task's checker.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.real_model import runner
from benchmarks.real_model.tasks import all_tasks

import obelisk

DATA = Path(__file__).resolve().parents[2] / "data" / "real_model"
RECORDINGS = sorted(DATA.glob("*/*.jsonl"))
TASKS = {task.name: task for task in all_tasks()}


def read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return lines[0]["header"], [line for line in lines[1:] if "turn" in line]


def replay(path: Path) -> tuple[runner.RunRecord, obelisk.LoopResult | None]:
    header, _ = read(path)
    setting = runner.Setting(header["protocol"], header["mode"], header["primer"])
    model = obelisk.ScriptedModel.from_jsonl(path)
    return runner.run_task(model, TASKS[header["task"]], setting, max_turns=header["max_turns"])


def test_there_are_recordings_and_they_are_small() -> None:
    assert RECORDINGS
    assert sum(path.stat().st_size for path in RECORDINGS) < 300_000
    for path in RECORDINGS:
        header, turns = read(path)
        assert header["model"] == "qwen2.5-coder-1.5b"
        assert {"protocol", "mode", "primer", "task", "correct", "status"} <= set(header)
        assert turns


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_recording_replays_to_what_the_model_got(path: Path) -> None:
    header, turns = read(path)
    record, result = replay(path)
    assert (record.status, record.correct) == (header["status"], header["correct"])
    assert result is not None
    again = [[(e.call, e.error.get("type")) for e in turn.errors] for turn in result.turns]
    recorded = [[(e["call"], e["type"]) for e in turn["errors"]] for turn in turns]
    answered = [turn for turn in turns if turn["solution"] is not None or turn["raw"] is not None]
    assert again[: len(answered)] == recorded[: len(answered)]


# What happened with the model, per recording: the status, whether the checker passed,
# and the error record types of each turn (corrections by code, and tool errors).
# Regenerated from the recordings' own "errors" when new ones are recorded.
WHAT_HAPPENED = {
    "json-eager/average_temperature": ("completed", False, [["invalid_output"], []]),
    "json-eager/basket_total": (
        "budget_exceeded",
        False,
        [["unresolved_reference"], ["unresolved_reference"], []],
    ),
    "json-eager/customer_email": ("completed", True, [["invalid_output"], [], []]),
    "json-eager/hotel": ("completed", False, [["invalid_output"], [], []]),
    "json-eager/order_customer_name": ("completed", False, [["invalid_output"], [], []]),
    "json-eager/order_status": ("budget_exceeded", False, [[], [], []]),
    "json-eager/order_total_eur": ("completed", True, [["invalid_output"], [], []]),
    "json-eager/payment": ("budget_exceeded", False, [["unresolved_reference"], [], []]),
    "json-eager/price_of_three": ("completed", True, [[]]),
    "json-eager/refund": ("budget_exceeded", False, [["invalid_output"], [], []]),
    "json-eager/total_of_orders": ("completed", True, [[], []]),
    "json-eager/warmest_city": ("completed", True, [[]]),
    "json-eager/weather": ("completed", False, [[]]),
    "json-eager-narrowed/average_temperature": ("completed", False, [[], []]),
    "json-eager-narrowed/basket_total": ("completed", False, [["ArgumentValidationError"], []]),
    "json-eager-narrowed/customer_email": ("completed", True, [[], []]),
    "json-eager-narrowed/hotel": ("completed", False, [[], []]),
    "json-eager-narrowed/order_customer_name": ("completed", False, [[], []]),
    "json-eager-narrowed/order_status": ("completed", False, [[], []]),
    "json-eager-narrowed/price_of_three": ("completed", True, [[], []]),
    "json-eager-narrowed/order_total_eur": ("completed", False, [[], []]),
    "json-eager-narrowed/total_of_orders": ("completed", False, [[], []]),
    "json-eager-narrowed/warmest_city": ("completed", True, [[], []]),
    "json-eager-narrowed/weather": ("completed", False, [[], []]),
    "json-eager-narrowed-2/average_temperature": ("completed", False, [[], []]),
    "json-eager-narrowed-2/basket_total": (
        "completed",
        False,
        [["ArgumentValidationError"], []],
    ),
    "json-eager-narrowed-2/customer_email": ("completed", True, [[], []]),
    "json-eager-narrowed-2/hotel": ("completed", False, [[], []]),
    "json-eager-narrowed-2/order_customer_name": ("completed", False, [[], []]),
    "json-eager-narrowed-2/order_status": ("completed", False, [[], []]),
    "json-eager-narrowed-2/order_total_eur": ("completed", False, [[], []]),
    "json-eager-narrowed-2/price_of_three": ("completed", True, [[], []]),
    "json-eager-narrowed-2/total_of_orders": ("completed", False, [[], []]),
    "json-eager-narrowed-2/warmest_city": ("completed", True, [[], []]),
    "json-eager-narrowed-2/weather": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/count_words": (
        "budget_exceeded",
        False,
        [["unresolved_reference"], [], []],
    ),
    "json-eager-narrowed-2-more/customer_discount": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/email_customer": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/order_report": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/payment": (
        "budget_exceeded",
        False,
        [["PaymentDeclined", "skipped"], ["unresolved_reference"], []],
    ),
    "json-eager-narrowed-2-more/price_in_gbp": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/refund": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/refund_gold_only": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/refund_order": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/refund_unknown_order": ("completed", True, [["NotFound"], [], []]),
    "json-eager-narrowed-2-more/reserve_milk": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/reserve_or_ticket": ("completed", True, [[], []]),
    "json-eager-narrowed-2-more/rome_brief": ("completed", True, [[], []]),
    "json-eager-narrowed-2-more/shipping_cost_eur": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/stock_enough": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/ticket_for_order": ("completed", False, [[], []]),
    "json-eager-narrowed-2-more/user_exists": (
        "completed",
        False,
        [["NotFound"], ["NotFound"], []],
    ),
    "json-eager-noprimer/customer_email": ("budget_exceeded", False, [[], [], []]),
    "json-eager-noprimer/hotel": (
        "budget_exceeded",
        False,
        [["type_mismatch"], ["unresolved_reference"], ["unresolved_reference"]],
    ),
    "json-eager-noprimer/payment": ("budget_exceeded", False, [["PaymentDeclined"], [], []]),
    "json-eager-noprimer/refund": ("completed", False, [[]]),
    "json-eager-noprimer/weather": ("completed", False, [[], []]),
    "json-lazy/hotel": ("completed", False, [["invalid_output"], [], []]),
    "json-lazy/payment": ("budget_exceeded", False, [["unresolved_reference"], [], []]),
    "json-lazy/refund": ("budget_exceeded", False, [["unresolved_reference"], [], []]),
    "json-lazy/weather": ("completed", False, [[]]),
    "tools-eager/hotel": ("stopped", False, [[]]),
    "tools-eager/payment": ("stopped", False, [["unresolved_reference"], []]),
    "tools-eager/refund": ("stopped", False, [[]]),
    "tools-lazy/price_of_three": ("completed", True, [[]]),
}


def test_the_recordings_are_the_ones_described() -> None:
    assert {f"{p.parent.name}/{p.stem}" for p in RECORDINGS} == set(WHAT_HAPPENED)


@pytest.mark.parametrize("name", sorted(WHAT_HAPPENED))
def test_what_the_loop_made_of_the_models_answers(name: str) -> None:
    status, correct, codes = WHAT_HAPPENED[name]
    record, result = replay(DATA / f"{name}.jsonl")
    assert result is not None
    assert (record.status, record.correct) == (status, correct)
    turns = [sorted({e.error.get("type") for e in turn.errors}) for turn in result.turns]
    assert turns[: len(codes)] == codes


def test_every_constrained_answer_parsed_and_every_call_says_where_its_result_goes() -> None:
    constrained = [p for p in RECORDINGS if p.parent.name.startswith("json-")]
    assert constrained
    for path in constrained:
        _, turns = read(path)
        for turn in turns:
            assert turn["raw"] is None and turn["solution"] is not None, path
            assert all("_outputPath" in call for call in turn["solution"]["calls"]), path
