"""The engine, through ``obelisk.run_sync`` / ``obelisk.run`` (docs/language.md, docs/semantics.md).

Expected states, statuses, reasons and messages are derived from the spec:
skip reasons ``<path> was not written: <label> <what happened>`` (§2.3), the
error arm ``{"error": {"type", "message", "tool", "call"}}`` (§1.3), plan-order
commits of overlapping writes (§1.4).  Concurrency is shown with barriers,
events and in-flight counters, never with absolute speed, except one generous
wall-clock bound for sync tools in threads.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

import obelisk
from obelisk import Outcome, PlanError, RetryPolicy, Tool, UsageError

# -- shared tools ----------------------------------------------------------------------


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


@obelisk.tool
def add(a: int, b: int) -> int:
    """a + b."""
    return a + b


@obelisk.tool
def echo(value: Any) -> Any:
    """Returns its argument."""
    return value


@obelisk.tool
def fail(value: Any = None) -> Any:
    """Always raises."""
    raise ValueError("boom")


@obelisk.tool
def charge(amount: int) -> dict[str, int]:
    """A payment that is always declined."""
    raise ValueError("card declined")


@obelisk.tool
def ship(receipt: dict[str, int]) -> str:
    """Ships an order."""
    return "shipped"


@obelisk.tool
def pick(k: Any) -> Outcome:
    """Picks alternative k."""
    return Outcome(k, "v")


@obelisk.tool(outcomes=["ok", "declined"])
def decide(k: str) -> Outcome:
    """Picks a named outcome."""
    return Outcome(k, "v")


@obelisk.tool(outcomes=["ok", "declined"])
def decide_or_raise() -> Outcome:
    """Declares outcomes and raises."""
    raise ValueError("no decision")


@obelisk.tool
def wrong_type() -> int:
    """Returns a string although it promises an integer."""
    return "x"  # type: ignore[return-value]


@obelisk.tool
def wrong_nested() -> dict[str, int]:
    """Returns a string inside an object of integers."""
    return {"a": "x"}  # type: ignore[dict-item]


ASK = Tool.from_schema(
    {
        "name": "ask",
        "description": "Asks the model.",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
        },
        "output": {"type": "string"},
    }
)

TOOLS = [double, add, echo, fail, charge, ship, pick, decide, decide_or_raise, ASK]
TOOLS += [wrong_type, wrong_nested]


def call(tool: str, target: str | None = None, **arguments: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"_tool": tool, **arguments}
    if target is not None:
        data["_outputPath"] = target
    return data


def statuses(result: obelisk.RunResult) -> list[str]:
    return [record.status for record in result.calls]


def run(plan: Any, tools: Any = None, **options: Any) -> obelisk.RunResult:
    return obelisk.run_sync(plan, TOOLS if tools is None else tools, **options)


def run_within(seconds: float, plan: Any, tools: Any, **options: Any) -> obelisk.RunResult:
    """``await obelisk.run(...)``, failing with TimeoutError instead of hanging."""

    async def main() -> obelisk.RunResult:
        return await asyncio.wait_for(obelisk.run(plan, tools, **options), seconds)

    return asyncio.run(main())


class InFlight:
    """Counts calls in flight (thread-safe), the maximum seen, and start/end order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.max = 0
        self.starts: list[Any] = []
        self.ends: list[Any] = []

    def enter(self, key: Any) -> None:
        with self.lock:
            self.now += 1
            self.max = max(self.max, self.now)
            self.starts.append(key)

    def leave(self, key: Any) -> None:
        with self.lock:
            self.now -= 1
            self.ends.append(key)


