"""Where a simulated call's result comes from, and which outcomes it may have.

A call's result comes from its tool's stub (a value, a function of the resolved
arguments, or a list of outcomes to explore), from really running the tool when it
is declared ``pure=True``, or from a value generated from its output schema with a
seeded sampler.  Each call then has one or more :class:`Branch`\\ es: the outcomes
the dry run explores (docs/simulate.md).

* a stub list: exactly its items; an item is a value, an ``Outcome(k, value)`` or an
  exception (raised by the tool);
* otherwise one result, and, when the call's output path lists alternatives, every
  alternative it can take: each declared outcome, or the success and the error arm.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from obelisk.errors import UsageError
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.simulate.samples import SchemaSampler
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Branch", "OutputSource"]


@dataclass(frozen=True, slots=True)
class Branch:
    """One outcome of a call: ``value`` written to alternative ``alternative`` (its
    index; ``None`` for the first), or ``error`` (``{"type", "message"}``) raised by the
    tool, which the error arm takes when the call has one.  ``label`` names it in
    reports (``None``: the output path of its alternative); ``source`` says where the
    value came from (``stub``, ``pure``, ``generated``, ``unknown``); ``why`` says,
    for an ``unknown`` one, why nobody can predict it (its ``value`` is ``None``: the
    dry run writes an :class:`~obelisk.interpreter.simulate.unknown.UnknownValue`)."""

    label: str | None
    value: Any = None
    alternative: int | None = None
    error: dict[str, Any] | None = None
    source: str = "stub"
    why: str | None = None


def _error_of(exc: BaseException) -> dict[str, Any]:
    return {"type": type(exc).__name__, "message": str(exc)}


class OutputSource:
    """The results of simulated calls.

    ``stubs`` maps a tool name (or a call's ``_id``) to a value, a function of the
    resolved arguments (returning a value or an ``Outcome``, or raising), or a list of
    outcomes to explore.  ``seed`` makes generated values repeatable.
    """

    def __init__(self, stubs: Mapping[str, Any] | None, seed: int) -> None:
        self.stubs = dict(stubs or {})
        self.seed = seed
        self._samplers: dict[str, SchemaSampler] = {}
        self.notes: dict[str, str] = {}  # tool -> why its values are unknown
        self.generated = False  # some value was generated from an output schema

    def stub_for(self, call: Call) -> tuple[bool, Any]:
        if call.id is not None and str(call.id) in self.stubs:
            return True, self.stubs[str(call.id)]
        if call.tool in self.stubs:
            return True, self.stubs[call.tool]
        return False, None

    def branches(
        self, call: Call, tool: Tool, arguments: dict[str, Any], unknown: bool = False
    ) -> list[Branch]:
        """Every outcome the dry run explores for this call (at least one).
        ``unknown``: the arguments hold unknown values, so a result computed from
        them (a stub function's, a pure tool's) is unknown too."""
        found, stub = self.stub_for(call)
        if found and isinstance(stub, list):
            if not stub:
                return [Branch("no outcome", None, source="stub")]
            return [self._item(item, call, tool) for item in stub]
        base = self._result(call, tool, arguments, stub if found else None, found, unknown)
        count = len(call.alternatives)
        if count < 2 or base.error is not None or base.alternative is not None:
            return [base]  # one arm only, or the outcome is known (an Outcome was returned)
        if tool.outcomes or tool.latent:
            names = tool.outcomes or tuple(
                " && ".join(str(ref) for ref in option) for option in call.alternatives
            )
            return [
                Branch(str(name), base.value, k, source=base.source, why=base.why)
                for k, name in enumerate(names)
            ]
        error = {"type": "SimulatedFailure", "message": f"{tool.name} failed (simulated)"}
        return [base, Branch("error arm", None, None, error, "simulated")]

    def _item(self, item: Any, call: Call, tool: Tool) -> Branch:
        if isinstance(item, BaseException):
            return Branch(f"raises {type(item).__name__}", None, None, _error_of(item))
        if isinstance(item, Outcome):
            return self._outcome(item, call, tool, "stub")
        return Branch(None, item, None)

    def _outcome(self, outcome: Outcome, call: Call, tool: Tool, source: str) -> Branch:
        k = tool.outcomes.index(outcome.k) if outcome.k in tool.outcomes else outcome.k
        label = str(outcome.k) if isinstance(outcome.k, str) else self.alternative_label(call, k)
        return Branch(label, outcome.value, k if isinstance(k, int) else None, source=source)

    @staticmethod
    def alternative_label(call: Call, k: Any) -> str:
        """The output path of alternative ``k`` of ``call`` (``result`` when there is none)."""
        alternatives = call.alternatives
        if isinstance(k, int) and 0 <= k < len(alternatives):
            return " && ".join(str(ref) for ref in alternatives[k])
        return "result"

    def _result(
        self,
        call: Call,
        tool: Tool,
        arguments: dict[str, Any],
        stub: Any,
        found: bool,
        unknown: bool = False,
    ) -> Branch:
        if found:
            value = stub
            if callable(stub) and not isinstance(stub, type):
                if unknown:
                    why = "its stub is a function of its arguments, and they are unknown"
                    return Branch(None, None, None, source="unknown", why=why)
                try:
                    value = stub(dict(arguments))
                except Exception as exc:
                    return Branch(f"raises {type(exc).__name__}", None, None, _error_of(exc))
            if isinstance(value, Outcome):
                return self._outcome(value, call, tool, "stub")
            return Branch(None, value, None, source="stub")
        if tool.pure and tool.function is not None:
            if unknown:
                why = "a pure tool, not run: its arguments are unknown"
                return Branch(None, None, None, source="unknown", why=why)
            ran = self._run_pure(call, tool, arguments)
            if ran is not None:
                return ran
        if tool.output_schema is None:
            self.notes[tool.name] = "no output schema and no stub: its value is unknown"
            why = "no output schema and no stub"
            return Branch(None, None, None, source="unknown", why=why)
        sampler = self._samplers.get(tool.name)
        if sampler is None:
            sampler = self._samplers[tool.name] = SchemaSampler(tool.output_schema)
        try:
            value = sampler.sample(random.Random(f"{self.seed}:{call.index}:{tool.name}"))
        except (UsageError, RecursionError) as exc:
            self.notes[tool.name] = (
                f"its output schema cannot be satisfied here ({exc}); give a stub"
            )
            why = "no value fits its output schema here, and no stub"
            return Branch(None, None, None, source="unknown", why=why)
        self.generated = True
        return Branch(None, value, None, source="generated")

    def _run_pure(self, call: Call, tool: Tool, arguments: dict[str, Any]) -> Branch | None:
        """Run a pure tool for real; ``None`` when it cannot run here (an async tool
        inside a running event loop)."""
        function: Callable[..., Any] | None = tool.function
        assert function is not None
        try:
            validated = tool.validate_arguments(arguments)
            result = function(**validated)
            if inspect.isawaitable(result):
                try:
                    asyncio.get_running_loop()
                except RuntimeError:
                    result = asyncio.run(_await(result))
                else:
                    if inspect.iscoroutine(result):
                        result.close()
                    return None
        except Exception as exc:
            return Branch(f"raises {type(exc).__name__}", None, None, _error_of(exc), "pure")
        if isinstance(result, Outcome):
            return self._outcome(result, call, tool, "pure")
        return Branch(None, result, None, source="pure")


async def _await(awaitable: Any) -> Any:
    return await awaitable
