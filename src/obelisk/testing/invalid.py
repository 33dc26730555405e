"""Near-miss plans, each tagged with the diagnostic code it must produce (docs/testing.md).

:func:`invalid_plans` takes a valid plan from :func:`~obelisk.testing.plans` and
adds one mistake; :class:`InvalidPlan` carries the plan and its code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import strategies as st

from obelisk.diagnostics import DIAGNOSTIC_CODES, DiagnosticCode
from obelisk.errors import UsageError
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.interpreter.tools.tool import Tool
from obelisk.testing.plans import _Catalog, _check_counts, _escape, _Parameter, _plans, _ToolInfo
from obelisk.testing.schemas import inline_refs, known_types

__all__ = ["INVALID_CODES", "InvalidPlan", "invalid_plans"]

_MADE: frozenset[DiagnosticCode] = frozenset(
    {
        "json_syntax",
        "plan_shape",
        "reference_syntax",
        "unknown_tool",
        "invalid_argument",
        "missing_argument",
        "invalid_output",
        "outcome_mismatch",
        "unresolved_reference",
        "readonly_target",
        "dependency_cycle",
        "type_mismatch",
    }
)

#: The diagnostic codes :func:`invalid_plans` can produce, in the order of
#: :data:`obelisk.diagnostics.DIAGNOSTIC_CODES` (docs/diagnostics.md).
INVALID_CODES: tuple[DiagnosticCode, ...] = tuple(c for c in DIAGNOSTIC_CODES if c in _MADE)


@dataclass(frozen=True)
class InvalidPlan:
    """A near-miss plan drawn by :func:`invalid_plans` (docs/testing.md).

    ``plan``: decoded JSON (a list of calls, or a plan object for some
    ``plan_shape`` cases), or JSON text for ``json_syntax``; ``input``: as for
    :class:`GeneratedPlan`; ``code``: the one diagnostic code ``check`` reports as
    an error; ``tools``: the registry.
    """

    plan: Any
    input: Any
    code: str
    tools: Registry = field(repr=False)

    def check(self) -> CheckResult:
        """``obelisk.check(self.plan, self.tools, input=self.input)``."""
        return check(self.plan, self.tools, input=self.input)


_WRONG_VALUES: dict[str, Any] = {
    "null": None,
    "boolean": True,
    "integer": 7,
    "number": 0.5,
    "string": "not this",
    "array": [1, "x"],
    "object": {"not": "this"},
}
_BAD_EXPRESSIONS = ("†state..x", "†state.a | †state.b", "†state[]", "†state.*", "†state.a b")


def _fresh_call(draw: st.DrawFn, info: _ToolInfo, path: str | None) -> dict[str, Any]:
    call: dict[str, Any] = {"_tool": info.tool.name}
    for parameter in info.parameters:
        if parameter.required:
            call[parameter.name] = parameter.literal(draw)
    if path is not None:
        if info.tool.outcomes:
            path = " || ".join(f"{path}_{j}" for j in range(len(info.tool.outcomes)))
        call["_outputPath"] = path
    if info.latent_outputs is not None and (path is None or " || " not in path):
        # a latent call whose path lists alternatives stays pending (ambiguous_output)
        call["_output"] = info.latent_outputs.value(draw)
    return call


def _wrong_value(parameter: _Parameter, tool: Tool) -> Any:
    for value in _WRONG_VALUES.values():
        if tool.validate_argument(parameter.name, value):
            return _escape(value)
    return None


def _pick(draw: st.DrawFn, items: Sequence[Any]) -> Any:
    return items[draw(st.integers(0, len(items) - 1))]


def _wrong_arguments(tools: Sequence[_ToolInfo]) -> list[tuple[_ToolInfo, _Parameter, Any]]:
    """Each parameter with a value of the wrong type that its tool rejects."""
    wrong = []
    for info in tools:
        for parameter in info.parameters:
            value = _wrong_value(parameter, info.tool)
            if value is not None:
                wrong.append((info, parameter, value))
    return wrong


def _object_free(tools: Sequence[_ToolInfo]) -> list[tuple[_ToolInfo, _Parameter]]:
    """The parameters whose schema's known types leave objects out."""
    return [
        (i, p)
        for i in tools
        for p in i.parameters
        if (types := known_types(p.schema)) is not None and "object" not in types
    ]