# -- data flow -------------------------------------------------------------------------
class TestDataFlow:
    def test_chain(self) -> None:
        plan = [
            call("double", "†state.a", n="†input.n"),
            call("double", "†state.b", n="†state.a"),
            call("add", "†state.c", a="†state.a", b="†state.b"),
        ]
        result = run(plan, input={"n": 3})
        assert result.status == "completed"
        assert result.state == {"a": 6, "b": 12, "c": 18}
        assert statuses(result) == ["succeeded"] * 3
        assert [r.arguments for r in result.calls] == [{"n": 3}, {"n": 6}, {"a": 6, "b": 12}]
        assert [r.output for r in result.calls] == [6, 12, 18]
        assert [r.attempts for r in result.calls] == [1, 1, 1]
        assert [(e.seq, e.call, e.path, e.value) for e in result.log] == [
            (0, 0, "†state.a", 6),
            (1, 1, "†state.b", 12),
            (2, 2, "†state.c", 18),
        ]

    def test_diamond_written_bottom_first(self) -> None:
        # List order never creates an edge (docs/semantics.md): the consumer may come first.
        plan = [
            call("add", "†state.bottom", a="†state.left", b="†state.right"),
            call("double", "†state.left", n="†state.top"),
            call("add", "†state.right", a="†state.top", b=1),
            call("double", "†state.top", n="†input.n"),
        ]
        result = run(plan, input={"n": 5})
        assert result.status == "completed"
        assert result.state == {"top": 10, "left": 20, "right": 11, "bottom": 31}
        assert result.calls[0].arguments == {"a": 20, "b": 11}
        assert result.log[0].call == 3
        assert result.log[-1].call == 0

    def test_starting_state_and_data_documents(self) -> None:
        plan = [
            call("add", "†data.sum", a="†state.x", b="†data.y"),
            call("echo", "†state.copy", value="†data.sum"),
        ]
        result = run(plan, state={"x": 1}, data={"data": {"y": 2}})
        assert result.state == {"x": 1, "copy": 3}
        assert result.documents == {"state": {"x": 1, "copy": 3}, "data": {"y": 2, "sum": 3}}

    def test_nested_expressions_in_arguments(self) -> None:
        plan = [
            call("echo", "†state.a", value=1),
            call("echo", "†state.b", value={"list": ["†state.a", "lit", {"k": "†input.k"}]}),
        ]
        result = run(plan, input={"k": "K"})
        assert result.state == {"a": 1, "b": {"list": [1, "lit", {"k": "K"}]}}

    def test_escaped_dagger_is_a_literal(self) -> None:
        result = run([call("echo", "†state.v", value=["††x", {"k": "††state.a"}])])
        assert result.state == {"v": ["†x", {"k": "†state.a"}]}

    def test_a_tool_mutating_its_arguments_changes_neither_the_plan_nor_the_record(
        self,
    ) -> None:
        @obelisk.tool
        def grab(items: Any) -> int:
            """Appends to the list it was given, then counts it."""
            items.append("x")
            return len(items)

        plan = obelisk.parse_plan([call("grab", "†state.n", items=[1])])
        first = run(plan, [grab])
        second = run(plan, [grab])
        assert plan.calls[0].arguments == {"items": [1]}
        assert first.state == second.state == {"n": 2}
        assert first.calls[0].arguments == {"items": [1]}

    def test_call_without_output_path_writes_nothing(self) -> None:
        result = run([call("double", n=2)])
        assert result.status == "completed"
        assert result.state == {}
        assert result.log == ()
        assert result.calls[0].output == 4

    def test_fallback_picks_the_first_that_exists(self) -> None:
        plan = [
            call("fail", "†state.a"),
            call("echo", "†state.b", value="B"),
            call("echo", "†state.c", value="C"),
            call("echo", "†state.first", value="†state.a || †state.b || †state.c"),
            call("echo", "†state.second", value="†state.c || †state.b"),
        ]
        result = run(plan)
        assert result.state == {"b": "B", "c": "C", "first": "B", "second": "C"}
        assert statuses(result) == ["failed", "succeeded", "succeeded", "succeeded", "succeeded"]

    @pytest.mark.parametrize(
        ("given", "expected"),
        [
            ({"a": 0, "b": 1}, 0),
            ({"a": False, "b": 1}, False),
            ({"a": "", "b": 1}, ""),
            ({"a": None, "b": 1}, None),
            ({"b": 1}, 1),
            ({"b": None}, None),
        ],
    )
    def test_fallback_is_existence_not_truthiness(self, given: dict, expected: Any) -> None:
        result = run([call("echo", "†state.v", value="†input.a || †input.b")], input=given)
        assert result.status == "completed"
        assert result.state == {"v": expected}

    @pytest.mark.parametrize(
        ("given", "expected"),
        [({"a": 1, "b": 2}, 2), ({"a": None, "b": False}, False), ({"a": 0, "b": [0]}, [0])],
    )
    def test_gate_passes_the_last(self, given: dict, expected: Any) -> None:
        result = run([call("echo", "†state.v", value="†input.a && †input.b")], input=given)
        assert result.state == {"v": expected}

    def test_gate_requires_all(self) -> None:
        plan = [
            call("fail", "†state.a"),
            call("echo", "†state.b", value="B"),
            call("echo", "†state.v", value="†state.a && †state.b"),
            call("echo", "†state.w", value="†state.b && †state.a"),
        ]
        result = run(plan)
        assert statuses(result) == ["failed", "succeeded", "skipped", "skipped"]
        assert result.calls[2].reason == "†state.a was not written: #0 fail failed"
        assert result.calls[3].reason == "†state.a was not written: #0 fail failed"
        assert result.state == {"b": "B"}

    def test_fan_out_writes_every_target(self) -> None:
        result = run([call("echo", "†state.a && †state.b.c", value=[1])])
        assert result.state == {"a": [1], "b": {"c": [1]}}
        assert [(e.call, e.path, e.value) for e in result.log] == [
            (0, "†state.a", [1]),
            (0, "†state.b.c", [1]),
        ]

    def test_wildcard_read(self) -> None:
        plan = [
            call("echo", "†state.users", value=[{"n": "a"}, {"x": 1}, {"n": "b"}]),
            call("echo", "†state.names", value="†state.users[*].n"),
        ]
        assert run(plan).state["names"] == ["a", "b"]

    def test_output_methods_in_a_plan(self) -> None:
        plan = [
            call("echo", "†state.obj", value={"k": {"x": 1}}, _outputMethod="merge"),
            call("echo", "†state.list", value=[1, 2], _outputMethod="concat"),
        ]
        result = run(plan, state={"obj": {"k": {"y": 2}, "z": 3}, "list": [0]})
        assert result.state == {"obj": {"k": {"y": 2, "x": 1}, "z": 3}, "list": [0, 1, 2]}
        # The two paths do not interact, so their commit order is free (docs/semantics.md).
        assert {e.path: e.method for e in result.log} == {
            "†state.obj": "merge",
            "†state.list": "concat",
        }


# -- skips -----------------------------------------------------------------------------
class TestSkips:
    def test_producer_wrote_the_error_arm(self) -> None:
        plan = [
            call("charge", "†state.receipt || †state.error", amount=5),
            call("ship", "†state.shipped", receipt="†state.receipt"),
        ]
        result = run(plan)
        assert statuses(result) == ["succeeded", "skipped"]
        assert (
            result.calls[1].reason == "†state.receipt was not written: #0 charge wrote †state.error"
        )
        assert result.calls[1].arguments is None
        assert result.calls[1].output is None
        assert result.calls[1].error is None
        assert "shipped" not in result.state

    def test_failed_producer(self) -> None:
        plan = [call("fail", "†state.a"), call("echo", "†state.b", value="†state.a")]
        result = run(plan)
        assert statuses(result) == ["failed", "skipped"]
        assert result.calls[1].reason == "†state.a was not written: #0 fail failed"
        assert result.status == "failed"

    def test_failed_producer_with_an_id(self) -> None:
        plan = [
            call("fail", "†state.a", _id="f1"),
            call("echo", "†state.b", value="†state.a"),
        ]
        result = run(plan)
        assert result.calls[1].reason == "†state.a was not written: #0 fail (f1) failed"

    def test_skipped_producer(self) -> None:
        plan = [
            call("fail", "†state.a"),
            call("echo", "†state.b", value="†state.a"),
            call("echo", "†state.c", value="†state.b"),
        ]
        result = run(plan)
        assert statuses(result) == ["failed", "skipped", "skipped"]
        assert result.calls[2].reason == "†state.b was not written: #1 echo was skipped"

    def test_missing_input(self) -> None:
        # Without an input document the check cannot know; the run finds out.
        result = run([call("echo", "†state.y", value="†input.x")])
        assert statuses(result) == ["skipped"]
        assert result.calls[0].reason == "†input.x is not in the input"
        assert result.status == "partial"  # a read the call needs did not exist
        assert result.calls[0].untaken is False
        assert result.state == {}

    def test_an_untaken_alternative_is_normal_but_a_missing_read_is_partial(self) -> None:
        plan = [
            call("echo", "†state.ok || †state.err", value="fine"),
            call("echo", "†state.report", value="†state.err"),  # the branch not taken
            call("echo", "†state.more", value="†state.report"),  # skipped through it
        ]
        result = run(plan)
        assert statuses(result) == ["succeeded", "skipped", "skipped"]
        assert [r.untaken for r in result.calls] == [False, True, True]
        assert result.status == "completed"
        missing = run([*plan, call("echo", "†state.z", value="†input.absent")])
        assert missing.calls[3].untaken is False
        assert missing.status == "partial"

    def test_every_missing_fallback_option_is_named(self) -> None:
        plan = [
            call("fail", "†state.a"),
            call("fail", "†state.b"),
            call("echo", "†state.c", value="†state.a || †state.b"),
        ]
        result = run(plan)
        assert result.calls[2].reason == (
            "†state.a was not written: #0 fail failed; †state.b was not written: #1 fail failed"
        )

    def test_producer_wrote_nothing(self) -> None:
        plan = [
            call("pick", "†state.a || †state.b", k=1),
            call("echo", "†state.c", value="†state.a"),
        ]
        result = run(plan)
        assert result.calls[1].reason == "†state.a was not written: #0 pick wrote †state.b"


