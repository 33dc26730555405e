"""Check each call's arguments against its tool's parameters (docs/diagnostics.md).

Names a tool does not take, and literal values that do not fit their parameter's
schema, are ``invalid_argument``; required parameters a call leaves out are ``missing_argument``.
Literal arguments (``††`` unescaped) are validated in one batch per tool before the
per-call checks run; arguments holding references are typed later, against what
their writers produce (``type_mismatch``, in check.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from obelisk.errors import ArgumentProblem
from obelisk.grammar import Escaped
from obelisk.interpreter.plan.call import Collector
from obelisk.interpreter.plan.model import Call, format_argument_path
from obelisk.interpreter.plan.parse import PartialPlan
from obelisk.interpreter.tools.tool import Tool

__all__ = ["ArgumentChecks"]


class ArgumentChecks:
    """The argument checks of one plan: :meth:`validate` every call's literals once,
    then :meth:`check` each call, which reports into ``out``."""

    def __init__(self, out: Collector, partial: PartialPlan | None) -> None:
        self.fail = out.fail
        self.partial = partial
        self._parameters: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {}
        self._literal_problems: dict[int, list[ArgumentProblem]] = {}  # validate

    def literals(self, call: Call, tool: Tool) -> dict[str, Any]:
        """The arguments of ``call`` to validate against ``tool`` now: literals (``††``
        unescaped) of names the tool may take; references are typed by check_type."""
        known = (self._parameters.get(tool.name) or self.parameters_of(tool))[0]
        extra = tool.accepts_extra
        # leave out the arguments with references, and those whose expressions did not parse
        skip: list[str] = []
        for arg in call.expressions:
            if not isinstance(arg.expression, Escaped):
                skip.append(str(arg.path[0]))
        partial = self.partial
        if partial is not None and partial.unchecked:
            skip.extend(partial.unchecked.get(call.index, ()))
        literals: dict[str, Any] = {}
        for name, value in call.arguments.items():
            if name in skip or not (extra or name in known):
                continue
            kind = type(value)
            if kind is str:  # unescape what is left (containers: a recursive copy)
                literals[name] = value[1:] if value.startswith("††") else value
            elif kind in _SCALARS:
                literals[name] = value
            else:
                literals[name] = _unescape(value)
        return literals

    def validate(self, calls: Sequence[Call], tools: Sequence[Tool | None]) -> None:
        """Validate the literal arguments of every call, one batch per tool
        (``Tool.validate_literals``); :meth:`check` reports what is found."""
        stand_ins = self.partial.stand_ins if self.partial is not None else frozenset()
        batches: dict[str, tuple[Tool, list[int], list[dict[str, Any]]]] = {}
        for call, tool in zip(calls, tools, strict=True):
            if tool is None or call.index in stand_ins:
                continue
            literals = self.literals(call, tool)
            if literals:
                batch = batches.get(tool.name)  # (not setdefault: no batch made per call)
                if batch is None:
                    batch = batches[tool.name] = (tool, [], [])
                batch[1].append(call.index)
                batch[2].append(literals)
        for tool, indexes, values in batches.values():
            for index, problems in zip(indexes, tool.validate_literals(values), strict=True):
                if problems:
                    self._literal_problems[index] = problems

    def parameters_of(self, tool: Tool) -> tuple[frozenset[str], tuple[str, ...]]:
        """The tool's parameter names as a set, and its required ones in order."""
        facts = self._parameters.get(tool.name)
        if facts is None:
            names = tool.parameter_names
            facts = (frozenset(names), tuple(name for name in names if name in tool.required))
            self._parameters[tool.name] = facts
        return facts

    def check(self, call: Call, tool: Tool) -> None:
        """Report ``call``'s unexpected, invalid and missing arguments."""
        known, required = self._parameters.get(tool.name) or self.parameters_of(tool)
        problems = self._literal_problems.get(call.index)
        if problems is None and (tool.accepts_extra or known.issuperset(call.arguments)):
            # the common case: no argument to report on, only missing ones to look for
            for name in required:
                if name not in call.arguments:
                    self.missing_argument(call, tool, name)
            return
        found: dict[str, list[ArgumentProblem]] = {}
        for problem in problems or ():
            found.setdefault(str(problem.loc[0]), []).append(problem)
        for name in call.arguments:
            if name not in tool.parameter_names and not tool.accepts_extra:
                takes = ", ".join(tool.parameter_names) or "no arguments"
                close = difflib.get_close_matches(name, tool.parameter_names, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                self.fail(
                    "invalid_argument",
                    f"unexpected argument '{name}'; {hint}{tool.name} takes {takes}",
                    call,
                    format_argument_path((name,)),
                )
                continue
            for problem in found.get(name, ()):
                self.fail(
                    "invalid_argument", problem.message, call, format_argument_path(problem.loc)
                )
        for name in required:
            if name not in call.arguments:
                self.missing_argument(call, tool, name)

    def missing_argument(self, call: Call, tool: Tool, name: str) -> None:
        self.fail(
            "missing_argument",
            f"missing required argument '{name}' of {tool.name}",
            call,
            format_argument_path((name,)),
        )


_SCALARS = frozenset((int, float, bool, type(None)))  # what _unescape returns as it is


def _unescape(value: Any) -> Any:
    if isinstance(value, str):
        return value[1:] if value.startswith("††") else value
    if isinstance(value, list):
        return [_unescape(item) for item in value]
    if isinstance(value, dict):
        return {key: _unescape(item) for key, item in value.items()}
    return value
