"""Tools that misbehave towards asyncio, Python or the event loop fail their own call;
the run returns with every other call's result, and nothing is printed
(docs/limits.md, "Tools that misbehave")."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

import obelisk


@obelisk.tool
def ok(n: int) -> int:
    """Returns n."""
    return n


def make(function: Any, name: str = "bad", **options: Any) -> obelisk.Tool:
    return obelisk.Tool.from_function(
        function, name=name, description="A misbehaving tool.", **options
    )


def run_bad(bad: obelisk.Tool, **options: Any) -> obelisk.RunResult:
    """``bad`` with an error arm, beside an ordinary call."""
    plan = [
        {"_tool": bad.name, "_outputPath": "†state.bad || †state.error"},
        {"_tool": "ok", "n": 1, "_outputPath": "†state.good"},
    ]
    return obelisk.run_sync(plan, [bad, ok], **options)


def run_bad_without_arm(bad: obelisk.Tool, **options: Any) -> obelisk.RunResult:
    plan = [
        {"_tool": bad.name, "_outputPath": "†state.bad"},
        {"_tool": "ok", "n": 1, "_outputPath": "†state.good"},
    ]
    return obelisk.run_sync(plan, [bad, ok], **options)


# -- point 1: CancelledError and StopIteration are the tool's failure -----------------


async def leaks_cancelled() -> int:
    raise asyncio.CancelledError("leaked by a client library")


def sync_leaks_cancelled() -> int:
    raise asyncio.CancelledError()


def empty_next() -> int:
    return int(next(iter([])))


CANCELLED = [
    (make(leaks_cancelled), "leaked by a client library"),
    (  # Python 3.10 does not carry the message through the task that bounds the call
        make(leaks_cancelled, timeout=5),
        "leaked by a client library"
        if sys.version_info >= (3, 11)
        else "the tool raised CancelledError, or its task was cancelled, though obelisk did "
        "not cancel the call",
    ),
    (
        make(leaks_cancelled, retry=obelisk.RetryPolicy(attempts=2)),
        "leaked by a client library",
    ),
    (
        make(sync_leaks_cancelled),
        "the tool raised CancelledError, or its task was cancelled, though obelisk did "
        "not cancel the call",
    ),
]


@pytest.mark.parametrize(("bad", "message"), CANCELLED, ids=["async", "timeout", "retry", "sync"])
def test_a_cancelled_error_nobody_asked_for_is_a_failure_the_error_arm_takes(
    bad: obelisk.Tool, message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    result = run_bad(bad)
    error = {"type": "CancelledError", "message": message}
    assert result.status == "completed"
    assert result.state == {"error": {"error": {**error, "tool": "bad", "call": 0}}, "good": 1}
    assert result.calls[0].error == error
    failed = run_bad_without_arm(bad)
    assert [c.status for c in failed.calls] == ["failed", "succeeded"]
    assert failed.calls[0].error == error and failed.state == {"good": 1}
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize("blocking", [True, False], ids=["thread", "event-loop"])
def test_a_sync_tool_raising_stop_iteration_is_a_normal_failure(
    blocking: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    result = run_bad_without_arm(make(empty_next, blocking=blocking), timeout=5)
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    assert result.calls[0].error == {
        "type": "RuntimeError",
        "message": "the tool raised StopIteration",
    }
    assert result.state == {"good": 1}
    assert capfd.readouterr() == ("", "")  # no "interacts badly with generators"


def test_a_stop_iteration_goes_to_the_error_arm() -> None:
    result = run_bad(make(empty_next), timeout=5)
    assert result.status == "completed"
    assert result.state["error"]["error"]["type"] == "RuntimeError"


# -- point 2: exceptions that cannot describe themselves -----------------------------


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class NotAString(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]


def raises_unprintable() -> int:
    raise Unprintable("x")


async def raises_unprintable_async() -> int:
    raise Unprintable("x")


def raises_not_a_string() -> int:
    raise NotAString()


@pytest.mark.parametrize(
    ("function", "name"),
    [
        (raises_unprintable, "Unprintable"),
        (raises_unprintable_async, "Unprintable"),
        (raises_not_a_string, "NotAString"),
    ],
    ids=["sync", "async", "str-not-a-string"],
)
def test_an_exception_that_cannot_describe_itself_gets_a_safe_description(
    function: Any, name: str
) -> None:
    events: list[Any] = []
    result = run_bad_without_arm(make(function), on_event=events.append)
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    error = {"type": name, "message": f"<unprintable {name} message>"}
    assert result.calls[0].error == error and result.state == {"good": 1}
    assert error in [getattr(event, "error", None) for event in events]
    arm = run_bad(make(function))
    assert arm.state["error"]["error"]["message"] == f"<unprintable {name} message>"
    assert obelisk.RunResult.__repr__(result)  # the result itself prints


# -- point 3: tools that attack the event loop ----------------------------------------


async def stops_the_loop() -> int:
    asyncio.get_running_loop().stop()
    await asyncio.sleep(0.01)
    return 1


async def stops_the_loop_by_its_class() -> int:
    loop = asyncio.get_running_loop()
    type(loop).stop(loop)  # past the guard: the loop runs on
    await asyncio.sleep(0.01)
    return 1


async def cancels_every_task() -> int:
    await asyncio.sleep(0.05)  # the slow call is in flight by now
    me = asyncio.current_task()
    for task in asyncio.all_tasks():
        if task is not me:
            task.cancel()
    return 1


def cancels_every_task_at_once() -> int:
    for task in asyncio.all_tasks():  # the run's own task too, while it runs this call
        task.cancel()
    return 1


async def slow() -> int:
    await asyncio.sleep(0.3)
    return 5


def test_a_tool_that_stops_the_event_loop_fails_and_the_run_returns(
    capfd: pytest.CaptureFixture[str],
) -> None:
    result = run_bad_without_arm(make(stops_the_loop))
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    assert result.calls[0].error == {
        "type": "RuntimeError",
        "message": "a tool may not stop the event loop that runs the plan (obelisk run_sync)",
    }
    assert result.state == {"good": 1}
    sneaky = run_bad_without_arm(make(stops_the_loop_by_its_class))
    assert sneaky.status == "completed" and sneaky.state == {"bad": 1, "good": 1}
    assert capfd.readouterr() == ("", "")


def test_a_tool_that_cancels_every_task_fails_the_calls_in_flight_and_the_run_returns(
    capfd: pytest.CaptureFixture[str],
) -> None:
    plan = [
        {"_tool": "slow", "_outputPath": "†state.slow"},
        {"_tool": "bad", "_outputPath": "†state.bad"},
        {"_tool": "ok", "n": "†state.bad", "_outputPath": "†state.good"},
    ]
    tools = [make(slow, "slow"), make(cancels_every_task), ok]
    result = obelisk.run_sync(plan, tools)
    assert [c.status for c in result.calls] == ["failed", "succeeded", "succeeded"]
    assert result.calls[0].error is not None
    assert result.calls[0].error["type"] == "CancelledError"
    assert result.state == {"bad": 1, "good": 1}
    assert capfd.readouterr() == ("", "")


def test_a_tool_that_cancels_the_run_task_while_it_runs_loses_nothing() -> None:
    # a quick sync tool runs inside the run's own task (started eagerly), and every
    # call is done before the run awaits anything: the cancellation would end it
    result = run_bad_without_arm(make(cancels_every_task_at_once, blocking=False))
    assert result.status == "completed" and result.state == {"bad": 1, "good": 1}


# -- point 4: timeouts hold against a tool that swallows cancellation -----------------


async def swallows_cancellation() -> int:
    while True:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(10)


def test_a_run_timeout_gives_up_on_a_call_that_ignores_its_cancellation(
    capfd: pytest.CaptureFixture[str],
) -> None:
    started = time.monotonic()
    result = run_bad_without_arm(make(swallows_cancellation), timeout=0.2)
    assert time.monotonic() - started < 0.2 + 0.05 + 0.5  # the run's deadline, plus slack
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    assert result.calls[0].error == {
        "type": "TimeoutError",
        "message": "the run timed out after 0.2 s, and the call ignored its cancellation "
        "(given up on, its task may linger)",
    }
    assert result.state == {"good": 1}
    assert capfd.readouterr() == ("", "")


def test_a_tool_that_swallows_cancellation_does_not_keep_the_process_from_exiting() -> None:
    # the case: timeout=1 on the tool, timeout=2 on the run; it used to hang
    script = textwrap.dedent(
        """
        import asyncio, obelisk

        @obelisk.tool(timeout=1)
        async def stubborn() -> int:
            "Swallows every cancellation."
            while True:
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError:
                    pass

        plan = [
            {"_tool": "stubborn", "_outputPath": "†state.a"},
            {"_tool": "stubborn", "_outputPath": "†state.b || †state.b_error"},
        ]
        result = obelisk.run_sync(plan, [stubborn], timeout=2)
        print(result.status, [c.error["message"] for c in result.calls], result.state)
        """
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.strip() == (
        "failed ['timed out after 1 s', 'timed out after 1 s'] {'b_error': {'error': "
        "{'type': 'TimeoutError', 'message': 'timed out after 1 s', 'tool': 'stubborn', "
        "'call': 1}}}"
    )
    assert time.monotonic() - started < 10


# -- point 6: endless iterators -------------------------------------------------------


def endless() -> Any:
    return itertools.count()


def endless_typed() -> list[int]:
    return itertools.count()  # type: ignore[return-value]


def generator() -> Any:
    yield 1


@pytest.mark.parametrize("function", [endless, endless_typed, generator])
def test_an_iterator_result_fails_at_once(function: Any) -> None:
    started = time.monotonic()
    result = run_bad_without_arm(make(function), timeout=5)
    assert time.monotonic() - started < 2
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    error: Any = result.calls[0].error
    assert error["type"] == "OutputValidationError"
    assert error["message"].startswith("the output of bad is an iterator (")
    assert error["message"].endswith("), not JSON data: it may never end; return a list")


# -- point 6: a regex still running at the run's timeout ------------------------------


@pytest.mark.parametrize("timeout", [0.05, 0.1, 0.2])
def test_a_regex_still_running_when_the_process_exits_does_not_abort_it(timeout: float) -> None:
    # RE2 matches with the GIL released: a match that ended while the interpreter
    # finalized used to abort the process ("terminate called...", exit code 134)
    script = textwrap.dedent(
        f"""
        import random, obelisk
        from obelisk.stdlib_tools import default_registry

        random.seed(1)
        text = "".join(random.choice("ab") for _ in range(200_000))
        call = {{"_tool": "regex_find_all", "text": "†input.t", "pattern": "a[ab]{{25}}c"}}
        plan = [{{**call, "_outputPath": "†state.m"}}]
        result = obelisk.run_sync(plan, default_registry(), input={{"t": text}}, timeout={timeout})
        print(result.status)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout in ("failed\n", "completed\n")  # timed out, or a quick machine