# -- outcomes and the error arm --------------------------------------------------------
class TestOutcomes:
    @pytest.mark.parametrize(("k", "expected"), [(0, {"ok": "v"}), (1, {"declined": "v"})])
    def test_outcome_by_index(self, k: int, expected: dict) -> None:
        result = run([call("pick", "†state.ok || †state.declined", k=k)])
        assert result.status == "completed"
        assert result.state == expected
        assert result.calls[0].output == "v"
        assert result.calls[0].error is None

    @pytest.mark.parametrize(("k", "expected"), [("ok", {"ok": "v"}), ("declined", {"no": "v"})])
    def test_outcome_by_name(self, k: str, expected: dict) -> None:
        result = run([call("decide", "†state.ok || †state.no", k=k)])
        assert result.state == expected
        assert statuses(result) == ["succeeded"]

    def test_outcome_picks_among_three_with_fan_out(self) -> None:
        result = run([call("pick", "†state.a || †state.b || †state.c && †state.d", k=2)])
        assert result.state == {"c": "v", "d": "v"}

    @pytest.mark.parametrize(
        ("tool", "k", "target", "shown", "count"),
        [
            ("pick", 2, "†state.ok || †state.no", "2", "2 alternatives"),
            ("pick", -1, "†state.ok || †state.no", "-1", "2 alternatives"),
            ("pick", 1, "†state.only", "1", "1 alternative"),
            ("pick", "ok", "†state.ok || †state.no", "'ok'", "2 alternatives"),
            ("decide", "maybe", "†state.ok || †state.no", "'maybe'", "2 alternatives"),
        ],
    )
    def test_outcome_out_of_range(
        self, tool: str, k: Any, target: str, shown: str, count: str
    ) -> None:
        result = run([call(tool, target, k=k)])
        assert result.status == "failed"
        assert statuses(result) == ["failed"]
        assert result.calls[0].error == {
            "type": "OutcomeError",
            "message": f"#0 {tool} returned Outcome({shown}, ...), but its _outputPath has {count}",
        }
        assert result.state == {}
        assert result.log == ()

    def test_error_arm(self) -> None:
        plan = [
            call("echo", "†state.first", value=1),
            call("charge", "†state.receipt || †state.error", amount=5),
        ]
        result = run(plan)
        assert result.status == "completed"
        assert result.state == {
            "first": 1,
            "error": {
                "error": {
                    "type": "ValueError",
                    "message": "card declined",
                    "tool": "charge",
                    "call": 1,
                }
            },
        }
        record = result.calls[1]
        assert record.status == "succeeded"
        assert record.output is None
        assert record.error == {"type": "ValueError", "message": "card declined"}

    def test_error_arm_is_the_last_of_three(self) -> None:
        result = run([call("fail", "†state.a || †state.b || †state.c && †state.d")])
        error = {"error": {"type": "ValueError", "message": "boom", "tool": "fail", "call": 0}}
        assert result.state == {"c": error, "d": error}
        assert statuses(result) == ["succeeded"]

    def test_raise_with_one_alternative_fails(self) -> None:
        result = run([call("charge", "†state.receipt", amount=5)])
        assert result.status == "failed"
        record = result.calls[0]
        assert record.status == "failed"
        assert record.error == {"type": "ValueError", "message": "card declined"}
        assert record.output is None
        assert record.attempts == 1
        assert result.state == {}

    def test_raise_with_declared_outcomes_fails(self) -> None:
        result = run([call("decide_or_raise", "†state.ok || †state.declined")])
        assert statuses(result) == ["failed"]
        assert result.calls[0].error == {"type": "ValueError", "message": "no decision"}
        assert result.state == {}


