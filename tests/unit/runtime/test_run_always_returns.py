"""A run always returns its result: what a tool raises or returns fails one call, a
listener's bug is reported and isolated, and KeyboardInterrupt or SystemExit stop the
run with the result so far attached (docs/semantics.md)."""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
import types
from typing import Any

import pytest

import obelisk


@obelisk.tool
def ok(n: int) -> int:
    """Returns n."""
    return n


class ToolAbort(BaseException):
    """A tool's own BaseException subclass."""


def plan_with(tool: str) -> list[dict[str, Any]]:
    return [
        {"_tool": tool, "_outputPath": "†state.bad"},
        {"_tool": "ok", "n": 1, "_outputPath": "†state.good"},
    ]


def make(function: Any, name: str) -> obelisk.Tool:
    return obelisk.Tool.from_function(function, name=name, description="A misbehaving tool.")


def deep_value() -> dict[str, Any]:
    value: dict[str, Any] = {}
    current = value
    for _ in range(600):
        current["a"] = {}
        current = current["a"]
    return value


def circular_value() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


def raises(exc: BaseException) -> Any:
    def tool() -> Any:
        raise exc

    return tool


@pytest.mark.parametrize(
    ("function", "error_type", "message"),
    [
        (raises(ToolAbort("gave up")), "ToolAbort", "gave up"),
        (raises(GeneratorExit()), "GeneratorExit", ""),
        (circular_value, "OutputValidationError", "Circular reference detected"),
        (deep_value, "OutputValidationError", "nests more than 255 levels deep; at most 255"),
        (lambda: float("nan"), "OutputValidationError", "is not JSON data: nan"),
        (
            lambda: {"items": [{"cost": 1.5}, {"cost": float("-inf")}]},
            "OutputValidationError",
            "is not JSON data: -inf at items[1].cost",
        ),
    ],
    ids=["base-exception", "generator-exit", "circular", "deep", "nan", "infinity"],
)
def test_a_bad_tool_fails_its_call_and_the_run_returns(
    function: Any, error_type: str, message: str
) -> None:
    result = obelisk.run_sync(plan_with("bad"), [make(function, "bad"), ok])
    assert result.status == "failed"
    bad, good = result.calls
    assert bad.status == "failed" and bad.error is not None
    assert bad.error["type"] == error_type and message in bad.error["message"]
    assert (good.status, result.state) == ("succeeded", {"good": 1})


def test_nan_in_text_is_not_mistaken_for_a_number() -> None:
    result = obelisk.run_sync(plan_with("text"), [make(lambda: "NaN Infinity", "text"), ok])
    assert result.status == "completed" and result.state["bad"] == "NaN Infinity"


def test_a_listener_that_raises_is_reported_once_and_the_run_goes_on() -> None:
    seen: list[str] = []

    def broken(event: obelisk.Event) -> None:
        seen.append(event.event)
        raise RuntimeError("listener bug")

    plan = [{"_tool": "ok", "n": i, "_outputPath": f"†state.n{i}"} for i in range(3)]
    with pytest.warns(
        RuntimeWarning, match=r"listener \S*broken raised RuntimeError: listener bug"
    ) as caught:
        result = obelisk.run_sync(plan, [ok], on_event=broken)
    assert len(caught) == 1  # once, though it raised on every event
    assert result.status == "completed" and result.state == {"n0": 0, "n1": 1, "n2": 2}
    assert seen[0] == "run_started" and seen[-1] == "run_finished"  # it kept receiving


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_keyboard_interrupt_and_system_exit_stop_the_run_with_its_result(
    stop: type[BaseException],
) -> None:
    started = threading.Event()

    @obelisk.tool
    async def slow() -> int:
        """Waits until cancelled."""
        started.set()
        await asyncio.sleep(30)
        return 0

    @obelisk.tool
    async def stopper() -> int:
        """Stops the process, once the others are going."""
        await asyncio.sleep(0.05)
        raise stop()

    plan = [
        {"_tool": "ok", "n": 7, "_outputPath": "†state.done"},
        {"_tool": "slow", "_outputPath": "†state.slow"},
        {"_tool": "stopper", "_outputPath": "†state.never"},
        {"_tool": "ok", "n": "†state.never", "_outputPath": "†state.after"},
    ]
    with pytest.raises(stop) as raised:
        obelisk.run_sync(plan, [ok, slow, stopper])
    result = raised.value.result  # type: ignore[attr-defined]
    assert isinstance(result, obelisk.RunResult) and result.status == "failed"
    assert result.state == {"done": 7}
    assert [r.status for r in result.calls] == ["succeeded", "cancelled", "failed", "cancelled"]
    assert result.calls[2].error == {"type": stop.__name__, "message": ""}
    assert result.calls[1].reason == f"not run: {stop.__name__} in #2 stopper stopped the run"
    assert started.is_set()


def test_runtime_limits_fail_the_call_that_passes_them() -> None:
    limits = obelisk.Limits(max_output_bytes=1_000, max_output_depth=5, max_state_bytes=5_000)

    @obelisk.tool
    def big(n: int) -> list[int]:
        """n numbers."""
        return list(range(n))

    @obelisk.tool
    def deep(n: int) -> Any:
        """A list nested n deep."""
        value: Any = 0
        for _ in range(n):
            value = [value]
        return value

    plan = [
        {"_tool": "big", "n": 10, "_outputPath": "†state.small"},
        {"_tool": "big", "n": 1_000, "_outputPath": "†state.large"},
        {"_tool": "deep", "n": 4, "_outputPath": "†state.shallow"},
        {"_tool": "deep", "n": 6, "_outputPath": "†state.deep"},
    ]
    result = obelisk.run_sync(plan, [big, deep], limits=limits)
    assert [r.status for r in result.calls] == ["succeeded", "failed", "succeeded", "failed"]
    assert result.calls[1].error == {
        "type": "OutputValidationError",
        "message": "the output of big is 3,891 bytes of JSON; at most 1,000 are allowed "
        "(Limits.max_output_bytes)",
    }
    assert result.calls[3].error == {
        "type": "OutputValidationError",
        "message": "the output of deep nests 6 levels deep; at most 5 are allowed "
        "(Limits.max_output_depth)",
    }
    assert result.state == {"small": list(range(10)), "shallow": [[[[0]]]]}