def test_ctrl_c_still_interrupts_run_sync_at_once() -> None:
    # the shelter shrugs off cancellations from tools, not the user's Ctrl-C
    script = textwrap.dedent(
        """
        import asyncio, time, obelisk

        @obelisk.tool
        async def slow() -> int:
            "Slow."
            await asyncio.sleep(10)
            return 1

        @obelisk.tool
        def slow_sync() -> int:
            "Slow, in a thread."
            time.sleep(10)
            return 1

        plan = [{"_tool": "slow", "_outputPath": "†state.a"},
                {"_tool": "slow_sync", "_outputPath": "†state.b"}]
        print("started", flush=True)
        try:
            obelisk.run_sync(plan, [slow, slow_sync])
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "started\n"
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    out, err = process.communicate(timeout=20)
    assert (process.returncode, out, err) == (0, "interrupted\n", "")
    assert time.monotonic() - started < 5


def test_a_tool_stopping_the_run_leaves_no_task_exception_for_asyncio_to_log() -> None:
    # KeyboardInterrupt and SystemExit leave the event loop with the run's task holding
    # them; once the exception (and so the task) is freed, asyncio logs a task whose
    # exception nobody retrieved, unless run_sync retrieved it
    script = textwrap.dedent(
        """
        import gc, obelisk

        @obelisk.tool
        def stopper(kind: str) -> int:
            raise KeyboardInterrupt if kind == "interrupt" else SystemExit(3)

        kept = []
        for kind in ("interrupt", "exit", "interrupt"):
            try:
                obelisk.run_sync([{"_tool": "stopper", "kind": kind}], [stopper])
            except (KeyboardInterrupt, SystemExit) as exc:
                kept.append(exc.result.status)
        print(kept)
        del kept
        gc.collect()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "['failed', 'failed', 'failed']\n"
    assert done.stderr == ""