# -- validation, timeouts, retries -----------------------------------------------------
class TestFailures:
    def test_output_does_not_fit_the_return_annotation(self) -> None:
        result = run([call("wrong_type", "†state.n")])
        # the tool ran and returned: invalid_output, not failed (issue 24, point 6)
        assert statuses(result) == ["invalid_output"]
        assert result.calls[0].error == {
            "type": "OutputValidationError",
            "message": (
                'the output of wrong_type does not fit its schema: expected an integer, got "x"'
            ),
        }
        assert result.state == {}

    def test_output_problem_names_where(self) -> None:
        result = run([call("wrong_nested", "†state.n")])
        assert result.calls[0].error == {
            "type": "OutputValidationError",
            "message": (
                "the output of wrong_nested does not fit its schema at a: "
                'expected an integer, got "x"'
            ),
        }

    @pytest.mark.parametrize("from_producer", [False, True])
    def test_argument_from_state_does_not_fit(self, from_producer: bool) -> None:
        calls = [call("double", "†state.d", n="†state.n")]
        plan = [call("echo", "†state.n", value="abc"), *calls] if from_producer else calls
        result = run(plan, state=None if from_producer else {"n": "abc"})
        record = result.calls[-1]
        assert record.status == "failed"
        assert record.error == {
            "type": "ArgumentValidationError",
            "message": (
                "invalid arguments for tool 'double':\n  n: expected an integer, got \"abc\""
            ),
        }
        assert record.arguments == {"n": "abc"}
        assert record.attempts == 0
        assert "d" not in result.state
        assert result.status == "failed"

    def test_async_timeout(self) -> None:
        cancelled = []

        @obelisk.tool(timeout=0.05)
        async def hang() -> str:
            """Never returns."""
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append(True)
                raise
            return "never"

        result = run([call("hang", "†state.h")], [hang])
        assert statuses(result) == ["failed"]
        assert result.calls[0].error == {
            "type": "TimeoutError",
            "message": "timed out after 0.05 s",
        }
        assert result.calls[0].attempts == 1
        assert cancelled == [True]
        assert result.state == {}

    def test_sync_timeout(self) -> None:
        release = threading.Event()

        @obelisk.tool(timeout=0.02)
        def block() -> str:
            """Blocks until released."""
            release.wait(5)
            return "late"

        try:
            result = run([call("block", "†state.b")], [block])
        finally:
            release.set()
        assert result.calls[0].error == {
            "type": "TimeoutError",
            "message": "timed out after 0.02 s",
        }
        assert result.state == {}

    def test_timeout_goes_to_the_error_arm(self) -> None:
        @obelisk.tool(timeout=0.02)
        async def hang() -> str:
            """Never returns."""
            await asyncio.Event().wait()
            return "never"

        result = run([call("hang", "†state.ok || †state.err")], [hang])
        assert result.state == {
            "err": {
                "error": {
                    "type": "TimeoutError",
                    "message": "timed out after 0.02 s",
                    "tool": "hang",
                    "call": 0,
                }
            }
        }
        assert result.calls[0].status == "succeeded"

    def test_retry_until_success(self) -> None:
        tries: list[int] = []

        @obelisk.tool(retry=RetryPolicy(attempts=3, retry_on=(ValueError,)))
        def flaky() -> str:
            """Fails twice, then succeeds."""
            tries.append(len(tries) + 1)
            if len(tries) < 3:
                raise ValueError(f"try {len(tries)}")
            return "ok"

        result = run([call("flaky", "†state.f")], [flaky])
        assert statuses(result) == ["succeeded"]
        assert result.calls[0].attempts == 3
        assert result.calls[0].error is None
        assert result.state == {"f": "ok"}
        assert tries == [1, 2, 3]

    def test_retries_exhausted(self) -> None:
        tries: list[int] = []

        @obelisk.tool(retry=RetryPolicy(attempts=3, retry_on=(ValueError,)))
        async def always() -> str:
            """Always fails."""
            tries.append(len(tries) + 1)
            raise ValueError(f"try {len(tries)}")

        result = run([call("always", "†state.f")], [always])
        assert statuses(result) == ["failed"]
        assert result.calls[0].attempts == 3
        assert result.calls[0].error == {"type": "ValueError", "message": "try 3"}
        assert tries == [1, 2, 3]

    def test_exception_not_retried(self) -> None:
        tries: list[int] = []

        @obelisk.tool(retry=RetryPolicy(attempts=3, retry_on=(ValueError,)))
        def other() -> str:
            """Raises an exception the policy does not retry."""
            tries.append(1)
            raise KeyError("k")

        result = run([call("other", "†state.f")], [other])
        assert statuses(result) == ["failed"]
        assert result.calls[0].attempts == 1
        assert result.calls[0].error == {"type": "KeyError", "message": "'k'"}
        assert tries == [1]

    def test_timeout_is_retried_when_listed(self) -> None:
        tries: list[int] = []

        @obelisk.tool(timeout=0.02, retry=RetryPolicy(attempts=2, retry_on=(TimeoutError,)))
        async def slow_once() -> str:
            """Hangs on the first try only."""
            tries.append(1)
            if len(tries) == 1:
                await asyncio.Event().wait()
            return "second"

        result = run([call("slow_once", "†state.s")], [slow_once])
        assert result.state == {"s": "second"}
        assert result.calls[0].attempts == 2

    def test_other_calls_are_kept_when_one_fails(self) -> None:
        plan = [
            call("echo", "†state.a", value="A"),
            call("fail", "†state.b"),
            call("echo", "†state.c", value="C"),
            call("echo", "†state.d", value="†state.b"),
            call("echo", "†state.e", value="†state.a"),
        ]
        result = run(plan)
        assert result.status == "failed"
        assert statuses(result) == ["succeeded", "failed", "succeeded", "skipped", "succeeded"]
        assert result.state == {"a": "A", "c": "C", "e": "A"}
        assert sorted(e.path for e in result.log) == ["†state.a", "†state.c", "†state.e"]
        assert [r.output for r in result.calls] == ["A", None, "C", None, "A"]

    def test_a_failed_write_fails_the_call(self) -> None:
        plan = [
            call("echo", "†state.s", value=1, _outputMethod="push"),
            call("echo", "†state.s.list", value=1),
            call("echo", "†state.t", value="†state.s.list"),
        ]
        result = run(plan, state={"s": "text"})
        assert statuses(result) == ["failed", "failed", "skipped"]
        assert [r.error for r in result.calls] == [
            {
                "type": "StateWriteError",
                "message": "cannot push onto †state.s: it holds str, not a list",
            },
            {
                "type": "StateWriteError",
                "message": "cannot write †state.s.list: †state.s holds str, not an object",
            },
            None,
        ]
        # both #0 (†state.s) and #1 (†state.s.list) may write what #2 reads
        assert result.calls[2].reason == (
            "†state.s.list was not written: #0 echo failed; #1 echo failed"
        )
        assert result.status == "failed"
        assert result.state == {"s": "text"}
        assert result.log == ()

    def test_a_failed_call_writes_nothing_even_when_one_target_took_the_write(self) -> None:
        # docs/semantics.md: a failed call writes nothing.  †state.l accepts the push,
        # †state.s (a string) does not, so the call fails and †state.l stays unwritten.
        plan = [call("echo", "†state.l && †state.s", value=1, _outputMethod="push")]
        result = run(plan, state={"s": "text"})
        assert statuses(result) == ["failed"]
        assert result.state == {"s": "text"}
        assert result.log == ()

    def test_a_failed_write_reports_failure_only(self) -> None:
        events: list[Any] = []
        plan = [call("echo", "†state.s", value=1, _outputMethod="push")]
        run(plan, state={"s": "text"}, on_event=events.append)
        # a call either succeeded or failed; subscribers must not be told both
        terminal = ("call_succeeded", "call_failed", "call_skipped")
        outcomes = [e.event for e in events if e.event in terminal]
        assert outcomes == ["call_failed"]