class _Mutator:
    """Which codes a registry allows, and how to make each one: most add one new
    call with a mistake (``_NEW_CALL``), the others rewrite the plan (``_REWRITES``)."""

    def __init__(self, catalog: _Catalog) -> None:
        self.catalog = catalog
        tools = catalog.tools
        self.closed = [i for i in tools if not i.tool.accepts_extra]
        self.with_required = [i for i in tools if any(p.required for p in i.parameters)]
        self.wrong = _wrong_arguments(tools)
        self.with_parameter = [i for i in tools if i.parameters]
        self.plain = [i for i in tools if not i.tool.outcomes]
        self.latent_typed = [i for i in tools if i.tool.latent and i.tool.output_schema is not None]
        self.with_outcomes = [i for i in tools if i.tool.outcomes]
        self.object_free = _object_free(tools)

    def available(self) -> list[str]:
        possible = {
            "json_syntax": True,
            "plan_shape": True,
            "reference_syntax": True,
            "unknown_tool": True,
            "invalid_argument": bool(self.closed or self.wrong),
            "missing_argument": bool(self.with_required),
            "invalid_output": bool(self.latent_typed),
            "outcome_mismatch": bool(self.with_outcomes),
            "unresolved_reference": bool(self.with_parameter),
            "readonly_target": True,
            "dependency_cycle": bool(self.with_parameter),
            "type_mismatch": bool(self.object_free and self.plain),
        }
        return [code for code in INVALID_CODES if possible[code]]

    def mutate(self, draw: st.DrawFn, code: str, calls: list[Any]) -> Any:
        """``calls`` (a valid plan's) with one mistake of ``code``."""
        at = draw(st.integers(0, len(calls)))  # where a new call goes
        if code in self._NEW_CALL:
            calls.insert(at, self._NEW_CALL[code](self, draw))
            return calls
        if code in self._REWRITES:
            return self._REWRITES[code](self, draw, calls, at)
        raise UsageError(f"invalid_plans cannot produce {code!r}")  # pragma: no cover

    # -- the plan rewritten -------------------------------------------------------

    def _json_syntax(self, draw: st.DrawFn, calls: list[Any], at: int) -> Any:
        text = json.dumps(calls, ensure_ascii=False)
        return _pick(draw, [text[:-1], text[:-1] + ",]", text.replace("[", "[,", 1)])

    def _plan_shape(self, draw: st.DrawFn, calls: list[Any], at: int) -> Any:
        choice = draw(st.integers(0, 2))
        if choice == 0:
            return {"calls": calls, "version": 2}
        if choice == 1:
            return {"calls": calls, "mode": "fast"}
        calls.insert(at, _pick(draw, [42, "call", None, []]))
        return calls

    def _dependency_cycle(self, draw: st.DrawFn, calls: list[Any], at: int) -> Any:
        first, second = _pick(draw, self.with_parameter), _pick(draw, self.with_parameter)
        one = _fresh_call(draw, first, "†state.cycle_a")
        two = _fresh_call(draw, second, "†state.cycle_b")
        # nested in a list, a reference is neither validated nor type-checked
        one[_pick(draw, first.parameters).name] = ["†state.cycle_b" + self._arm(second)]
        two[_pick(draw, second.parameters).name] = ["†state.cycle_a" + self._arm(first)]
        calls.insert(at, one)
        calls.insert(draw(st.integers(0, len(calls))), two)
        return calls

    def _type_mismatch(self, draw: st.DrawFn, calls: list[Any], at: int) -> Any:
        producer = _pick(draw, self.plain)
        info, parameter = _pick(draw, self.object_free)
        made = _fresh_call(draw, producer, "†state.made || †state.made_error")
        reader = _fresh_call(draw, info, None)
        reader[parameter.name] = "†state.made_error"  # the error arm is an object
        calls.insert(at, made)
        calls.insert(draw(st.integers(0, len(calls))), reader)
        return calls

    # -- one new call with a mistake ----------------------------------------------

    def _reference_syntax(self, draw: st.DrawFn) -> dict[str, Any]:
        call = _fresh_call(draw, _pick(draw, self.catalog.tools), None)
        call["_outputPath"] = _pick(
            draw, ["state.out", "†state.out[*]", "††state.out", "†state..x"]
        )
        return call

    def _unknown_tool(self, draw: st.DrawFn) -> dict[str, Any]:
        info = _pick(draw, self.catalog.tools)
        call = _fresh_call(draw, info, None)
        names = self.catalog.registry
        name = info.tool.name + "_v2"
        while name in names:
            name += "_"
        call["_tool"] = name
        return call

    def _invalid_argument(self, draw: st.DrawFn) -> dict[str, Any]:
        if self.wrong and (not self.closed or draw(st.booleans())):
            info, parameter, value = _pick(draw, self.wrong)
            call = _fresh_call(draw, info, None)
            call[parameter.name] = value
            return call
        info = _pick(draw, self.closed)
        call = _fresh_call(draw, info, None)
        name = "unexpected"
        while name in info.tool.parameter_names:
            name += "_"
        call[name] = 1
        return call

    def _missing_argument(self, draw: st.DrawFn) -> dict[str, Any]:
        info = _pick(draw, self.with_required)
        call = _fresh_call(draw, info, None)
        del call[_pick(draw, [p.name for p in info.parameters if p.required])]
        return call

    def _invalid_output(self, draw: st.DrawFn) -> dict[str, Any]:
        info = _pick(draw, self.latent_typed)
        call = _fresh_call(draw, info, None)
        types = known_types(inline_refs(info.tool.output_schema))
        value = next((v for v in _WRONG_VALUES.values() if info.tool.validate_output(v)), None)
        if value is None or types is None:
            value = _WRONG_VALUES["string"] if "string" not in (types or ()) else 7
        call["_output"] = value
        return call

    def _outcome_mismatch(self, draw: st.DrawFn) -> dict[str, Any]:
        info = _pick(draw, self.with_outcomes)
        call = _fresh_call(draw, info, None)
        count = len(info.tool.outcomes)
        wrong = _pick(draw, [n for n in (1, count + 1) if n != count])
        call["_outputPath"] = " || ".join(f"†state.mismatch_{j}" for j in range(wrong))
        return call

    def _unresolved_reference(self, draw: st.DrawFn) -> dict[str, Any]:
        info = _pick(draw, self.with_parameter)
        call = _fresh_call(draw, info, None)
        call[_pick(draw, info.parameters).name] = _pick(
            draw, ["†state.never_written", "†state.never_written.x", "†data.nowhere"]
        )
        return call

    def _readonly_target(self, draw: st.DrawFn) -> dict[str, Any]:
        return _fresh_call(draw, _pick(draw, self.catalog.tools), "†input.written")

    @staticmethod
    def _arm(info: _ToolInfo) -> str:
        return "_0" if info.tool.outcomes else ""

    _NEW_CALL: ClassVar[dict[str, Callable[[_Mutator, st.DrawFn], dict[str, Any]]]] = {
        "reference_syntax": _reference_syntax,
        "unknown_tool": _unknown_tool,
        "invalid_argument": _invalid_argument,
        "missing_argument": _missing_argument,
        "invalid_output": _invalid_output,
        "outcome_mismatch": _outcome_mismatch,
        "unresolved_reference": _unresolved_reference,
        "readonly_target": _readonly_target,
    }
    _REWRITES: ClassVar[dict[str, Callable[[_Mutator, st.DrawFn, list[Any], int], Any]]] = {
        "json_syntax": _json_syntax,
        "plan_shape": _plan_shape,
        "dependency_cycle": _dependency_cycle,
        "type_mismatch": _type_mismatch,
    }


