"""Run converted NESTFUL plans and score their answers with the upstream rule.

Comparison (:func:`nestful_equal`), in the README's words: if both values are
floats, round the prediction to as many decimals as the gold's printed form has,
then test equality; a tuple counts as equal to a list with the same items;
otherwise exact (Python ``==``) equality.

Runners turn a :class:`~benchmarks.nestful.convert.NestfulCase` into an
:class:`Answer`.  :func:`obelisk_runner` runs the plan with ``obelisk.run_sync``
(looked up when called; ``None`` when the engine does not provide it);
:func:`standin_runner` is a tiny sequential interpreter that only knows
``†state.<label>.<field>`` references, for checking the tools on their own.
"""

from __future__ import annotations

import decimal
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from obelisk import Registry

from .convert import DAGGER, NestfulCase
from .math_tools import registry as math_registry

__all__ = [
    "Answer",
    "RecordScore",
    "Runner",
    "Score",
    "nestful_equal",
    "obelisk_runner",
    "printed_decimals",
    "score_cases",
    "standin_runner",
]


# -- the comparison rule --------------------------------------------------------------


def printed_decimals(gold: float) -> int:
    """How many decimals the printed form of ``gold`` has: ``400.0`` -> 1,
    ``0.35`` -> 2, ``1e-05`` -> 5 (exponents count), ``1.5e+20`` -> 0."""
    exponent = decimal.Decimal(repr(gold)).as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def nestful_equal(predicted: Any, gold: Any) -> bool:
    """The NESTFUL comparison of a plan's answer with the gold answer."""
    if isinstance(predicted, float) and isinstance(gold, float):
        if not (math.isfinite(predicted) and math.isfinite(gold)):
            return predicted == gold
        return round(predicted, printed_decimals(gold)) == gold
    if (
        isinstance(predicted, (tuple, list))
        and isinstance(gold, (tuple, list))
        and type(predicted) is not type(gold)
    ):
        return list(predicted) == list(gold)
    return bool(predicted == gold)


# -- runners -------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What running one plan gave: the last call's ``result`` (``None`` when it
    has none), the run status and the error text, if any."""

    value: Any
    status: str
    error: str | None = None


Runner = Callable[[NestfulCase], Answer]


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def obelisk_runner(tools: Registry | None = None) -> Runner | None:
    """A runner on ``obelisk.run_sync`` with ``tools`` (default: the math tools),
    or ``None`` when obelisk has no ``run_sync``.

    The answer is the output of the last call of the plan,
    ``result.calls[-1].output["result"]``.
    """
    import obelisk

    run_sync = getattr(obelisk, "run_sync", None)
    if run_sync is None:
        return None
    registry = tools if tools is not None else math_registry()

    def run(case: NestfulCase) -> Answer:
        try:
            result = run_sync(case.plan, registry)
        except Exception as exc:  # a plan error, or an engine bug: reported, not raised
            return Answer(None, "error", _describe(exc))
        last = len(case.plan) - 1
        records = {call.index: call for call in result.calls}
        call = records.get(last)
        if call is None:
            return Answer(None, result.status, f"no record of call #{last}")
        if call.status != "succeeded":
            error = call.error or {}
            text = (
                f"{error.get('type')}: {error.get('message')}"
                if error
                else call.reason or call.status
            )
            return Answer(None, result.status, f"#{last} {call.tool} {call.status}: {text}")
        output = call.output
        if not isinstance(output, Mapping) or "result" not in output:
            return Answer(None, result.status, f"#{last} {call.tool} output {output!r}")
        return Answer(output["result"], result.status, None)

    return run


def _read(state: Mapping[str, Any], expression: str) -> Any:
    prefix = DAGGER + "state."
    if not expression.startswith(prefix):
        raise ValueError(f"the stand-in runner only reads {prefix}…, not {expression!r}")
    value: Any = state
    for segment in expression.removeprefix(prefix).split("."):
        value = value[segment]
    return value


def standin_runner(tools: Registry | None = None) -> Runner:
    """A sequential stand-in for the engine: resolves ``†state.var_N.result``
    from a dict, validates the arguments with the tool's schema (as the engine
    does), calls the tool and stores its result under the ``_outputPath`` label."""
    registry = tools if tools is not None else math_registry()

    def run(case: NestfulCase) -> Answer:
        state: dict[str, Any] = {}
        output: Any = None
        for index, call in enumerate(case.plan):
            try:
                tool = registry[call["_tool"]]
                arguments: dict[str, Any] = {}
                for key, value in call.items():
                    if key.startswith("_"):
                        continue
                    if isinstance(value, str) and value.startswith(DAGGER + DAGGER):
                        arguments[key] = value[1:]
                    elif isinstance(value, str) and value.startswith(DAGGER):
                        arguments[key] = _read(state, value)
                    else:
                        arguments[key] = value
                output = tool(**tool.validate_arguments(arguments))
                problems = tool.validate_output(output)
                if problems:
                    raise ValueError(f"output does not fit its schema: {problems[0].message}")
            except Exception as exc:
                return Answer(None, "failed", f"#{index} {call['_tool']}: {_describe(exc)}")
            target = call.get("_outputPath")
            if isinstance(target, str):
                state[target.removeprefix(DAGGER + "state.")] = output
        value = output.get("result") if isinstance(output, Mapping) else None
        return Answer(value, "completed")

    return run


# -- scoring -------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordScore:
    """One record's outcome; ``seconds`` is the wall time of running its plan."""

    sample_id: str
    expected: Any
    got: Any
    passed: bool
    status: str
    error: str | None
    seconds: float
    calls: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "expected": self.expected,
            "got": self.got,
            "passed": self.passed,
            "status": self.status,
            "error": self.error,
            "seconds": self.seconds,
            "calls": self.calls,
        }


@dataclass
class Score:
    """The scores of a run over many records."""

    runner: str
    records: list[RecordScore] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.records)

    @property
    def passed(self) -> int:
        return sum(record.passed for record in self.records)

    @property
    def score(self) -> float:
        """The fraction of records passed (0.0 for no records)."""
        return self.passed / self.total if self.records else 0.0

    @property
    def seconds(self) -> float:
        """Total wall time of running the plans."""
        return sum(record.seconds for record in self.records)

    @property
    def mean_seconds(self) -> float:
        return self.seconds / self.total if self.records else 0.0

    @property
    def calls(self) -> int:
        """Calls in all the plans."""
        return sum(record.calls for record in self.records)

    @property
    def mismatches(self) -> list[RecordScore]:
        return [record for record in self.records if not record.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runner": self.runner,
            "records": self.total,
            "passed": self.passed,
            "score": self.score,
            "seconds": self.seconds,
            "mean_seconds": self.mean_seconds,
            "calls": self.calls,
            "mismatches": [record.to_dict() for record in self.mismatches],
            "results": [record.to_dict() for record in self.records],
        }


def score_cases(cases: Iterable[NestfulCase], runner: Runner, name: str = "") -> Score:
    """Run every case with ``runner`` and compare each answer with the gold one."""
    score = Score(name)
    for case in cases:
        started = time.perf_counter()
        answer = runner(case)
        seconds = time.perf_counter() - started
        passed = answer.error is None and nestful_equal(answer.value, case.gold)
        score.records.append(
            RecordScore(
                case.sample_id,
                case.gold,
                answer.value,
                passed,
                answer.status,
                answer.error,
                seconds,
                len(case.plan),
            )
        )
    return score