# -- fail_fast -------------------------------------------------------------------------
class TestFailFast:
    def test_fail_fast_cancels_in_flight_and_waiting_calls(self) -> None:
        seen: list[str] = []

        @obelisk.tool
        async def quick_fail() -> Any:
            """Fails once the other call is in flight."""
            await asyncio.sleep(0.005)
            raise ValueError("boom")

        @obelisk.tool
        async def hang(value: Any = None) -> Any:
            """Never returns unless cancelled."""
            seen.append("started")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise
            return value

        tools = [quick_fail, hang, echo]
        plan = [
            call("quick_fail", "†state.a"),
            call("hang", "†state.b"),
            call("echo", "†state.c", value="†state.b"),
            call("echo", "†state.d", value="†state.a"),
        ]
        result = run_within(2, plan, tools, fail_fast=True)
        reason = "not run: fail_fast after #0 quick_fail failed"
        assert result.status == "failed"
        assert statuses(result) == ["failed", "cancelled", "cancelled", "cancelled"]
        assert [r.reason for r in result.calls] == [None, reason, reason, reason]
        assert result.calls[0].error == {"type": "ValueError", "message": "boom"}
        assert seen == ["started", "cancelled"]
        assert result.state == {}

    def test_without_fail_fast_independent_branches_finish(self) -> None:
        release = asyncio.Event()

        @obelisk.tool
        async def quick_fail() -> Any:
            """Fails, then lets the other branch finish."""
            await asyncio.sleep(0)
            release.set()
            raise ValueError("boom")

        @obelisk.tool
        async def wait_release(value: Any = None) -> Any:
            """Waits until the failure happened."""
            await asyncio.wait_for(release.wait(), 2)
            return value

        plan = [
            call("quick_fail", "†state.a"),
            call("wait_release", "†state.b", value="B"),
            call("echo", "†state.c", value="†state.b"),
            call("echo", "†state.d", value="†state.a"),
        ]
        result = run(plan, [quick_fail, wait_release, echo])
        assert result.status == "failed"
        assert statuses(result) == ["failed", "succeeded", "succeeded", "skipped"]
        assert result.state == {"b": "B", "c": "B"}

    def test_fail_fast_after_a_failed_write(self) -> None:
        @obelisk.tool(timeout=0.05)
        async def hang() -> Any:
            """Never returns unless cancelled."""
            await asyncio.Event().wait()

        plan = [
            call("echo", "†state.s", value=1, _outputMethod="push"),
            call("hang", "†state.h"),
        ]
        result = run(plan, [echo, hang], state={"s": "text"}, fail_fast=True)
        assert statuses(result) == ["failed", "cancelled"]
        assert result.calls[1].reason == "not run: fail_fast after #0 echo failed"


# -- plan errors, usage errors ---------------------------------------------------------
class TestErrors:
    def test_a_plan_with_errors_runs_nothing(self) -> None:
        counter: list[int] = []

        @obelisk.tool
        def count() -> int:
            """Counts its calls."""
            counter.append(1)
            return len(counter)

        plan = [call("count", "†state.n"), call("nope", "†state.m")]
        with pytest.raises(PlanError) as info:
            run(plan, [count])
        assert [d.code for d in info.value.errors] == ["unknown_tool"]
        assert counter == []

    def test_a_cycle_runs_nothing_async(self) -> None:
        counter: list[int] = []

        @obelisk.tool
        async def count(value: Any = None) -> int:
            """Counts its calls."""
            counter.append(1)
            return len(counter)

        plan = [
            call("count", "†state.first"),
            call("count", "†state.a", value="†state.b"),
            call("count", "†state.b", value="†state.a"),
        ]
        with pytest.raises(PlanError) as info:
            asyncio.run(obelisk.run(plan, [count]))
        assert [d.code for d in info.value.errors] == ["dependency_cycle"]
        assert counter == []

    @pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
    def test_bad_concurrency(self, bad: Any) -> None:
        counter: list[int] = []

        @obelisk.tool
        def count() -> int:
            """Counts its calls."""
            counter.append(1)
            return 1

        with pytest.raises(UsageError) as info:
            run([call("count")], [count], concurrency=bad)
        assert str(info.value) == f"concurrency must be an integer >= 1, got {bad!r}"
        assert counter == []

    def test_bad_on_event(self) -> None:
        with pytest.raises(UsageError) as info:
            run([call("echo", value=1)], on_event=[print, 3])
        assert str(info.value) == "on_event must be a callable or an iterable of callables"

    def test_run_sync_inside_a_running_loop(self) -> None:
        async def main() -> str:
            with pytest.raises(UsageError) as info:
                obelisk.run_sync([call("echo", value=1)], TOOLS)
            return str(info.value)

        assert asyncio.run(main()) == (
            "run_sync() cannot be called from a running event loop; await run()"
        )

    def test_await_run_inside_a_loop(self) -> None:
        async def main() -> obelisk.RunResult:
            return await obelisk.run([call("double", "†state.d", n=4)], TOOLS)

        assert asyncio.run(main()).state == {"d": 8}


# -- latent tools ----------------------------------------------------------------------
class TestLatent:
    def test_latent_with_output_is_written_as_if_returned(self) -> None:
        plan = [
            call("ask", "†state.answer", q="hi", _output="hello"),
            call("echo", "†state.copy", value="†state.answer"),
        ]
        result = run(plan)
        assert result.status == "completed"
        assert result.state == {"answer": "hello", "copy": "hello"}
        assert statuses(result) == ["succeeded", "succeeded"]
        assert result.calls[0].output == "hello"
        assert result.calls[0].arguments == {"q": "hi"}

    def test_latent_output_is_validated(self) -> None:
        plan = [call("ask", "†state.answer", q="hi", _output=5)]
        with pytest.raises(PlanError) as info:
            run(plan)
        assert [d.code for d in info.value.errors] == ["invalid_output"]

    def test_latent_without_output_is_pending(self) -> None:
        plan = [
            call("ask", "†state.answer", q="hi"),
            call("echo", "†state.copy", value="†state.answer"),
            call("echo", "†state.other", value=1),
        ]
        result = run(plan)
        assert result.status == "partial"
        assert statuses(result) == ["pending_latent", "skipped", "succeeded"]
        assert result.calls[0].reason == (
            "latent call without _output: the execution loop must run it"
        )
        assert result.calls[1].reason == (
            "†state.answer was not written: #0 ask is a latent call still pending"
        )
        assert result.state == {"other": 1}

    def test_failed_beats_partial(self) -> None:
        result = run([call("ask", "†state.answer", q="hi"), call("fail", "†state.f")])
        assert result.status == "failed"


