"""Labels during a run: what each value is labelled with, and the policy decision on
each call before it runs (docs/security.md).

A run keeps a :class:`RunLabels` only when labels are in play: a ``policy="strict"``
run, ``input_labels``, a tool that declares a label or a policy, or a tool that
returns :class:`~obelisk.interpreter.tools.labels.Labeled`.  Otherwise the engine holds
``None`` and no call pays for labels.

Propagation (docs/security.md, "Propagation"): a call's arguments are labelled with
what their expressions read (a fallback ``a || b`` also with the label of each
alternative it passed over, a gate ``a && b`` with every part's), its result with the
join of its arguments' labels and its tool's own, and every path of its
``_outputPath`` it did not write with that label too: whoever then reads past it
(a fallback, a skipped call's outputs) carries the label of what chose the branch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from obelisk.errors import UsageError
from obelisk.grammar import (
    Alternatives,
    Conjunction,
    Escaped,
    Expression,
    Reference,
    parse_reference,
)
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.runtime.events import CallPolicy
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.state import MISSING, State
from obelisk.interpreter.tools.labels import (
    TRUSTED,
    Label,
    Labeled,
    LabelMap,
    Path,
    Source,
    join,
)
from obelisk.interpreter.tools.policies import (
    ALLOW,
    InputLabels,
    PolicyCall,
    PolicyDecision,
    PolicyMode,
    decide,
    input_label_pairs,
    source_why,
)
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = [
    "RunLabels",
    "check_input_labels",
    "labels_needed",
    "may_ask",
    "path_of",
    "starting_labels",
]


def path_of(reference: Reference) -> Path:
    """``(kind, *segments)`` of a reference: its key in a :class:`LabelMap`."""
    return (reference.kind, *reference.path)


def check_input_labels(given: Mapping[str, Any] | None) -> InputLabels:
    """``input_labels`` (``{"†input.email_body": "untrusted"}``) checked, as
    :func:`~obelisk.interpreter.tools.policies.input_label_pairs` does; anything but a
    mapping is a :class:`~obelisk.errors.UsageError`."""
    if given and not isinstance(given, Mapping):
        raise UsageError(f"input_labels must map paths to labels, got {given!r}")
    return input_label_pairs(given)


def labels_needed(policy: str, input_labels: InputLabels, registry: Registry) -> bool:
    """Whether a run tracks labels from its start (see the module docstring)."""
    if policy != "off" or input_labels:
        return True
    return any(tool.rules.declared for tool in registry)


def may_ask(settings: Any, registry: Registry) -> bool:
    """Whether a run with these settings and tools may pause for a person: a tool
    requires approval, or labels are in play (a policy may ask)."""
    if any(tool.requires_approval for tool in registry):
        return True
    return labels_needed(settings.policy, settings.input_labels, registry)


def starting_labels(settings: Any, registry: Registry, always: bool = False) -> LabelMap | None:
    """The labels an execution loop starts with and keeps from turn to turn (its
    runs update them in place): the caller's ``input_labels``, when labels are in
    play or ``always`` (a quarantined loop, docs/loop.md); else ``None``."""
    if always or labels_needed(settings.policy, settings.input_labels, registry):
        return RunLabels(settings.policy, settings.input_labels).map
    return None


class RunLabels:
    """The labels of one run: a :class:`LabelMap` of the state, the result label each
    call that ran will write (``results``, by call index, with the field labels of a
    :class:`Labeled` result), and the policy ``mode``."""

    @classmethod
    def of(
        cls, settings: Any, registry: Registry, start: LabelMap | None = None
    ) -> RunLabels | None:
        """The labels of a run with these settings and tools; ``None`` when no label
        is in play yet (a tool may still return a :class:`Labeled`).  ``start``: the
        labels of the state the run starts from (an execution loop's earlier turns),
        kept up to date in place; with it, labels are always tracked."""
        if start is not None or labels_needed(settings.policy, settings.input_labels, registry):
            return cls(settings.policy, settings.input_labels, start)
        return None

    def __init__(
        self, mode: PolicyMode, input_labels: InputLabels = (), start: LabelMap | None = None
    ) -> None:
        self.mode = mode
        self.map = LabelMap() if start is None else start
        self.results: dict[int, tuple[Label, list[tuple[Path, Label]]]] = {}
        self.arguments: dict[int, dict[str, Label]] = {}
        self.asked: dict[int, list[str]] = {}  # the arguments a policy asked about
        self.endorsed: dict[int, list[str]] = {}  # ... and those a person vouched for
        self.labeled: dict[int, Label] = {}  # a Labeled result's own label, by call
        for text, label in () if start is not None else input_labels:  # start has them
            self.map.put(path_of(parse_reference(text)), label)

    # -- reading -------------------------------------------------------------------
    def expression(self, node: Expression | Escaped, state: State, instance: str | None) -> Label:
        """The label of what ``node`` evaluates to (see the module docstring)."""
        if isinstance(node, Reference):
            return self.map.read(path_of(node))
        if isinstance(node, Conjunction):
            return join(self.map.read(path_of(part)) for part in node.parts)
        if isinstance(node, Alternatives):
            passed = TRUSTED
            for option in node.options:
                label = self.expression(option, state, instance)
                if all(state.read(r, instance) is not MISSING for r in _needed(option)):
                    return passed.join(label)
                passed = passed.join(label)  # its absence chose the next one
            return passed
        return TRUSTED  # an escaped literal

    def call_arguments(self, call: Call, tool: Tool, state: State) -> dict[str, Label]:
        """Each argument's label (the join over the expressions inside it); a
        delegate that takes the parent's state or data reads every label there."""
        labels: dict[str, Label] = dict.fromkeys(call.arguments, TRUSTED)
        for argument in call.expressions if self.map.size else ():  # else all trusted
            name = str(argument.path[0])
            label = self.expression(argument.expression, state, call.instance)
            labels[name] = labels.get(name, TRUSTED).join(label)
        if tool.delegate and ({"state", "data"} & set(tool.scopes)):
            labels["_scopes"] = self.map.everything()
        self.arguments[call.index] = labels
        self.result(call, tool, None)  # what a failure into its error arm carries
        return labels

    # -- deciding ------------------------------------------------------------------
    def verdict(
        self,
        call: Call,
        tool: Tool,
        record: CallRecord,
        arguments: Mapping[str, Any],
        emit: Callable[[CallPolicy], None] | None = None,
    ) -> PolicyDecision:
        """The policy's decision on ``call``, kept in its record and, with ``emit``,
        told to the listeners as a ``call_policy`` event (docs/security.md)."""
        decided = self.decide(call, tool, arguments)
        self.record(record, decided)
        if emit is not None:
            emit(self.event(call, decided, record.labels or {}))
        return decided

    def decide(self, call: Call, tool: Tool, arguments: Mapping[str, Any]) -> PolicyDecision:
        """The policy decision on ``call`` about to run with ``arguments``."""
        labels = self.arguments.get(call.index, {})
        rules = tool.rules
        if not rules.declared and (self.mode == "off" or not rules.writes):
            return ALLOW  # no rule applies to this tool
        seen = PolicyCall(call.tool, f"#{call.index} {call.tool}", arguments, labels)
        verdict = decide(rules, seen, self.mode)
        if verdict.action == "ask":  # what a person's approval will vouch for
            untrusted = seen.untrusted()
            broad = rules.policy is not None or (self.mode == "strict" and rules.writes)
            self.asked[call.index] = untrusted if broad else seen.untrusted(rules.trusted_args)
        return verdict

    def approved(self, record: CallRecord, action: str) -> None:
        """A person decided on call ``record.index``, which a policy asked about (the
        decision goes into its record's ``policy``): accepting endorses exactly the
        arguments it asked about, for this call; editing, every argument (the person
        wrote them)."""
        index = record.index
        record.policy = {**(record.policy or {}), "approval": action}
        labels = self.arguments.get(index, {})
        if action == "reject":
            return
        names = list(labels) if action == "edit" else self.asked.get(index, [])
        self._endorse(index, names)

    def _endorse(self, index: int, names: Iterable[str]) -> None:
        labels = self.arguments.get(index, {})
        endorsed = self.endorsed.setdefault(index, [])
        for name in names:
            if name in labels:
                labels[name] = labels[name].endorsed()
                endorsed.append(name)

    # -- writing -------------------------------------------------------------------
    def result(self, call: Call, tool: Tool, output: Any) -> Any:
        """Note the label call ``call``'s result will carry; returns the result
        unwrapped from a :class:`Labeled`."""
        fields: list[tuple[Path, Label]] = []
        own = TRUSTED
        if type(output) is Labeled or tool.rules.output != "trusted":
            source = Source(f"#{call.index} {call.tool}", source_why(tool), call.index)
            own = tool.rules.output_label(source)
            if type(output) is Labeled:
                fields = output.labels(own, source)
                own, fields = fields[0][1], fields[1:]
                output = output.value
                self.labeled[call.index] = own  # kept for a replay (stored)
        arguments = join(self.arguments.get(call.index, {}).values())
        self.results[call.index] = (arguments.join(own), fields)
        return output

    def replayed(self, record: CallRecord, call: Call, tool: Tool, stored: Any) -> None:
        """A resumed run replays call ``call``: its result label again, with the
        field labels it had, and its record's labels and policy decision (``stored``:
        :meth:`stored` of the first run, or ``None``)."""
        kept = stored if isinstance(stored, Mapping) else {}
        self._endorse(call.index, kept.get("endorsed", ()))  # as the person did then
        self.result(call, tool, None)
        label, fields = self.results[call.index]
        if kept.get("own"):  # what a Labeled result said of the whole
            label = label.join(Label.from_dict(kept["own"]))
        if kept.get("fields"):
            fields = [(tuple(p), Label.from_dict(d)) for p, d in kept["fields"]]
        self.results[call.index] = (label, fields)
        self.record(record, None)
        record.policy = kept.get("policy")

    def stored(self, index: int, policy: dict[str, Any] | None) -> dict[str, Any] | None:
        """What a call's outcome keeps of its labels for a resume: the field labels of
        a :class:`Labeled` result and the label it gave the whole (``"own"``), the
        policy's decision and the arguments a person vouched for (``None``: none of
        them)."""
        found, own = self.results.get(index), self.labeled.pop(index, None)
        fields = found[1] if found is not None else []
        if not fields and policy is None and own is None:
            return None
        kept: dict[str, Any] = {"fields": [[list(p), label.to_dict()] for p, label in fields]}
        if own is not None:
            kept["own"] = own.to_dict()
        if policy is not None:
            kept["policy"] = policy
        if self.endorsed.get(index):
            kept["endorsed"] = self.endorsed[index]
        return kept

    def skipped(self, call: Call, missing: Iterable[Reference]) -> None:
        """``call`` is skipped because ``missing`` did not exist: its outputs' absence
        carries their label (a control dependency)."""
        self.results[call.index] = (join(self.map.read(path_of(r)) for r in missing), [])
        self.committed(call, ())

    def committed(self, call: Call, targets: Iterable[Reference], failed: bool = False) -> Label:
        """Call ``call``'s writes to ``targets`` committed: they carry its result label
        (and a :class:`Labeled` result's field labels, unless it failed into its error
        arm), and the output paths it did not write carry it too.  Returns that label."""
        label, fields = self.results.pop(call.index, (TRUSTED, []))
        if label.bottom and not fields and not self.map.size:
            return label  # nothing labelled yet, nor now
        written: set[Path] = set()
        replace = call.output_method in _REPLACING  # else it joins what was there
        for target in targets:
            path = path_of(target)
            written.add(path)
            self.map.put(path, label, replace)
            for inner, field_label in () if failed else fields:
                self.map.put(path + inner, field_label)
        if label.bottom:
            return label
        for alternative in call.alternatives:
            for reference in alternative:
                if path_of(reference) not in written:
                    self.map.put(path_of(reference), label, replace=False)
        return label

    def event(self, call: Call, verdict: PolicyDecision, labels: dict[str, Any]) -> CallPolicy:
        """The ``call_policy`` event of ``call``: the decision, the argument labels, the
        references it reads and the label its result will carry (for a trace's
        provenance, docs/security.md)."""
        reads = [
            str(reference)
            for argument in call.expressions
            for reference in getattr(argument.expression, "references", ())
        ]
        result = self.results.get(call.index, (TRUSTED, []))[0].to_dict()
        at = time.time()
        return CallPolicy(
            at, call.index, call.tool, verdict.action, verdict.reason, labels, reads, result
        )

    def record(self, record: CallRecord, decision: PolicyDecision | None) -> None:
        """Put call ``record.index``'s argument labels and policy decision into its
        record (its result's label goes in as ``"_result"`` when it commits: no
        argument has a name that starts with ``_``)."""
        labels = self.arguments.get(record.index, {})
        record.labels = {name: label.to_dict() for name, label in labels.items()}
        if decision is not None and decision.action != "allow":
            record.policy = {"action": decision.action, "reason": decision.reason}


def _needed(node: Expression | Escaped) -> tuple[Reference, ...]:
    """The references that must all exist for ``node`` to have a value."""
    if isinstance(node, Reference):
        return (node,)
    if isinstance(node, Conjunction):
        return node.parts
    return ()  # a fallback inside a fallback: its own options decide


_REPLACING = frozenset(("set", "erase"))
"""The output methods whose write replaces what was at its path (``merge``,
``assign``, ``push`` and ``concat`` keep it: its labels stay, joined)."""