def test_output_limits_hold_for_results_with_a_lone_surrogate() -> None:
    # UTF-8 cannot hold a lone surrogate, so the result has no compact UTF-8 text;
    # its size and depth are measured all the same
    limits = obelisk.Limits(max_output_bytes=1_000, max_output_depth=5)

    @obelisk.tool
    def odd(n: int, depth: int) -> Any:
        """n characters and a lone surrogate, nested depth lists deep."""
        value: Any = "x" * n + "\ud800"
        for _ in range(depth):
            value = [value]
        return value

    plan = [
        {"_tool": "odd", "n": 10, "depth": 1, "_outputPath": "†state.small"},
        {"_tool": "odd", "n": 2_000, "depth": 1, "_outputPath": "†state.large"},
        {"_tool": "odd", "n": 10, "depth": 6, "_outputPath": "†state.deep"},
    ]
    result = obelisk.run_sync(plan, [odd], limits=limits)
    assert [r.status for r in result.calls] == ["succeeded", "failed", "failed"]
    assert result.calls[1].error == {
        "type": "OutputValidationError",
        "message": "the output of odd is 2,007 bytes of JSON; at most 1,000 are allowed "
        "(Limits.max_output_bytes)",
    }
    assert result.calls[2].error == {
        "type": "OutputValidationError",
        "message": "the output of odd nests 6 levels deep; at most 5 are allowed "
        "(Limits.max_output_depth)",
    }
    assert result.state == {"small": ["x" * 10 + "\ud800"]}


def test_the_state_limit_refuses_the_write_that_would_pass_it() -> None:
    @obelisk.tool
    def text(n: int) -> str:
        """n characters."""
        return "x" * n

    plan = [{"_tool": "text", "n": 600, "_outputPath": f"†state.t{i}"} for i in range(10)]
    # each 600-character string counts 1,204 bytes of memory (2 a byte of its JSON)
    limits = obelisk.Limits(max_state_bytes=10_000)
    result = obelisk.run_sync(plan, [text], limits=limits, concurrency=1)
    statuses = [r.status for r in result.calls]
    assert statuses == ["succeeded"] * 8 + ["failed"] * 2
    error: Any = result.calls[8].error
    assert error["type"] == "StateWriteError"
    assert error["message"].startswith("the state would grow past 10,000 bytes of memory")
    assert len(result.state) == 8
    # replacing a value does not grow the state: the estimate is measured again
    again = [{"_tool": "text", "n": 600, "_outputPath": "†state.t"} for _ in range(20)]
    assert obelisk.run_sync(again, [text], limits=limits).status == "completed"


def test_limits_must_be_limits() -> None:
    with pytest.raises(obelisk.UsageError, match=r"limits must be an obelisk\.Limits, got dict"):
        obelisk.run_sync([], [], limits={"max_output_bytes": 1})  # type: ignore[arg-type]


async def _coroutine_shape() -> int:
    """A coroutine function whose code and signature a pretender borrows."""
    return 0


class _PassesForACoroutineFunction:
    """Passes ``inspect.iscoroutinefunction`` on every Python (its ``__class__`` says
    it is a function, its ``__code__`` is a coroutine function's) but returns no
    coroutine: calling it raises StopIteration, as a sync function marked with
    ``inspect.markcoroutinefunction`` (Python 3.12+) may."""

    __class__ = types.FunctionType  # type: ignore[assignment]

    def __init__(self) -> None:
        for name in ("__code__", "__defaults__", "__kwdefaults__", "__annotations__"):
            object.__setattr__(self, name, getattr(_coroutine_shape, name))
        for name in ("__name__", "__qualname__", "__module__", "__doc__", "__globals__"):
            object.__setattr__(self, name, getattr(_coroutine_shape, name))

    def __call__(self) -> Any:
        raise StopIteration


def _marked_sync_function() -> Any:
    def tool() -> Any:
        raise StopIteration

    return inspect.markcoroutinefunction(tool)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "make_function",
    [
        _PassesForACoroutineFunction,
        pytest.param(
            _marked_sync_function,
            marks=pytest.mark.skipif(
                sys.version_info < (3, 12), reason="inspect.markcoroutinefunction is 3.12+"
            ),
        ),
    ],
)
def test_a_pretend_coroutine_function_raising_stop_iteration_fails_with_runtime_error(
    make_function: Any,
) -> None:
    # StopIteration raised where a coroutine was expected fails the call as it does
    # inside a coroutine (PEP 479), not as a bare StopIteration
    function = make_function()
    assert inspect.iscoroutinefunction(function)
    tool = make(function, "pretend")
    assert tool.is_async
    result = obelisk.run_sync(plan_with("pretend"), [ok, tool])
    bad, good = result.calls
    assert bad.status == "failed"
    assert bad.error == {"type": "RuntimeError", "message": "coroutine raised StopIteration"}
    assert good.status == "succeeded"
    assert result.state == {"good": 1}