# -- concurrency -----------------------------------------------------------------------
class TestConcurrency:
    def test_sync_tools_run_in_threads_at_once(self) -> None:
        barrier = threading.Barrier(4, timeout=2)

        @obelisk.tool
        def meet(i: int) -> int:
            """Waits until all four are in flight."""
            barrier.wait()
            return i

        plan = [call("meet", f"†state.m{i}", i=i) for i in range(4)]
        result = run(plan, [meet])
        assert statuses(result) == ["succeeded"] * 4
        assert result.state == {"m0": 0, "m1": 1, "m2": 2, "m3": 3}

    def test_blocking_sync_tools_overlap_in_wall_time(self) -> None:
        @obelisk.tool
        def nap(i: int) -> int:
            """Sleeps 50 ms, blocking its thread."""
            time.sleep(0.05)
            return i

        plan = [call("nap", f"†state.n{i}", i=i) for i in range(4)]
        start = time.perf_counter()
        result = run(plan, [nap])
        elapsed = time.perf_counter() - start
        assert statuses(result) == ["succeeded"] * 4
        assert elapsed < 0.15  # serial would take at least 0.2 s

    @pytest.mark.parametrize("asynchronous", [True, False])
    def test_concurrency_one_serializes_in_plan_order(self, asynchronous: bool) -> None:
        flight = InFlight()

        if asynchronous:

            @obelisk.tool
            async def work(i: int) -> int:
                """Counts itself in flight."""
                flight.enter(i)
                await asyncio.sleep(0.002)
                flight.leave(i)
                return i

        else:

            @obelisk.tool
            def work(i: int) -> int:
                """Counts itself in flight."""
                flight.enter(i)
                time.sleep(0.002)
                flight.leave(i)
                return i

        plan = [call("work", f"†state.w{i}", i=i) for i in range(5)]
        result = run(plan, [work], concurrency=1)
        assert statuses(result) == ["succeeded"] * 5
        assert flight.max == 1
        assert flight.starts == [0, 1, 2, 3, 4]

    def test_ready_calls_start_in_plan_order(self) -> None:
        flight = InFlight()

        @obelisk.tool
        async def work(i: int, after: Any = None) -> int:
            """Records its start."""
            flight.enter(i)
            await asyncio.sleep(0)
            flight.leave(i)
            return i

        # #0 and #2 wait for #3; when #3 commits they become ready together.
        plan = [
            call("work", "†state.a", i=0, after="†state.root"),
            call("work", "†state.b", i=1),
            call("work", "†state.c", i=2, after="†state.root"),
            call("work", "†state.root", i=3),
        ]
        run(plan, [work], concurrency=1)
        assert flight.starts == [1, 3, 0, 2]

    def test_default_concurrency_overlaps_async_tools(self) -> None:
        flight = InFlight()
        gate = asyncio.Event()

        @obelisk.tool
        async def work(i: int) -> int:
            """The last of five opens the gate for all."""
            flight.enter(i)
            if flight.now == 5:
                gate.set()
            await asyncio.wait_for(gate.wait(), 2)
            flight.leave(i)
            return i

        result = run([call("work", f"†state.w{i}", i=i) for i in range(5)], [work])
        assert statuses(result) == ["succeeded"] * 5
        assert flight.max == 5

    def test_capacity_caps_one_tool_while_others_proceed(self) -> None:
        limited_flight = InFlight()
        seen_by_free: list[int] = []

        @obelisk.tool(capacity=2)
        async def limited(i: int) -> int:
            """At most two at once."""
            limited_flight.enter(i)
            await asyncio.sleep(0.005)
            limited_flight.leave(i)
            return i

        @obelisk.tool
        async def free(i: int) -> int:
            """Not limited."""
            seen_by_free.append(limited_flight.now)
            await asyncio.sleep(0)
            return i

        plan = [call("limited", f"†state.l{i}", i=i) for i in range(5)]
        plan += [call("free", f"†state.f{i}", i=i) for i in range(2)]
        result = run(plan, [limited, free])
        assert statuses(result) == ["succeeded"] * 7
        assert limited_flight.max == 2
        assert limited_flight.starts == [0, 1, 2, 3, 4]
        # both free calls started while two limited calls were in flight
        assert seen_by_free == [2, 2]
        assert result.calls[5].finished < result.calls[4].started


