"""The real-model benchmark's runner, reporting and checkers, without a model
(issue 29, point 6; docs/performance.md, "A real model").

Each task's correct answers replay through ``ScriptedModel`` and pass its checker;
every checker rejects a wrong final state (another output, a missing, extra or
wrong world write, a run that did not complete); the record of a run counts what a
real model's answers would show: parsed, fitted, corrections by code, turns.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from benchmarks.real_model import runner
from benchmarks.real_model.__main__ import _arguments
from benchmarks.real_model.tasks import Outcome, Task, all_tasks

import obelisk

TASKS = all_tasks()
SETTINGS = [runner.Setting("json", "eager"), runner.Setting("json", "lazy", primer=False)]


def test_the_tasks_are_the_examples_and_twenty_more_of_two_to_six_tools() -> None:
    names = [task.name for task in TASKS]
    assert len(names) == len(set(names))
    assert {"payment", "refund", "hotel"} <= {t.name for t in TASKS if t.kind == "example"}
    own = [task for task in TASKS if task.kind != "example"]
    assert len(own) >= 20
    assert {"lookup", "branch", "fan-out", "delegate", "write"} <= {task.kind for task in own}
    assert all(2 <= len(task.tools) <= 6 for task in TASKS)


def correct_run(task: Task, setting: runner.Setting) -> tuple[runner.RunRecord, obelisk.LoopResult]:
    record, result = runner.run_task(obelisk.ScriptedModel(task.answers), task, setting)
    assert result is not None
    return record, result


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.name)
def test_each_task_is_done_by_its_answers_and_its_checker_says_so(task: Task) -> None:
    record, result = correct_run(task, SETTINGS[0])
    assert record.correct, record.problems
    assert (record.status, record.problems, record.codes) == ("completed", [], {})
    assert record.answers == record.parsed == record.fitted == len(result.turns)
    assert record.first_parsed


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.name)
def test_each_checker_fails_on_a_wrong_final_state(task: Task) -> None:
    from benchmarks.real_model.tasks import EFFECTS

    _, result = correct_run(task, SETTINGS[0])
    right = Outcome("completed", result.output, result.state, list(EFFECTS))
    assert task.check(right) == []
    wrong = [
        dataclasses.replace(right, output={"wrong": result.output}),
        dataclasses.replace(right, output=None),
        dataclasses.replace(right, status="budget_exceeded"),
        dataclasses.replace(right, effects=[*right.effects, ("refund", {"order_id": "o-2"})]),
    ]
    if task.effects:
        wrong.append(dataclasses.replace(right, effects=[]))
        name, arguments = right.effects[0]
        changed = {key: f"{value}-x" for key, value in arguments.items()}
        wrong.append(dataclasses.replace(right, effects=[(name, changed)]))
    for outcome in wrong:
        assert task.check(outcome), outcome


def test_a_run_with_corrections_is_counted_answer_by_answer() -> None:
    task = next(t for t in TASKS if t.name == "customer_email")
    model = obelisk.ScriptedModel(
        [
            "Sure! Here is the plan: {",
            {
                "calls": [
                    {"_tool": "get_custmer", "customer_id": "c-1", "_outputPath": "†state.c"}
                ],
                "output": None,
            },
            *task.answers,
        ]
    )
    record, _ = runner.run_task(model, task, SETTINGS[0])
    assert record.correct
    assert (record.answers, record.parsed, record.fitted) == (3, 2, 1)
    assert record.codes == {"invalid_solution": 1, "unknown_tool": 1}
    assert not record.first_parsed
    row = runner.summarize([record, correct_run(task, SETTINGS[0])[0]])
    assert row["tasks"] == row["correct"] == 2
    assert (row["answers"], row["parsed"], row["fitted"], row["corrections"]) == (4, 3, 2, 2)
    assert row["first_parsed"] == 1
    assert row["codes"] == {"invalid_solution": 1, "unknown_tool": 1}
    assert row["cached_share"] is None


def test_a_run_the_loop_gives_up_on_is_wrong_and_says_why() -> None:
    task = next(t for t in TASKS if t.name == "refund_order")
    model = obelisk.ScriptedModel([{"calls": [], "output": None}] * 2)
    record, _ = runner.run_task(model, task, SETTINGS[1], max_turns=2)
    assert not record.correct
    assert record.status == "budget_exceeded"
    assert record.error.startswith("loop_budget")
    assert any("refund wrote []" in problem for problem in record.problems)


def test_a_turn_the_model_gave_no_answer_is_a_model_failure_not_an_answer() -> None:
    task = next(t for t in TASKS if t.name == "refund_order")
    model = obelisk.ScriptedModel([{"calls": [], "output": None}])  # then: no answer
    record, _ = runner.run_task(model, task, SETTINGS[0])
    assert (record.status, record.answers, record.model_failures) == ("stopped", 1, 1)
    assert record.error.startswith("loop_stopped")
    assert runner.summarize([record])["model_failures"] == 1


def test_tool_failures_are_not_corrections_and_cached_tokens_are_a_share() -> None:
    assert runner.is_correction("unknown_tool") and runner.is_correction("invalid_output")
    assert not runner.is_correction("NotFound") and not runner.is_correction("skipped")
    records = [
        runner.RunRecord(
            "a", "completed", True, [], answers=1, prompt_tokens=1000, cached_tokens=600
        ),
        runner.RunRecord(
            "b", "completed", True, [], answers=1, prompt_tokens=1000, cached_tokens=200
        ),
    ]
    assert runner.summarize(records)["cached_share"] == 0.4


def test_a_recording_replays_through_scripted_model(tmp_path: Path) -> None:
    task = next(t for t in TASKS if t.name == "rome_brief")  # a delegate: sub-request answers
    model = obelisk.ScriptedModel(["not json", *task.answers])
    record, result = runner.run_task(model, task, SETTINGS[0])
    assert result is not None and record.correct
    path = tmp_path / "rome.jsonl"
    path.write_text(
        runner.recording({"model": "scripted", "task": task.name}, result), encoding="utf-8"
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith('{"header": {"model": "scripted"')
    replayed, again = runner.run_task(obelisk.ScriptedModel.from_jsonl(path), task, SETTINGS[0])
    assert replayed.correct and again is not None
    assert (replayed.answers, replayed.codes) == (record.answers, record.codes)


def test_the_command_line_takes_the_settings() -> None:
    options = _arguments(
        [
            "--base-url",
            "http://127.0.0.1:1/v1",
            "--model",
            "m",
            "--protocol",
            "json",
            "--protocol",
            "tools",
            "--mode",
            "lazy",
            "--no-primer",
            "--tasks",
            "3",
        ]
    )
    assert (options.protocol, options.mode, options.primer, options.tasks) == (
        ["json", "tools"],
        ["lazy"],
        False,
        3,
    )
    assert options.structured == "json_object_schema"


def test_cached_tokens_are_read_from_the_servers_log() -> None:
    from benchmarks.real_model.__main__ import cached_tokens

    log = (
        "Llama.generate: 243 prefix-match hit, remaining 1155 prompt tokens to eval\n"
        "llama_perf_context_print: prompt eval time = 1 ms\n"
        "Llama.generate: 1398 prefix-match hit, remaining 120 prompt tokens to eval\n"
    )
    assert cached_tokens(log) == 1641
    assert cached_tokens("") == 0


def test_the_report_is_a_markdown_table_row_per_setting() -> None:
    from benchmarks.real_model.report import table

    task = next(t for t in TASKS if t.name == "count_words")
    row = runner.summarize([correct_run(task, SETTINGS[0])[0]])
    text = table([{"settings": [{"setting": "json/eager/primer", **row}]}])
    lines = text.splitlines()
    assert len(lines) == 3
    assert lines[2].startswith("| json/eager/primer | 1 | 1 | 1 | 1 | 1 of 1 | 1 | none | 0 |")
