"""Check a plan against its tools and data; collect every diagnostic (docs/diagnostics.md).

:func:`check` never raises for a bad plan: it returns a :class:`CheckResult`
whose ``diagnostics`` list every problem, errors and warnings alike, in a
stable order (by call, then argument path, then code).  ``result.ok`` tells
whether the plan may run; :meth:`CheckResult.raise_for_errors` turns errors
into one :class:`~obelisk.errors.PlanError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Literal

from obelisk.diagnostics import Collector, Diagnostic, limit_per_code, sort_diagnostics
from obelisk.errors import UsageError
from obelisk.grammar import (
    Alternatives,
    Reference,
    path_exists,
)
from obelisk.interpreter.analysis.arguments import ArgumentChecks
from obelisk.interpreter.analysis.conflicts import report_conflicts
from obelisk.interpreter.analysis.graph import PlanGraph, Read, Write
from obelisk.interpreter.analysis.reference_types import ERROR_ARM_SCHEMA, ReferenceTypes
from obelisk.interpreter.analysis.result import CheckBasis, CheckResult
from obelisk.interpreter.analysis.suggestions import ABSENT, did_you_mean
from obelisk.interpreter.analysis.trust import (
    ApprovalNeed,
    StaticLabels,
    approvals_required,
    labels_in_play,
)
from obelisk.interpreter.plan.collector import gc_paused
from obelisk.interpreter.plan.model import Call, Plan, format_argument_path
from obelisk.interpreter.plan.parse import PartialPlan, parse_partial
from obelisk.interpreter.tools.delegation import (
    DelegateRegistry,
    tools_problems,
    withheld_message,
)
from obelisk.interpreter.tools.policies import InputLabels, PolicyMode, input_label_pairs
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.interpreter.tools.standard_names import standard_tool_hint
from obelisk.interpreter.tools.tool import Tool
from obelisk.json_values import preview
from obelisk.limits import DEFAULT_LIMITS, Limits

__all__ = ["ERROR_ARM_SCHEMA", "check"]

_WRITABLE_HINT = "write to †state or a data kind instead"


def _exists_outside(input: Any, state: Any, data: Mapping[str, Any]) -> Callable[[Reference], bool]:
    """Does a path exist before the plan runs (in the input, the starting state, the
    data)?  ``input=None`` means the input is not known: every input path may exist."""

    def exists(reference: Reference) -> bool:
        if reference.kind == "input":
            return input is None or path_exists(input, reference)
        if reference.kind == "state":
            return path_exists(state, reference)
        return reference.kind in data and path_exists(data[reference.kind], reference)

    return exists


def _resolver(
    exists_outside: Callable[[Reference], bool], partial: PartialPlan | None
) -> Callable[[Read, tuple[Write, ...]], bool]:
    """Can a read be resolved: some call writes it (``sources``), or it exists before
    the plan, or (in a plan that did not wholly parse) a call whose output path did
    not parse may be the one meant to write it."""

    def resolvable(read: Read, sources: tuple[Write, ...]) -> bool:
        if sources or exists_outside(read.reference):
            return True
        return partial is not None and partial.unknown_writes and read.reference.kind != "input"

    return resolvable


class _Checker:
    def __init__(
        self,
        plan: Plan,
        registry: Registry | None,
        input: Any,
        state: Any,
        data: Mapping[str, Any],
        partial: PartialPlan | None = None,
        mode: Literal["eager", "lazy"] | None = None,
        trust: tuple[PolicyMode | None, InputLabels] = ("off", ()),
    ) -> None:
        self.plan = plan
        self.trust = trust
        self.approval_load: tuple[ApprovalNeed, ...] = ()
        self.calls = plan.calls
        self.partial = partial
        self.mode = mode if mode is not None else plan.mode
        self.registry = registry
        self.input = input
        self.state = state if state is not None else {}
        self.data = data
        self.out = Collector(plan.diagnostics)
        self.fail = self.out.fail
        # a function of the documents, not a method: the graph keeps it, and must not
        # keep the checker alive in a cycle that only the garbage collector frees
        self.exists_outside = _exists_outside(input, self.state, data)
        self.graph = PlanGraph(plan, self.exists_outside, self.effects_of)
        # each call's tool, looked up once per name (None: unknown, or no registry)
        if registry is not None:
            named = {name: registry.get(name) for name in {call.tool for call in plan.calls}}
            self.tools: list[Tool | None] = [named[call.tool] for call in plan.calls]
        else:
            self.tools = [None] * len(plan.calls)
        self.arguments = ArgumentChecks(self.out, partial)
        self.resolvable = _resolver(self.exists_outside, partial)
        self.types = ReferenceTypes(self.out, self.calls, self.tools, self.resolvable)
        self.judge_read, self.check_read = self.types.judge, self.types.check  # bound once
        # unresolved_reference diagnostics (by id) whose "did you mean" is still to find
        self.unsuggested: dict[int, Reference] = {}

    def effects_of(self, tool_name: str) -> dict[str, str]:
        """The world resources a tool touches (``{}`` for unknown tools)."""
        tool = self.registry.get(tool_name) if self.registry is not None else None
        return tool.effects if tool is not None else {}

    # -- where a path comes from ---------------------------------------------
    def unresolved_message(self, reference: Reference, instance: str | None) -> tuple[str, bool]:
        """The message of an unresolved ``reference``, and whether a "did you mean"
        may follow it (not when it is written under another instance)."""
        kind = reference.kind
        if kind == "input":
            text = f"{reference} is not in the input"
        elif kind == "state":
            text = f"nothing in the plan writes {reference}, and the state does not hold it"
        elif kind in self.data:
            text = f"nothing in the plan writes {reference}, and the '{kind}' data does not hold it"
        else:
            text = f"nothing in the plan writes {reference}, and no '{kind}' document was given"
        hidden = sorted(
            {
                self.plan.calls[w.call].label
                for w in self.graph.index.overlapping(reference.key)
                if w.instance is not None and w.instance != instance
            }
        )
        if hidden:
            seen_by = f"instance '{instance}'" if instance is not None else "calls without one"
            return (
                f"{reference} is written only under another _instance ({', '.join(hidden)}), "
                f"which {seen_by} cannot see"
            ), False
        return text, True

    def suggestion(self, reference: Reference) -> str:
        """``"; did you mean †state.receipt?"`` (:func:`did_you_mean`), or ``""``."""
        kind = reference.kind
        document = (
            self.input
            if kind == "input"
            else self.state
            if kind == "state"
            else self.data.get(kind, ABSENT)
        )
        return did_you_mean(reference, self.graph.writes, document)

    # -- per call --------------------------------------------------------------
    def check_call(self, call: Call, tool: Tool | None) -> None:
        """Every check of one call; ``tool`` is its tool (None when unknown)."""
        partial = self.partial
        if partial is not None and call.index in partial.stand_ins:
            return  # could not be read at all: its parse errors say why
        if tool is not None:  # its arguments, outcomes and _output against the tool
            self.arguments.check(call, tool)
            if tool.outcomes:
                self.check_outcomes(call, tool)
            if call.has_output and (
                partial is None or "_output" not in partial.unchecked.get(call.index, ())
            ):
                self.check_output(call, tool)
        elif self.registry is not None:
            self.report_unknown_tool(call, self.registry)
        if "_tools" in call.written_meta and self.registry is not None:
            self.check_delegate_tools(call, tool, self.registry)
        # (tools unknown, registry None: nothing to check the tool against)
        target = call.target  # the common case, one path outside the input: nothing to say
        if target is not None and (type(target) is not Reference or target.kind == "input"):
            self.check_target(call)
        self.check_reads(call, tool)

    def check_delegate_tools(self, call: Call, tool: Tool | None, registry: Registry) -> None:
        """``invalid_tools`` for a ``_tools`` of the wrong shape, naming unknown tools,
        or on a call whose tool is not a delegate (docs/loop.md, "Delegates")."""
        if tool is not None and not tool.delegate:
            self.fail(
                "invalid_tools",
                f"'{tool.name}' is not a delegate: _tools applies to delegate calls only",
                call,
                "_tools",
            )
            return
        for problem in tools_problems(call.delegate_tools, registry):
            self.fail("invalid_tools", problem.message, call, problem.path)

    def report_unknown_tool(self, call: Call, registry: Registry) -> None:
        """``unknown_tool``, with a close name, a standard tool's hint, or the note that
        no tools are registered; in a delegate's child loop, a tool its ``_tools``
        withholds is named as such."""
        if isinstance(registry, DelegateRegistry) and call.tool in registry.withheld:
            self.fail("unknown_tool", withheld_message(call.tool, registry), call, "_tool")
            return
        close = registry.suggest(call.tool)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        if not len(registry):
            hint = "; no tools are registered"
        hint = standard_tool_hint(call.tool) or hint
        self.fail("unknown_tool", f"unknown tool '{call.tool}'{hint}", call, "_tool")

    def check_target(self, call: Call) -> None:
        """``readonly_target`` for each output path into the input."""
        target = call.target
        if target is None:
            return
        refs = (target,) if type(target) is Reference else target.references
        for ref in refs:
            if ref.kind == "input":
                self.fail(
                    "readonly_target",
                    f"cannot write to {ref}: the input is read-only; {_WRITABLE_HINT}",
                    call,
                    "_outputPath",
                    ref.span,
                    call.output_path,
                )

    def check_output(self, call: Call, tool: Tool) -> None:
        """A call's ``_output``: it fits the output schema; a lazy plan never carries
        one; a latent call's ``_output`` goes to one concrete path."""
        if self.mode == "lazy":
            self.fail(
                "lazy_output",
                "a lazy plan does not carry _output: the latent call is answered after the "
                "plan is approved; leave _output out",
                call,
                "_output",
            )
            return
        for problem in tool.validate_output(call.output):
            where = format_argument_path(tuple(problem.loc), "_output")
            self.fail("invalid_output", problem.message, call, where)
        if tool.latent and len(call.alternatives) > 1 and call.target is not None:
            self.fail(
                "ambiguous_output",
                f"_output is written to one path, but the output path has "
                f"{len(call.alternatives)} alternatives; write the one you chose, "
                f"such as {call.alternatives[0][0]}",
                call,
                "_outputPath",
                call.target.span,
                call.output_path,
            )

    def check_outcomes(self, call: Call, tool: Tool) -> None:
        """A tool that declares outcomes needs one alternative per outcome."""
        if not tool.outcomes or call.target is None:
            return
        count = len(call.alternatives)
        if count == len(tool.outcomes):
            return
        names = ", ".join(tool.outcomes)
        self.fail(
            "outcome_mismatch",
            f"{tool.name} declares {len(tool.outcomes)} outcomes ({names}), but the output "
            f"path has {count} alternative{'s' if count != 1 else ''}; write one "
            "alternative per outcome, in that order, joined by '||'",
            call,
            "_outputPath",
            call.target.span,
            call.output_path,
        )

    def check_reads(self, call: Call, tool: Tool | None) -> None:
        """Every read of ``call``, one argument expression at a time."""
        reads = self.graph.reads[call.index]
        sources = self.graph.sources[call.index]
        start, count = 0, len(reads)
        judge, check = self.judge_read, self.check_read
        while start < count:  # reads of one argument expression are contiguous
            read = reads[start]
            argument = read.argument
            feeding = sources[start]
            if type(argument.expression) is Reference and feeding:
                # the common case: one reference, which some call writes (often one)
                typed = tool if len(argument.path) == 1 else None
                (judge if len(feeding) == 1 else check)(call, typed, read, feeding)
                start += 1
                continue
            end = start + 1
            while end < count and reads[end].argument is argument:
                end += 1
            if isinstance(argument.expression, Alternatives):
                self.check_fallback(call, argument.expression, reads[start:end], sources[start:end])
            else:
                self.check_references(call, tool, reads[start:end], sources[start:end])
            start = end

    def check_fallback(
        self,
        call: Call,
        expression: Alternatives,
        reads: tuple[Read, ...],
        sources: tuple[tuple[Write, ...], ...],
    ) -> None:
        """``unresolved_reference`` when no option of a ``||`` fallback can ever exist
        (``reads``: the references of its options)."""
        options: dict[int, bool] = {}
        for read, feeding in zip(reads, sources, strict=True):
            ok = self.resolvable(read, feeding)
            options[read.option] = options.get(read.option, True) and ok
        if not any(options.values()):
            argument = reads[0].argument
            self.fail(
                "unresolved_reference",
                f"no alternative of {expression} can ever exist",
                call,
                argument.argument_path,
                expression.span,
                argument.text,
            )

    def check_references(
        self,
        call: Call,
        tool: Tool | None,
        reads: tuple[Read, ...],
        sources: tuple[tuple[Write, ...], ...],
    ) -> None:
        """The references of one argument expression (no fallback): each resolves, and
        each that some call writes is typed (against ``tool`` for a whole argument)."""
        argument = reads[0].argument
        whole = argument.is_whole_argument and isinstance(argument.expression, Reference)
        for read, feeding in zip(reads, sources, strict=True):
            if not self.resolvable(read, feeding):
                self.report_unresolved(call, read)
            elif feeding:
                self.types.check(call, tool if whole else None, read, feeding)

    def report_unresolved(self, call: Call, read: Read) -> None:
        """``unresolved_reference`` for ``read``; its "did you mean" is looked for once
        it is sure to show (:meth:`reported`)."""
        argument = read.argument
        message, suggest = self.unresolved_message(read.reference, call.instance)
        self.fail(
            "unresolved_reference",
            message,
            call,
            argument.argument_path,
            read.reference.span,
            argument.text,
        )
        if suggest:
            self.unsuggested[id(self.out.diagnostics[-1])] = read.reference

    # -- whole plan ------------------------------------------------------------
    def check_graph(self) -> None:
        calls = self.plan.calls
        for index, target in self.graph.unknown_after:
            call = calls[index]
            if target == call.id or target == index:
                why = "a call cannot come after itself"
            else:
                why = f"no call has the _id {preview(target)}"
                if type(target) is int:
                    why += f", and the plan has no call #{preview(target)}"
            self.fail("unknown_call", f"_after names {preview(target)}: {why}", call, "_after")
        for cycle in self.graph.cycles:
            walk = " -> ".join(calls[node].label for node in cycle)
            self.fail("dependency_cycle", f"dependency cycle: {walk}", calls[cycle[0]])
        for node, reason in sorted(self.graph.unreachable.items()):
            self.fail(
                "unreachable_call",
                f"this call can never run: {reason}",
                calls[node],
                severity="warning",
            )
        report_conflicts(self.graph, self.out)

    def run(self) -> CheckResult:
        if self.registry is not None:
            self.arguments.validate(self.plan.calls, self.tools)
        for call, tool in zip(self.plan.calls, self.tools, strict=True):
            self.check_call(call, tool)
        self.check_graph()
        self.check_flows()
        return CheckResult(self.plan, self.graph, sort_diagnostics(self.out.diagnostics))

    def check_flows(self) -> None:
        """``untrusted_flow`` for each flow a policy would stop (an error where it
        denies, a warning where it asks), and the approval load (docs/diagnostics.md)."""
        policy, input_labels = self.trust
        if policy is None:
            return
        if not labels_in_play(policy, input_labels, self.tools):
            self.approval_load = approvals_required(self.calls, self.tools)
            return
        labels = StaticLabels(self.plan, self.graph, self.tools, policy, input_labels)
        for index, call in enumerate(self.calls):
            for flow in labels.flows(index):
                read = flow.read  # where the caret goes: the reference the data comes through
                where = (
                    (flow.argument, None, None)
                    if read is None
                    else (read.argument.argument_path, read.reference.span, read.argument.text)
                )
                severity: Literal["error", "warning"] = (
                    "error" if flow.action == "deny" else "warning"
                )
                self.fail("untrusted_flow", flow.message, call, *where, severity=severity)
        self.approval_load = labels.approval_load()

    def reported(self, diagnostics: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
        """``diagnostics`` (those :func:`limit_per_code` keeps) with the "did you mean"
        of each unresolved reference among them: a search over every written path,
        done for the diagnostics shown only (docs/limits.md)."""
        if not self.unsuggested:
            return diagnostics
        return tuple(
            dataclasses.replace(d, message=d.message + self.suggestion(reference))
            if (reference := self.unsuggested.get(id(d))) is not None
            else d
            for d in diagnostics
        )


def check(
    plan: Plan | str | bytes | list[Any] | dict[str, Any],
    tools: ToolsLike = None,
    input: Any = None,
    state: Any = None,
    *,
    data: Mapping[str, Any] | None = None,
    mode: Literal["eager", "lazy"] | None = None,
    limits: Limits | None = None,
    policy: PolicyMode | None = "off",
    input_labels: Mapping[str, Any] | None = None,
) -> CheckResult:
    """Check a plan: parse it if needed, build its graph and run every check of docs/diagnostics.md

    ``tools`` is anything :meth:`Registry.coerce` accepts (a Registry, a list of
    tools or functions, a name -> tool mapping, JSON tool descriptions).  With
    ``tools=None`` the tools are unknown: tool names, arguments and types are not
    checked (an empty ``Registry()`` instead makes every tool unknown).
    ``input`` is the input document; when None, ``†input`` references are not
    checked against it.  ``state`` is the state the plan starts from (default:
    empty).  ``data`` maps other data kinds (``"data"``, ...) to their documents.
    ``mode`` is how the plan will run (default: the plan's own ``mode``): a lazy
    plan may not carry ``_output`` (``lazy_output``).  ``limits`` (default
    :class:`~obelisk.Limits` ``()``) bounds reference length and argument nesting
    (``limit`` diagnostics) and how many diagnostics of one code are reported: the
    rest are summed up in one more of that code (docs/limits.md).  ``policy`` and
    ``input_labels`` are the run's, as ``obelisk.run`` takes them: the labels of the
    plan's data flow are worked out with them, and each flow a policy would stop is an
    ``untrusted_flow`` diagnostic; ``approval_load`` lists the calls that may need a
    person (docs/diagnostics.md; docs/security.md, "Decided before the run").
    ``policy=None`` leaves labels out of the check: ``obelisk.run`` and
    ``obelisk.simulate`` check a plan so and decide each call's policy as it runs.  Raises
    :class:`~obelisk.errors.UsageError` for a ``policy`` other than ``"off"``,
    ``"strict"`` or ``None``, and for bad ``input_labels``.

    Returns a :class:`CheckResult`; only :class:`~obelisk.errors.PlanError`-style
    diagnostics come back, no exception escapes for a bad plan.  Every problem is
    reported at once: when parts of the plan do not parse (``reference_syntax``,
    ``plan_shape``), the rest is still checked, and the result has ``plan`` and
    ``graph`` set to ``None`` (a plan with errors never runs), ``basis`` what it checked.
    """
    registry = None if tools is None else Registry.coerce(tools)
    limits = limits if limits is not None else DEFAULT_LIMITS
    per_code = limits.max_diagnostics_per_code
    basis = CheckBasis(registry, input, {} if state is None else state, data or {}, limits, mode)
    trust = (_policy(policy), input_label_pairs(input_labels))
    with gc_paused():
        if isinstance(plan, Plan):
            checker = _Checker(plan, registry, input, state, basis.data, mode=mode, trust=trust)
            checked = checker.run()
            diagnostics = checker.reported(limit_per_code(checked.diagnostics, per_code))
            return CheckResult(plan, checked.graph, diagnostics, basis, checker.approval_load)
        partial = parse_partial(plan, limits)
        if partial.plan is None:
            return CheckResult(None, None, limit_per_code(partial.diagnostics, per_code), basis)
        checker = _Checker(
            partial.plan, registry, input, state, basis.data, partial, mode=mode, trust=trust
        )
        checked = checker.run()
        diagnostics = checker.reported(limit_per_code(checked.diagnostics, per_code))
        if partial.ok:
            return CheckResult(
                checked.plan, checked.graph, diagnostics, basis, checker.approval_load
            )
        return CheckResult(None, None, diagnostics, basis)


def _policy(policy: Any) -> PolicyMode | None:
    """``policy`` checked: ``"off"``, ``"strict"`` or ``None``, else a :class:`UsageError`."""
    if policy not in ("off", "strict", None):
        raise UsageError(f"policy must be 'off' or 'strict', got {policy!r}")
    return policy  # type: ignore[no-any-return]