# -- events and records ----------------------------------------------------------------
class TestEvents:
    def test_event_sequence_of_a_chain(self) -> None:
        events: list[Any] = []
        plan = [
            call("echo", "†state.a", value=1),
            call("fail", "†state.b", value="†state.a"),
            call("echo", "†state.c", value="†state.b"),
        ]
        result = run(plan, on_event=events.append)
        assert [(e.event, getattr(e, "call", None)) for e in events] == [
            ("run_started", None),
            ("call_ready", 0),
            ("call_started", 0),
            ("call_succeeded", 0),
            ("state_written", None),
            ("call_ready", 1),
            ("call_started", 1),
            ("call_failed", 1),
            ("call_ready", 2),
            ("call_skipped", 2),
            ("run_finished", None),
        ]
        assert events[4].entry.call == 0
        assert events[0].calls == 3
        assert events[-1].status == "failed" == result.status
        times = [e.time for e in events]
        assert times == sorted(times)

    def test_event_dicts(self) -> None:
        events: list[Any] = []
        plan = [
            call("echo", "†state.a", value=1),
            call("fail", "†state.b", value="†state.a"),
            call("echo", "†state.c", value="†state.b"),
        ]
        run(plan, on_event=events.append)
        dicts = [e.to_dict() for e in events]
        for d, e in zip(dicts, events, strict=True):
            assert d["time"] == e.time
            d.pop("time")
        assert dicts == [
            {"event": "run_started", "calls": 3},
            {"event": "call_ready", "call": 0, "tool": "echo"},
            {"event": "call_started", "call": 0, "tool": "echo", "arguments": {"value": 1}},
            {"event": "call_succeeded", "call": 0, "tool": "echo", "output": 1},
            {
                "event": "state_written",
                "seq": 0,
                "call": 0,
                "instance": None,
                "path": "†state.a",
                "method": "set",
                "value": 1,
            },
            {"event": "call_ready", "call": 1, "tool": "fail"},
            {"event": "call_started", "call": 1, "tool": "fail", "arguments": {"value": 1}},
            {
                "event": "call_failed",
                "call": 1,
                "tool": "fail",
                "error": {"type": "ValueError", "message": "boom"},
            },
            {"event": "call_ready", "call": 2, "tool": "echo"},
            {
                "event": "call_skipped",
                "call": 2,
                "tool": "echo",
                "reason": "†state.b was not written: #1 fail failed",
            },
            {"event": "run_finished", "status": "failed"},
        ]

    def test_several_listeners_see_the_same_events(self) -> None:
        first: list[Any] = []
        second: list[Any] = []
        run([call("echo", "†state.a", value=1)], on_event=(first.append, second.append))
        assert first == second
        assert first[0].event == "run_started"
        assert first[-1].event == "run_finished"

    def test_run_result_to_dict(self) -> None:
        plan = [
            call("double", "†state.d", n=21, _id="d1"),
            call("fail", "†state.f"),
            call("echo", "†state.e", value="†state.f"),
        ]
        result = run(plan)
        assert result.to_dict() == {
            "status": "failed",
            "state": {"d": 42},
            "calls": [
                {
                    "index": 0,
                    "id": "d1",
                    "tool": "double",
                    "status": "succeeded",
                    "output": 42,
                    "error": None,
                    "reason": None,
                },
                {
                    "index": 1,
                    "id": None,
                    "tool": "fail",
                    "status": "failed",
                    "output": None,
                    "error": {"type": "ValueError", "message": "boom"},
                    "reason": None,
                },
                {
                    "index": 2,
                    "id": None,
                    "tool": "echo",
                    "status": "skipped",
                    "output": None,
                    "error": None,
                    "reason": "†state.f was not written: #1 fail failed",
                },
            ],
            "diagnostics": [],
        }

    def test_run_result_carries_the_diagnostics(self) -> None:
        plan = [call("echo", "†state.v", value="x"), call("echo", "†state.v", value="y")]
        result = run(plan)
        assert [d.code for d in result.diagnostics] == ["write_conflict"]
        assert result.to_dict()["diagnostics"] == [d.to_dict() for d in result.diagnostics]
        assert result.state == {"v": "y"}

    def test_call_record_timings(self) -> None:
        before = time.time()
        result = run([call("double", "†state.d", n=1), call("double", "†state.e", n="†state.d")])
        after = time.time()
        first, second = result.calls
        assert before <= first.started <= first.finished <= second.started <= second.finished
        assert second.finished <= after
        assert set(first.to_dict()) == {
            "index",
            "id",
            "tool",
            "status",
            "arguments",
            "output",
            "error",
            "reason",
            "started",
            "finished",
            "attempts",
            "warnings",
        }


# -- instances -------------------------------------------------------------------------
class TestInstances:
    def test_two_instances_share_one_plan(self) -> None:
        @obelisk.tool
        def tag(base: str, label: str) -> str:
            """Labels a value."""
            return f"{base}-{label}"

        plan = [
            call("echo", "†state.shared", value="s"),
            call("tag", "†state.r", _instance="a", base="†state.shared", label="A"),
            call("tag", "†state.r", _instance="b", base="†state.shared", label="B"),
            call("tag", "†state.again", _instance="a", base="†state.r", label="2"),
        ]
        result = run(plan, [echo, tag])
        assert result.status == "completed"
        assert result.state == {"shared": "s"}
        assert result.instances == {
            "a": {"shared": "s", "r": "s-A", "again": "s-A-2"},
            "b": {"shared": "s", "r": "s-B"},
        }
        assert sorted((e.call, e.instance, e.path) for e in result.log) == [
            (0, None, "†state.shared"),
            (1, "a", "†state.r"),
            (2, "b", "†state.r"),
            (3, "a", "†state.again"),
        ]


# -- determinism (docs/semantics.md) ---------------------------------------------------------
def ordered_finishers(order: list[int]) -> tuple[Tool, list[int]]:
    """An async tool ``step(i, value)`` whose calls finish in ``order`` (by ``i``)."""
    finished: list[int] = []
    done: dict[int, asyncio.Event] = {}

    def event(i: int) -> asyncio.Event:
        return done.setdefault(i, asyncio.Event())

    @obelisk.tool
    async def step(i: int, value: Any) -> Any:
        """Returns value once the call before it in ``order`` finished."""
        position = order.index(i)
        if position > 0:
            await event(order[position - 1]).wait()
        finished.append(i)
        event(i).set()
        return value

    return step, finished


class TestSkipReasons:
    def test_an_index_into_an_empty_list_says_so(self) -> None:
        plan = [
            call("echo", "†state.flights", value=[]),
            call("echo", "†state.first", value="†state.flights[0]"),
            call("echo", "†state.shorts", value=["a", "b"]),
            call("echo", value="†state.shorts[2]"),
            call("echo", "†state.word", value="text"),
            call("echo", value="†state.word.length"),
        ]
        result = run(plan)
        assert statuses(result) == ["succeeded", "skipped"] * 3
        assert [r.reason for r in result.calls[1::2]] == [
            "†state.flights[0]: †state.flights is an empty list",
            "†state.shorts[2]: †state.shorts has 2 items",
            "†state.word.length: †state.word is a string, which has no field 'length'",
        ]