@st.composite
def _invalid_plans(
    draw: st.DrawFn,
    catalog: _Catalog,
    mutator: _Mutator,
    codes: list[str],
    input_schema: Any,
    max_calls: int,
) -> InvalidPlan:
    base = draw(_plans(catalog, input_schema, 0, max_calls, True, False, False))
    code = draw(st.sampled_from(codes))
    plan = mutator.mutate(draw, code, list(base.plan))
    return InvalidPlan(plan, base.input, code, catalog.registry)


def invalid_plans(
    tools: ToolsLike,
    input_schema: Mapping[str, Any] | None = None,
    max_calls: int = 5,
    *,
    codes: Iterable[str] | None = None,
) -> st.SearchStrategy[InvalidPlan]:
    """Near-miss plans, each an :class:`InvalidPlan` tagged with the one error code
    ``obelisk.check`` reports for it (docs/testing.md, docs/diagnostics.md).

    Each is a valid plan from :func:`plans` (up to ``max_calls`` calls) with one
    mistake added, where the registry allows it: broken JSON text
    (``json_syntax``), a plan object with a bad key or a call that is not an object
    (``plan_shape``), a bad output path (``reference_syntax``), a misspelt tool
    (``unknown_tool``), a wrong-typed or unexpected argument (``invalid_argument``),
    a dropped required argument (``missing_argument``), a latent ``_output`` of
    the wrong type (``invalid_output``), the wrong number of alternatives for a
    tool with outcomes (``outcome_mismatch``), a read of a path nothing writes
    (``unresolved_reference``), a write to ``†input`` (``readonly_target``), two
    calls reading each other (``dependency_cycle``), an error arm (an object) fed
    to a parameter that takes no object (``type_mismatch``).

    ``codes`` restricts the codes drawn (default: every one in
    :data:`INVALID_CODES` that the registry allows).  Raises
    :class:`~obelisk.errors.UsageError` for a code it cannot produce with these tools.
    """
    _check_counts(0, max_calls)
    registry = Registry.coerce(tools)
    catalog = _Catalog(registry, True)
    mutator = _Mutator(catalog)
    possible = mutator.available()
    chosen = list(possible if codes is None else codes)
    for code in chosen:
        if code not in INVALID_CODES:
            raise UsageError(f"invalid_plans knows no code {code!r}; it makes {INVALID_CODES}")
        if code not in possible:
            raise UsageError(
                f"invalid_plans cannot make {code!r} with the tools {registry.names()}"
            )
    if not chosen:
        raise UsageError("codes must name at least one diagnostic code")
    return _invalid_plans(catalog, mutator, chosen, input_schema, max_calls)
