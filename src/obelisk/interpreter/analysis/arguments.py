"""Check each call's arguments against its tool's parameters (docs/diagnostics.md).

Names a tool does not take, and literal values that do not fit their parameter's
schema, are ``invalid_argument``; required parameters a call leaves out are ``missing_argument``.
Literal arguments (``††`` unescaped) are validated in one batch per tool before the
per-call checks run; in an object or array argument that holds references, each
reference is masked by a value its place in the parameter's schema obviously admits,
so that the literal parts are validated too.  A reference that is a whole argument
is typed later, against what its writers produce (``type_mismatch``, in check.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from obelisk.diagnostics import Collector
from obelisk.errors import ArgumentProblem
from obelisk.grammar import Escaped
from obelisk.interpreter.analysis.schema_types import STAND_IN_UNKNOWN, stand_in_at
from obelisk.interpreter.plan.model import Call, format_argument_path
from obelisk.interpreter.plan.parse import PartialPlan
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import copy_json, nesting_depth

__all__ = ["ArgumentChecks"]


class ArgumentChecks:
    """The argument checks of one plan: :meth:`validate` every call's literals once,
    then :meth:`check` each call, which reports into ``out``."""

    def __init__(self, out: Collector, partial: PartialPlan | None) -> None:
        self.fail = out.fail
        self.partial = partial
        self._parameters: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {}
        self._literal_problems: dict[int, list[ArgumentProblem]] = {}  # validate
        self._masks: dict[tuple[str, str, tuple[str | int, ...]], Any] = {}  # masked

    def literals(self, call: Call, tool: Tool) -> dict[str, Any]:
        """The arguments of ``call`` to validate against ``tool`` now: literals (``††``
        unescaped) of names the tool may take; references are typed by check_type."""
        known = (self._parameters.get(tool.name) or self.parameters_of(tool))[0]
        extra = tool.accepts_extra
        skip, inside = self.expression_places(call)
        literals: dict[str, Any] = {}
        for name, value in call.arguments.items():
            if name in skip or not (extra or name in known):
                continue
            if inside is not None and name in inside:
                masked = self.masked(tool, name, value, inside[name])
                if masked is not STAND_IN_UNKNOWN:
                    literals[name] = masked
                continue
            kind = type(value)
            if kind is str:  # unescape what is left (containers: a recursive copy)
                literals[name] = value[1:] if value.startswith("††") else value
            else:
                literals[name] = value if kind in _SCALARS else _unescape(value)
        return literals

    def expression_places(
        self, call: Call
    ) -> tuple[list[str], dict[str, list[tuple[str | int, ...]]] | None]:
        """The arguments of ``call`` left out of its literals (those that are one
        expression, and those whose expressions did not parse), and the places of the
        expressions inside each other argument (None when there are none): they are
        masked."""
        skip: list[str] = []
        inside: dict[str, list[tuple[str | int, ...]]] | None = None
        for arg in call.expressions:
            if isinstance(arg.expression, Escaped):
                continue
            if len(arg.path) == 1:
                skip.append(str(arg.path[0]))
                continue
            if inside is None:
                inside = {}
            inside.setdefault(str(arg.path[0]), []).append(arg.path[1:])
        partial = self.partial
        if partial is not None and partial.unchecked:
            skip.extend(partial.unchecked.get(call.index, ()))
        return skip, inside

    def masked(self, tool: Tool, name: str, value: Any, places: list[tuple[str | int, ...]]) -> Any:
        """``value`` (argument ``name``, a literal object or array holding expressions
        at ``places``) unescaped, each expression replaced by a value its place in the
        parameter's schema obviously admits (:func:`stand_in_at`), so that the literal
        parts around it are validated; ``STAND_IN_UNKNOWN`` when some place has no
        obvious such value (the argument is then not validated here)."""
        schema = tool.parameter_schema(name)
        if schema is None or nesting_depth(value, _MASK_DEPTH) > _MASK_DEPTH:
            return STAND_IN_UNKNOWN  # too deep to copy (a recursive copy): left to the run
        copy = _unescape(value)
        for place in places:
            mask = self._masks.get((tool.name, name, place), _UNSEEN)
            if mask is _UNSEEN:
                mask = self._masks[tool.name, name, place] = stand_in_at(
                    schema, place, tool.parameters
                )
            if mask is STAND_IN_UNKNOWN:
                return STAND_IN_UNKNOWN
            holder = copy
            for step in place[:-1]:
                holder = holder[step]
            holder[place[-1]] = copy_json(mask)
        return copy

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
        if problems is not None or not (tool.accepts_extra or known.issuperset(call.arguments)):
            self.report_arguments(call, tool, problems or [])
        # (the common case: no argument to report on, only missing ones to look for)
        for name in required:
            if name not in call.arguments:
                self.missing_argument(call, tool, name)

    def report_arguments(self, call: Call, tool: Tool, problems: list[ArgumentProblem]) -> None:
        """``invalid_argument`` for each argument the tool does not take, and for each
        of ``problems`` (the literal arguments' validation), argument by argument."""
        found: dict[str, list[ArgumentProblem]] = {}
        for problem in problems:
            found.setdefault(str(problem.loc[0]), []).append(problem)
        for name in call.arguments:
            if name not in tool.parameter_names and not tool.accepts_extra:
                self.unexpected_argument(call, tool, name)
                continue
            for problem in found.get(name, ()):
                self.fail(
                    "invalid_argument", problem.message, call, format_argument_path(problem.loc)
                )

    def unexpected_argument(self, call: Call, tool: Tool, name: str) -> None:
        takes = ", ".join(tool.parameter_names) or "no arguments"
        close = difflib.get_close_matches(name, tool.parameter_names, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        self.fail(
            "invalid_argument",
            f"unexpected argument '{name}'; {hint}{tool.name} takes {takes}",
            call,
            format_argument_path((name,)),
        )

    def missing_argument(self, call: Call, tool: Tool, name: str) -> None:
        self.fail(
            "missing_argument",
            f"missing required argument '{name}' of {tool.name}",
            call,
            format_argument_path((name,)),
        )


_SCALARS = frozenset((int, float, bool, type(None)))  # what _unescape returns as it is
_UNSEEN = object()  # (ArgumentChecks._masks) not worked out yet
_MASK_DEPTH = 100  # levels: an argument nested deeper is not masked and validated at check time


def _unescape(value: Any) -> Any:
    if isinstance(value, str):
        return value[1:] if value.startswith("††") else value
    if isinstance(value, list):
        return [_unescape(item) for item in value]
    if isinstance(value, dict):
        return {key: _unescape(item) for key, item in value.items()}
    return value
