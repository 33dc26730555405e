"""Run the tasks with a model in one setting, and measure each answer.

:func:`run_task` runs one :class:`~benchmarks.real_model.tasks.Task` through
``obelisk.Loop`` and gives a :class:`RunRecord`: the checker's verdict and, per
answer, whether it parsed, whether it fitted (no correction), the diagnostic codes
of its error records, tokens and seconds.  :func:`summarize` folds records into the
report's row; :func:`recording` writes a run's answers as a ``ScriptedModel``
transcript (one header line, then what ``LoopResult.to_jsonl`` writes).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import obelisk

from .tasks import EFFECTS, Outcome, Task

NOT_CORRECTIONS = {"skipped", "cancelled", "pending_latent"}
"""Lower-case error record types that report a call, not a fault of the answer."""


@dataclass(frozen=True)
class Setting:
    """How the model is asked: ``protocol`` (json or tools), ``mode`` (eager or
    lazy) and whether the instructions carry the primer."""

    protocol: str = "json"
    mode: str = "eager"
    primer: bool = True

    def label(self) -> str:
        return f"{self.protocol}/{self.mode}/{'primer' if self.primer else 'no primer'}"


@dataclass
class RunRecord:
    """One task's run: ``status``, ``correct`` and the checker's ``problems``;
    ``answers`` (turns), ``parsed`` (answers that were a solution), ``fitted``
    (answers that needed no correction), ``codes`` (error record types of the
    corrections, by count), ``tokens`` (prompt, completion, cached), ``seconds``
    of model time, ``error`` (why the loop stopped, if it did) and
    ``model_failures`` (turns the model gave no answer: an HTTP error, a timeout)."""

    task: str
    status: str
    correct: bool
    problems: list[str]
    answers: int = 0
    parsed: int = 0
    fitted: int = 0
    first_parsed: bool = False
    codes: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    seconds: float = 0.0
    error: str = ""
    model_failures: int = 0


def is_correction(error_type: str) -> bool:
    """Whether an error record's ``type`` says the answer was unusable: a
    diagnostic code or ``invalid_solution``/``invalid_output``/``rejected``
    (tool failures carry an exception's class name instead)."""
    return error_type not in NOT_CORRECTIONS and error_type == error_type.lower()


def _measure(record: RunRecord, result: obelisk.LoopResult) -> None:
    cached: list[int] = []
    for turn in result.turns:
        if turn.solution is None and turn.raw is None:  # the model gave no answer
            record.model_failures += 1
            continue
        record.answers += 1
        record.parsed += turn.solution is not None
        codes = [
            e.error.get("type", "")
            for e in turn.errors
            if is_correction(str(e.error.get("type", "")))
        ]
        record.fitted += turn.solution is not None and not codes
        for code in codes:
            record.codes[code] = record.codes.get(code, 0) + 1
        usage = turn.usage or {}
        record.prompt_tokens += int(usage.get("prompt_tokens", 0))
        record.completion_tokens += int(usage.get("completion_tokens", 0))
        if "cached_tokens" in usage:
            cached.append(int(usage["cached_tokens"]))
        record.seconds += float(turn.timings.get("model", 0.0))
    record.first_parsed = bool(result.turns) and result.turns[0].solution is not None
    record.cached_tokens = sum(cached) if cached else None


def make_loop(model: Any, task: Task, setting: Setting, max_turns: int) -> obelisk.Loop:
    """The loop a task runs in: its tools, goal (as instructions) and output schema."""
    return obelisk.Loop(
        model,
        task.tools,
        mode=setting.mode,
        output_schema=task.output_schema,
        instructions=task.goal,
        max_turns=max_turns,
        max_corrections=max_turns,
        primer=setting.primer,
    )


def run_task(
    model: Any, task: Task, setting: Setting, *, max_turns: int = 4
) -> tuple[RunRecord, obelisk.LoopResult | None]:
    """Run ``task`` once; the record and the loop's result (``None`` when the loop
    gave none)."""
    EFFECTS.clear()
    loop = make_loop(model, task, setting, max_turns)
    error = ""
    result: obelisk.LoopResult | None
    try:
        result = loop.run_sync(task.input)
    except obelisk.LoopError as stop:
        result = getattr(stop, "result", None)
        error = f"{stop.code}: {str(stop)[:160]}"
    status = result.status if result is not None else "stopped"
    outcome = Outcome(
        status, result.output if result else None, result.state if result else {}, list(EFFECTS)
    )
    problems = task.check(outcome)
    record = RunRecord(task.name, status, not problems, problems, error=error)
    if result is not None:
        _measure(record, result)
    return record, result


def summarize(records: list[RunRecord]) -> dict[str, Any]:
    """The report's row for one setting: counts over ``records``."""
    answers = sum(r.answers for r in records)
    codes: Counter[str] = Counter()
    for r in records:
        codes.update(r.codes)
    seconds = sum(r.seconds for r in records)
    prompt = sum(r.prompt_tokens for r in records)
    cached = [r.cached_tokens for r in records if r.cached_tokens is not None]
    return {
        "tasks": len(records),
        "correct": sum(r.correct for r in records),
        "answers": answers,
        "parsed": sum(r.parsed for r in records),
        "first_parsed": sum(r.first_parsed for r in records),
        "fitted": sum(r.fitted for r in records),
        "corrections": answers - sum(r.fitted for r in records),
        "codes": dict(sorted(codes.items())),
        "model_failures": sum(r.model_failures for r in records),
        "prompt_tokens": prompt,
        "completion_tokens": sum(r.completion_tokens for r in records),
        "cached_share": round(sum(cached) / prompt, 3) if cached and prompt else None,
        "seconds_per_turn": round(seconds / answers, 1) if answers else None,
    }


def recording(header: dict[str, Any], result: obelisk.LoopResult) -> str:
    """A ``ScriptedModel.from_jsonl`` transcript of ``result``: a ``{"header": ...}``
    line (model, settings, task, verdict), then one line per answer, as
    ``LoopResult.to_jsonl`` writes it but without the request: ``turn``,
    ``solution``, ``raw`` and the ``errors`` sent back (each sub-request's answers
    follow their turn)."""
    lines = [{"header": header}]
    for turn in result.turns:
        data = turn.to_dict()
        errors = [{"call": e.call, "type": e.error.get("type")} for e in turn.errors]
        lines.append(
            {"turn": turn.index, "solution": data["solution"], "raw": data["raw"], "errors": errors}
        )
        for entry in turn.delegated:
            lines.extend(
                {"subrequest": entry["call"], **answer} for answer in entry.get("answers", ())
            )
    return "".join(json.dumps(line, ensure_ascii=False, default=str) + "\n" for line in lines)


def as_dict(record: RunRecord) -> dict[str, Any]:
    return asdict(record)


def now() -> float:
    return time.monotonic()
