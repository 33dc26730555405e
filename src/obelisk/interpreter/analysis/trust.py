"""Labels decided at check time: the label of every argument of a plan, worked out over
its graph before anything runs, and the flows a policy would stop (docs/diagnostics.md,
``untrusted_flow``; docs/security.md, "Decided before the run").

The algebra is the run's (:mod:`obelisk.interpreter.tools.labels`,
:func:`obelisk.interpreter.tools.policies.decide`); what differs is that a check does
not know which writer, branch or fallback a run will take, so it joins them all:

- an argument's label is the join, over every reference its expressions read (every
  option of a ``||`` fallback, every part of a ``&&`` gate), of the labels the caller
  put on the input (``input_labels``) and of the result label of every call that may
  write an overlapping path (any alternative of its output, any ``_instance``): a
  fallback's passed-over options and the outputs a skipped or branching call leaves
  unwritten (control dependencies) are among them;
- a call's result label is the join of its arguments' labels and its tool's own
  (``output_trust``), so a latent call or a delegate that reads untrusted data
  produces untrusted data; a delegate that sees the parent's state or data
  (``_scopes``) reads every label that may be there before it runs;
- a call that touches a world resource another call may have written before it
  (``files:notes.txt``, :attr:`PlanGraph.world_effects`) also carries that writer's label.

Static labels are an upper bound of the labels a run finds (a run takes one writer,
one branch; tests/property/test_static_labels.py checks it), except for what a tool
decides while running: a :class:`~obelisk.interpreter.tools.labels.Labeled` result
and a policy given as a Python callable (which :class:`ApprovalNeed` then names as
"decided at run time by its policy").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from obelisk.grammar import Reference, parse_reference
from obelisk.interpreter.analysis.accesses import Read
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.model import Call, Plan
from obelisk.interpreter.tools.effects import resources_overlap
from obelisk.interpreter.tools.labels import TRUSTED, Label, LabelMap, Path, Source, join
from obelisk.interpreter.tools.policies import (
    Allow,
    InputLabels,
    PolicyCall,
    PolicyDecision,
    PolicyMode,
    Rules,
    decide,
    flow_text,
    input_label_pairs,
    source_why,
)
from obelisk.interpreter.tools.tool import Tool

__all__ = [
    "ApprovalNeed",
    "Flow",
    "StaticLabels",
    "approvals_required",
    "input_label_pairs",
    "labels_in_play",
]

RUN_TIME = "decided at run time by its policy"
"""The reason an :class:`ApprovalNeed` gives for a tool whose policy is a callable."""


def labels_in_play(mode: str, input_labels: InputLabels, tools: Iterable[Tool | None]) -> bool:
    """Whether a check works labels out: a ``strict`` policy, input labels, or a tool
    that declares a label or a policy (otherwise nothing can be stopped)."""
    if mode != "off" or input_labels:
        return True
    distinct = {id(tool): tool for tool in tools if tool is not None}  # a plan repeats tools
    return any(tool.rules.declared for tool in distinct.values())


def _path(reference: Reference) -> Path:
    return (reference.kind, *reference.path)


@dataclass(frozen=True, slots=True)
class Flow:
    """One flow a policy would stop: argument ``argument`` of call ``call`` with
    ``label``; ``action`` is ``"deny"`` or ``"ask"``; ``message`` says why, for people;
    ``read`` is the reference it comes through (``None``: the whole call)."""

    call: int
    argument: str
    label: Label
    action: Literal["ask", "deny"]
    message: str
    read: Read | None = None


@dataclass(frozen=True, slots=True)
class ApprovalNeed:
    """A call that may need a person before it runs (``CheckResult.approval_load``):
    its index ``call``, ``tool`` and ``label`` (``#4 send_money``), the ``reasons``
    (one sentence each: a flow, "decided at run time by its policy", a tool that
    requires approval) and the ``arguments`` whose labels ask, with those labels."""

    call: int
    tool: str
    label: str
    reasons: tuple[str, ...]
    arguments: tuple[tuple[str, Label], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"call", "tool", "label", "reasons": [...], "arguments": {name: label}}``."""
        return {
            "call": self.call,
            "tool": self.tool,
            "label": self.label,
            "reasons": list(self.reasons),
            "arguments": {name: label.to_dict() for name, label in self.arguments},
        }


def approvals_required(calls: Iterable[Call], tools: list[Tool | None]) -> tuple[ApprovalNeed, ...]:
    """The approval load of a plan without labels: the calls whose tools require
    approval (``requires_approval``: always, or by a function of the arguments)."""
    found = []
    for call in calls:
        tool = tools[call.index]
        if tool is not None and tool.requires_approval is not False:
            reason = f"{call.tool} requires approval"
            found.append(ApprovalNeed(call.index, call.tool, call.label, (reason,)))
    return tuple(found)


class StaticLabels:
    """The labels of a plan's arguments and results, worked out over ``graph``
    (see the module docstring): ``arguments[i]`` (each argument's label by name, plus
    ``_scopes`` for a delegate that sees the parent's state) and ``results[i]``, for
    the calls not in a dependency cycle; ``tools[i]`` is call ``i``'s tool (``None``:
    unknown).  :meth:`flows` and :meth:`approval_load` are what a policy makes of them."""

    def __init__(
        self,
        plan: Plan,
        graph: PlanGraph,
        tools: list[Tool | None],
        mode: PolicyMode = "off",
        input_labels: InputLabels = (),
    ) -> None:
        self.plan, self.graph, self.tools, self.mode = plan, graph, tools, mode
        self.inputs = LabelMap()
        for text, label in input_labels:
            self.inputs.put(_path(parse_reference(text)), label)
        size = len(plan.calls)
        self.own: list[Label] = [self._own(call, tools[call.index]) for call in plan.calls]
        self.arguments: list[dict[str, Label]] = [{} for _ in range(size)]
        self.reads: list[list[Label]] = [[] for _ in range(size)]
        self.results: list[Label] = [TRUSTED] * size
        # the world resources written before / after each call, with their labels
        self.world_before: list[dict[str, Label]] = [{} for _ in range(size)]
        self.world_after: list[dict[str, Label]] = [{} for _ in range(size)]
        self.sourced = [i for i, own in enumerate(self.own) if not own.bottom]
        self.ordered = set(graph.orderable())
        self._propagate()

    # -- propagation -----------------------------------------------------------------
    def _own(self, call: Call, tool: Tool | None) -> Label:
        if tool is None:
            return TRUSTED
        return tool.rules.output_label(Source(call.label, source_why(tool), call.index))

    def _propagate(self) -> None:
        """Each call in dependency order, again while a label changed, when some call
        read a writer that comes later in the order (one under another ``_instance``
        is no predecessor)."""
        order = self.graph.orderable()
        self._done = dict.fromkeys(order, False)  # in this pass: worked out yet?
        for _ in range(len(order) + 1):
            changed, self._later = False, False
            for index in order:
                label = self._call(index)
                if self.graph.world_effects:
                    self._wrote(index, label)
                if label != self.results[index]:
                    self.results[index], changed = label, True
                self._done[index] = True
            if not (changed and self._later):
                return
            self._done = dict.fromkeys(order, False)

    def _read(self, read: Read) -> Label:
        """The label of what ``read`` may see: the caller's labels and every writer's."""
        found = self.inputs.read(_path(read.reference))
        for write in self.graph.index.overlapping(read.key):
            if write.call != read.call:
                found = found.join(self.results[write.call])
                if not self._done.get(write.call, True):
                    self._later = True  # a writer not worked out yet in this pass
        return found

    def _call(self, index: int) -> Label:
        """Work out call ``index``'s argument labels; give its result label."""
        call, tool = self.plan.calls[index], self.tools[index]
        labels: dict[str, Label] = dict.fromkeys(call.arguments, TRUSTED)
        reads = [self._read(read) for read in self.graph.reads[index]]
        for read, label in zip(self.graph.reads[index], reads, strict=True):
            name = str(read.argument.path[0])
            labels[name] = labels.get(name, TRUSTED).join(label)
        if tool is not None and tool.delegate and ({"state", "data"} & set(tool.scopes)):
            labels["_scopes"] = self._everything_before(index)
        self.arguments[index], self.reads[index] = labels, reads
        return join(labels.values()).join(self.own[index]).join(self._world(index))

    def _everything_before(self, index: int) -> Label:
        """What a delegate reading the whole state may see: every input label, and the
        own label of every call that may have run before it (its descendants cannot)."""
        later = self.graph.descendants(index)
        found = self.inputs.everything()
        for other in self.sourced:  # the calls whose own label is not the bottom
            if other != index and other not in later:
                found = found.join(self.own[other])
        return found

    def _world(self, index: int) -> Label:
        """The labels of the calls that may have written a world resource call ``index``
        touches before it runs (a write, then a read, of one file)."""
        if not self.graph.world_effects:
            return TRUSTED
        seen = self._world_seen(index)
        mine = self.graph.world_effects.get(index)
        if not mine or not seen:
            return TRUSTED
        return join(
            label
            for resource, label in seen.items()
            if any(resources_overlap(resource, touched) for touched in mine)
        )

    def _world_seen(self, index: int) -> dict[str, Label]:
        """Each world resource written before call ``index`` may run, with the join of
        its writers' labels: what flows along every edge into the call (an order-only
        edge or a data edge), in the dependency order :meth:`_propagate` keeps."""
        found: dict[str, Label] | None = None
        for before in self.graph.predecessors[index]:
            theirs = self.world_after[before]
            if not theirs or theirs is found:
                continue
            if found is None:
                found = theirs
                continue
            found = dict(found)  # a merge: never change a predecessor's own map
            for resource, label in theirs.items():
                found[resource] = found.get(resource, TRUSTED).join(label)
        self.world_before[index] = found or {}
        return self.world_before[index]

    def _wrote(self, index: int, result: Label) -> None:
        """What the world holds after call ``index``: its writes carry ``result``."""
        before = self.world_before[index]
        writes = [r for r, a in self.graph.world_effects.get(index, {}).items() if a == "write"]
        if not writes or result.bottom:
            self.world_after[index] = before
            return
        after = dict(before)
        for resource in writes:
            after[resource] = after.get(resource, TRUSTED).join(result)
        self.world_after[index] = after

    # -- policies ------------------------------------------------------------------
    def policy_call(self, index: int) -> PolicyCall:
        """What a policy would see of call ``index`` (its literal arguments; an
        argument that holds an expression is not known before the run)."""
        call = self.plan.calls[index]
        dynamic = {str(argument.path[0]) for argument in call.expressions}
        known = {k: v for k, v in call.arguments.items() if k not in dynamic}
        return PolicyCall(call.tool, call.label, known, self.arguments[index])

    def flows(self, index: int) -> list[Flow]:
        """The flows into call ``index`` that its tool's rules (and the ``strict``
        mode) would stop, one per argument, the strictest action first found."""
        tool = self.tools[index]
        if tool is None or index not in self.ordered:
            return []
        rules, labels = tool.rules, self.arguments[index]
        found: dict[str, Flow] = {}
        for name, label in self._readers_barred(index, rules):
            found[name] = self._flow(index, name, label, "deny", "readers")
        for name in rules.trusted_args:
            if name in labels and labels[name].untrusted and name not in found:
                found[name] = self._flow(index, name, labels[name], rules.on_untrusted, "trusted")
        if self.mode == "strict" and rules.writes:
            for name, label in labels.items():
                if label.untrusted and name not in found:
                    found[name] = self._flow(index, name, label, "ask", "strict")
        return list(found.values())

    def _readers_barred(self, index: int, rules: Rules) -> list[tuple[str, Label]]:
        """The arguments a known audience may not read (CaMeL's readers rule)."""
        if rules.audience_arg is None:
            return []
        seen = self.policy_call(index)
        if rules.audience_arg not in seen.arguments:
            return []  # the audience comes from a reference: decided at run time
        audience = seen.arguments[rules.audience_arg]
        names = [audience] if isinstance(audience, str) else list(audience or ())
        return [
            (name, label)
            for name, label in seen.labels.items()
            if any(not label.can_read(str(who)) for who in names)
        ]

    def _flow(
        self, index: int, name: str, label: Label, action: Literal["ask", "deny"], rule: str
    ) -> Flow:
        call = self.plan.calls[index]
        text = flow_text(call.label, name, label)
        if rule == "readers":
            readers = ", ".join(sorted(label.readers or ())) or "nobody"
            text = f"argument `{name}` of `{call.label}` may be read only by {readers}"
        consequence = {
            "deny": "the call would fail with PolicyViolation",
            "ask": "the call would wait for a person's approval",
        }[action]
        why = {
            "readers": "its audience is not among them",
            "trusted": f'{call.tool} requires a trusted `{name}` (on_untrusted="{action}")',
            "strict": f'policy="strict": {call.tool} writes the world',
        }[rule]
        where = self._where(index, name, label)
        return Flow(index, name, label, action, f"{text}; {why}: {consequence}", where)

    def _where(self, index: int, name: str, label: Label) -> Read | None:
        """The reference of argument ``name`` to point at: the first whose label
        brings one of ``label``'s sources (or any, for a readers flow)."""
        first = None
        for read, seen in zip(self.graph.reads[index], self.reads[index], strict=True):
            if str(read.argument.path[0]) != name:
                continue
            first = first or read
            if seen.sources & label.sources:
                return read
        return first

    def need(self, index: int) -> ApprovalNeed | None:
        """Why call ``index`` may need a person (``None``: it will not): the reasons
        :func:`~obelisk.interpreter.tools.policies.decide` gives for asking, a policy
        callable or an audience known only at run time, a tool that requires approval."""
        tool = self.tools[index]
        if tool is None or index not in self.ordered:
            return None
        call, rules = self.plan.calls[index], tool.rules
        seen = self.policy_call(index)
        verdict: PolicyDecision = Allow()
        if rules.declared or self.mode == "strict":  # the callable is decided at run time
            verdict = decide(dataclasses.replace(rules, policy=None), seen, self.mode)
        reasons = verdict.reason.split("; ") if verdict.action == "ask" else []
        if rules.policy is not None:
            reasons.append(RUN_TIME)
        audience = rules.audience_arg
        restricted = any(not label.public for label in seen.labels.values())
        if audience is not None and audience not in seen.arguments and restricted:
            reasons.append(f"decided at run time: the audience `{audience}` is known only then")
        if tool.requires_approval is not False:
            reasons.append(f"{call.tool} requires approval")
        if not reasons:
            return None
        asked = tuple(
            (flow.argument, flow.label)
            for flow in self.flows(index)
            if flow.action == "ask" and verdict.action == "ask"
        )
        return ApprovalNeed(index, call.tool, call.label, tuple(dict.fromkeys(reasons)), asked)

    def approval_load(self) -> tuple[ApprovalNeed, ...]:
        """Every call that may need a person, in plan order."""
        found = (self.need(index) for index in range(len(self.plan.calls)))
        return tuple(need for need in found if need is not None)