class TestDeterminism:
    def test_parallel_pushes_land_in_plan_order(self) -> None:
        step, finished = ordered_finishers([3, 2, 1, 0])
        plan = [
            call("step", "†state.items", i=i, value=f"v{i}", _outputMethod="push") for i in range(4)
        ]
        result = run(plan, [step])
        assert finished == [3, 2, 1, 0]
        assert result.state == {"items": ["v0", "v1", "v2", "v3"]}
        assert [e.call for e in result.log] == [0, 1, 2, 3]

    @pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2]])
    def test_a_failed_writer_does_not_let_the_next_one_overtake(self, order: list[int]) -> None:
        # Writers of one path wait for the one before them; a call that fails writes
        # nothing and commits at once, but the call after it still waits for the
        # writers before it.
        step, _ = ordered_finishers(order)

        @obelisk.tool
        async def failing(i: int, value: Any) -> Any:
            """Fails after step's call i - 1 is done."""
            await step.function(i=i, value=value)
            raise RuntimeError("no")

        plan = [
            call("failing" if i == 1 else "step", "†state.items", i=i, value=f"v{i}",
                 _outputMethod="push")
            for i in range(4)
        ]  # fmt: skip
        result = run(plan, [step, failing])
        assert statuses(result) == ["succeeded", "failed", "succeeded", "succeeded"]
        assert result.state == {"items": ["v0", "v2", "v3"]}
        assert [e.call for e in result.log] == [0, 2, 3]

    def test_many_pushes_to_one_path_keep_plan_order(self) -> None:
        plan = [call("echo", "†state.log", value=i, _outputMethod="push") for i in range(3000)]
        result = run(plan)
        assert result.state == {"log": list(range(3000))}

    @pytest.mark.parametrize("order", [[0, 1], [1, 0]])
    def test_a_shared_write_and_an_instance_write_commit_in_plan_order(
        self, order: list[int]
    ) -> None:
        # The instance sees the shared layer under its own writes: its push must see
        # the shared push when that comes first in the plan, however the calls finish.
        step, _ = ordered_finishers(order)
        plan = [
            call("step", "†state.items", i=0, value="base", _outputMethod="push"),
            call("step", "†state.items", i=1, value="mine", _outputMethod="push", _instance="a"),
        ]
        result = run(plan, [step], state={"items": []})
        assert result.state == {"items": ["base"]}
        assert result.instances == {"a": {"items": ["base", "mine"]}}

    @pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0]])
    def test_writes_to_positions_of_one_list_commit_in_plan_order(self, order: list[int]) -> None:
        # Position 1 exists only once position 0 does: the for-each pattern
        # (†state.report[i]) must not depend on which call finishes first.
        step, _ = ordered_finishers(order)
        plan = [call("step", f"†state.report[{i}]", i=i, value=f"r{i}") for i in range(3)]
        result = run(plan, [step])
        assert statuses(result) == ["succeeded"] * 3
        assert result.state == {"report": ["r0", "r1", "r2"]}

    def test_writes_of_two_instances_do_not_wait_for_each_other(self) -> None:
        step, finished = ordered_finishers([1, 0])
        plan = [
            call("step", "†state.items", i=0, value="a", _outputMethod="push", _instance="a"),
            call("step", "†state.items", i=1, value="b", _outputMethod="push", _instance="b"),
        ]
        result = run(plan, [step])
        assert finished == [1, 0]
        assert [entry.call for entry in result.log] == [1, 0]  # b committed first
        assert result.instances == {"a": {"items": ["a"]}, "b": {"items": ["b"]}}

    def test_parallel_pushes_with_different_sleeps(self) -> None:
        finished: list[int] = []

        @obelisk.tool
        async def nap(i: int) -> int:
            """Sleeps less the later it is in the plan."""
            await asyncio.sleep((3 - i) * 0.01)
            finished.append(i)
            return i

        plan = [call("nap", "†state.items", i=i, _outputMethod="push") for i in range(4)]
        result = run(plan, [nap])
        assert result.state == {"items": [0, 1, 2, 3]}
        assert sorted(finished) == [0, 1, 2, 3]

    @pytest.mark.parametrize("order", [[0, 1], [1, 0]])
    def test_later_set_writer_wins_whatever_finishes_first(self, order: list[int]) -> None:
        step, finished = ordered_finishers(order)
        plan = [
            call("step", "†state.x", i=0, value="first"),
            call("step", "†state.x", i=1, value="second"),
        ]
        result = run(plan, [step])
        assert finished == order
        assert result.state == {"x": "second"}
        assert [(e.call, e.value) for e in result.log] == [(0, "first"), (1, "second")]

    def test_reader_behind_a_held_write_sees_the_final_value(self) -> None:
        # #1 finishes first, but its write of †state.a overlaps #0's †state.a.b and
        # is held until #0 commits.  #2 reads †state.a.c, which only #1 writes;
        # #3 reads †state.a.b, which both write (plan order: #1's value is final).
        step, finished = ordered_finishers([1, 0])
        events: list[Any] = []
        plan = [
            call("step", "†state.a.b", i=0, value="zero"),
            call("step", "†state.a", i=1, value={"b": "one", "c": 3}),
            call("echo", "†state.seen_c", value="†state.a.c"),
            call("echo", "†state.seen_b", value="†state.a.b"),
        ]
        result = run(plan, [step, echo], on_event=events.append)
        assert finished == [1, 0]
        assert result.state == {"a": {"b": "one", "c": 3}, "seen_c": 3, "seen_b": "one"}
        assert result.calls[3].arguments == {"value": "one"}
        position = {(e.event, getattr(e, "call", None)): n for n, e in enumerate(events)}
        assert position[("call_ready", 2)] > position[("call_succeeded", 0)]
        assert [e.call for e in result.log][:2] == [0, 1]

    def test_same_result_whatever_the_finish_order(self) -> None:
        def outcome(order: list[int]) -> tuple[Any, ...]:
            step, _ = ordered_finishers(order)
            plan = [
                call("step", "†state.list", i=0, value="a", _outputMethod="push"),
                call("step", "†state.obj", i=1, value={"x": 1}, _outputMethod="merge"),
                call("step", "†state.obj.x", i=2, value=2),
                call("step", "†state.list", i=3, value=["b", "c"], _outputMethod="concat"),
            ]
            result = run(plan, [step])
            records = [(r.status, r.output, r.error, r.reason) for r in result.calls]
            # Only overlapping writes are ordered (docs/semantics.md): compare each path's entries.
            per_path = sorted(
                (path, [(e.call, e.method, e.value) for e in result.log if e.path == path])
                for path in {e.path for e in result.log}
            )
            return result.state, records, per_path

        first = outcome([0, 1, 2, 3])
        assert first[0] == {"list": ["a", "b", "c"], "obj": {"x": 2}}
        assert outcome([3, 2, 1, 0]) == first
        assert outcome([2, 0, 3, 1]) == first

    def test_plan_order_and_dependency_order_disagree(self) -> None:
        # Three writers of †state.last: #0 depends on #2 (it reads †state.c); #1 and
        # #2 are independent.  Plan order wants #0 < #1 < #2, the dependency wants
        # #2 < #0: no order keeps both, but every call can run and the run must end.
        plan = [
            call("echo", "†state.a && †state.last", value="†state.c"),
            call("echo", "†state.b && †state.last", value="B"),
            call("echo", "†state.c && †state.last", value="C"),
        ]

        result = run_within(2, plan, TOOLS)  # TimeoutError: the run never ends
        assert statuses(result) == ["succeeded"] * 3
        assert {k: result.state[k] for k in ("a", "b", "c")} == {"a": "C", "b": "B", "c": "C"}
