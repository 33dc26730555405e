"""Policies on side effects: what a call may do with labelled arguments
(docs/security.md, "Policies").

A tool declares its rules (:class:`Rules`: ``trusted_args`` and ``on_untrusted``,
``audience_arg``, a ``policy`` callable, and whether it writes the world); before a
call runs, :func:`decide` looks at its resolved arguments with their labels
(:class:`PolicyCall`) and gives :class:`Allow`, :class:`Ask` or :class:`Deny`.  The
run enforces the decision (``deny`` fails the call with
:class:`~obelisk.errors.PolicyViolation`, ``ask`` pauses it for a person); static
analysis can call :func:`decide` with the labels it works out.  Pure: no state, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from obelisk.errors import ToolDefinitionError, UsageError
from obelisk.grammar import parse_reference
from obelisk.interpreter.tools.labels import (
    TRUSTED,
    Label,
    Source,
    Trust,
    label_of,
    sources_in_order,
)

__all__ = [
    "ALLOW",
    "InputLabels",
    "POLICY_MODES",
    "Allow",
    "Ask",
    "Deny",
    "PolicyCall",
    "PolicyDecision",
    "PolicyMode",
    "Rules",
    "check_rules",
    "decide",
    "flow_text",
    "input_label_pairs",
    "source_why",
    "tuple_of",
]

PolicyMode = Literal["off", "strict"]
"""A run's default rule: ``off`` (only the tools' own rules) or ``strict`` (also ask
whenever an argument of a call that writes the world is untrusted)."""
POLICY_MODES: tuple[PolicyMode, ...] = ("off", "strict")
InputLabels = tuple[tuple[str, Label], ...]
"""A run's ``input_labels`` checked: ``(("†input.body", Label), ...)``."""


@dataclass(frozen=True, slots=True)
class Allow:
    """The call may run."""

    reason: str = ""
    action: Literal["allow"] = field(default="allow", init=False)


@dataclass(frozen=True, slots=True)
class Ask:
    """The call waits for a person (the approval machinery, docs/approvals.md);
    ``reason`` is shown with the approval."""

    reason: str
    action: Literal["ask"] = field(default="ask", init=False)


@dataclass(frozen=True, slots=True)
class Deny:
    """The call fails with :class:`~obelisk.errors.PolicyViolation` and ``reason``."""

    reason: str
    action: Literal["deny"] = field(default="deny", init=False)


PolicyDecision = Allow | Ask | Deny
ALLOW = Allow()
"""The decision that lets a call run (one object, shared)."""
_RANK = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True, slots=True)
class PolicyCall:
    """What a policy sees of a call about to run: ``tool``, ``label``
    (``#4 send_money``), ``arguments`` (resolved, JSON) and ``labels`` (each
    argument's :class:`Label`, by name).  :meth:`untrusted` names the untrusted ones."""

    tool: str
    label: str
    arguments: Mapping[str, Any]
    labels: Mapping[str, Label]

    def untrusted(self, names: Any = None) -> list[str]:
        """The names (of ``names``, or of every argument) whose label is untrusted."""
        chosen = self.labels if names is None else names
        return [n for n in chosen if n in self.labels and self.labels[n].untrusted]


def flow_text(call: str, argument: str, label: Label) -> str:
    """One flow, for people: "argument `iban` of `#4 send_money` comes from
    `#1 read_file` (untrusted: file content)"."""
    names = ", ".join(f"`{s.name}`" for s in sources_in_order(label)) or "an untrusted value"
    return f"argument `{argument}` of `{call}` comes from {names} ({label.describe()})"


@dataclass(frozen=True, slots=True)
class Rules:
    """A tool's label declarations (docs/security.md): ``output`` labels its results
    (its sources filled in per call); ``trusted_args`` must be trusted, else
    ``on_untrusted`` (``"ask"`` or ``"deny"``); ``audience_arg`` names the argument
    that says who will read what the call sends (a name or a list of names);
    ``policy`` is a callable ``PolicyCall -> Allow | Ask | Deny``; ``writes`` is true
    for a tool with a ``write`` effect (the ``strict`` mode's rule)."""

    output: Trust = "trusted"
    trusted_args: tuple[str, ...] = ()
    on_untrusted: Literal["ask", "deny"] = "ask"
    audience_arg: str | None = None
    policy: Callable[[PolicyCall], Any] | None = None
    writes: bool = False

    @property
    def declared(self) -> bool:
        """Whether the tool declares any label or policy (a run then tracks labels)."""
        return bool(
            self.output == "untrusted" or self.trusted_args or self.audience_arg or self.policy
        )

    def output_label(self, source: Source) -> Label:
        """The label of a result of this tool, from ``source`` (the call)."""
        return TRUSTED if self.output == "trusted" else label_of("untrusted", source)


def check_rules(tool: Any) -> Rules:
    """The :class:`Rules` of ``tool`` (a :class:`~obelisk.interpreter.tools.tool.Tool`
    being declared: its ``output_trust``, ``trusted_args``, ``on_untrusted``,
    ``audience_arg``, ``policy``, ``effects``, ``parameter_names`` and
    ``accepts_extra``); raises :class:`~obelisk.errors.ToolDefinitionError` naming the
    tool for a bad declaration (docs/security.md)."""
    name, trusted_args, audience_arg = tool.name, tool.trusted_args, tool.audience_arg
    if tool.output_trust not in ("trusted", "untrusted"):
        raise _bad(name, "output_trust must be 'trusted' or 'untrusted'", tool.output_trust)
    if isinstance(trusted_args, str) or not all(isinstance(a, str) for a in trusted_args or ()):
        raise _bad(name, "trusted_args must be a list of argument names", trusted_args)
    if tool.on_untrusted not in ("ask", "deny"):
        raise _bad(name, "on_untrusted must be 'ask' or 'deny'", tool.on_untrusted)
    if audience_arg is not None and not isinstance(audience_arg, str):
        raise _bad(name, "audience_arg must be an argument name", audience_arg)
    if tool.policy is not None and not callable(tool.policy):
        raise _bad(name, "policy must be a callable", tool.policy)
    named = (*trusted_args, *((audience_arg,) if audience_arg else ()))
    unknown = [n for n in named if n not in tool.parameter_names]
    if unknown and not tool.accepts_extra:
        raise _bad(name, "trusted_args and audience_arg must name parameters", unknown[0])
    writes = "write" in tool.effects.values()
    return Rules(
        tool.output_trust, tuple(trusted_args), tool.on_untrusted, audience_arg, tool.policy, writes
    )


def tuple_of(names: Any) -> Any:
    """``names`` as a tuple when it is a list or tuple (else as given, for
    :func:`check_rules` to refuse)."""
    return tuple(names) if isinstance(names, (list, tuple)) else names


def _bad(name: str, rule: str, value: Any) -> ToolDefinitionError:
    return ToolDefinitionError(f"tool {name!r}: {rule}, got {value!r}")


def _audience(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [] if value is None else [str(value)]


def _readers_rule(rules: Rules, call: PolicyCall) -> PolicyDecision:
    """CaMeL's readers rule: a value goes only to an audience its readers include."""
    if rules.audience_arg is None:
        return Allow()
    audience = _audience(call.arguments.get(rules.audience_arg))
    for name, label in call.labels.items():
        barred = [who for who in audience if not label.can_read(who)]
        if barred:
            return Deny(
                f"argument `{name}` of `{call.label}` may be read only by "
                f"{', '.join(sorted(label.readers or ()))}, not by {', '.join(barred)}"
            )
    return Allow()


def _trusted_args_rule(rules: Rules, call: PolicyCall) -> PolicyDecision:
    tainted = call.untrusted(rules.trusted_args)
    if not tainted:
        return Allow()
    text = "; ".join(flow_text(call.label, n, call.labels[n]) for n in tainted)
    return Deny(text) if rules.on_untrusted == "deny" else Ask(text)


def _callable_rule(rules: Rules, call: PolicyCall) -> PolicyDecision:
    if rules.policy is None:
        return Allow()
    try:
        found = rules.policy(call)
    except Exception as exc:  # a policy that breaks asks rather than guesses
        return Ask(f"the policy of `{call.tool}` raised {type(exc).__name__}: {exc}")
    if isinstance(found, (Allow, Ask, Deny)):
        return found
    if found is True or found is None:
        return Allow()
    return Ask(f"the policy of `{call.tool}` returned {found!r}, not Allow, Ask or Deny")


def _strict_rule(rules: Rules, call: PolicyCall) -> PolicyDecision:
    if not rules.writes:
        return Allow()
    tainted = call.untrusted()
    if not tainted:
        return Allow()
    return Ask("; ".join(flow_text(call.label, n, call.labels[n]) for n in tainted))


def decide(rules: Rules, call: PolicyCall, mode: PolicyMode = "off") -> PolicyDecision:
    """The decision on ``call`` under ``rules`` and the run's ``mode``: the strictest
    of the readers rule (``audience_arg``), ``trusted_args`` / ``on_untrusted``, the
    ``policy`` callable (one that raises or returns something else asks), and in
    ``strict`` mode the rule for tools that write the world.  The reasons of the rules
    that give the strictest action are joined with ``"; "``, each sentence once."""
    found: list[PolicyDecision] = [
        _readers_rule(rules, call),
        _trusted_args_rule(rules, call),
        _callable_rule(rules, call),
    ]
    if mode == "strict":
        found.append(_strict_rule(rules, call))
    worst = max(_RANK[d.action] for d in found)
    if worst == 0:
        return ALLOW
    sentences = (d.reason.split("; ") for d in found if _RANK[d.action] == worst)
    reasons = "; ".join(dict.fromkeys(part for parts in sentences for part in parts))
    return Deny(reasons) if worst == 2 else Ask(reasons)


def input_label_pairs(given: Mapping[str, Any] | Iterable[tuple[str, Label]] | None) -> InputLabels:
    """``input_labels`` as ``(("†input.body", Label), ...)``: a mapping as ``obelisk.run``
    takes it (``{"†input.email_body": "untrusted"}``, each key a reference, each value a
    label as :func:`~obelisk.interpreter.tools.labels.label_of` takes it; the source of
    each is the path, "labelled by the caller"), or pairs already checked (a run's
    settings).  Raises :class:`~obelisk.errors.UsageError` (docs/security.md,
    "Decided before the run")."""
    if not given:
        return ()
    if not isinstance(given, Mapping):
        return tuple(given)
    checked = []
    for text, spec in given.items():
        try:
            parse_reference(text)
        except Exception:
            raise UsageError(
                f"input_labels: {text!r} is not a path such as '†input.email_body'"
            ) from None
        source = Source(text, "labelled by the caller")
        checked.append((text, label_of(spec, source, f"input_labels[{text!r}]")))
    return tuple(checked)


def source_why(tool: Any) -> str:
    """What a call's result is, for people, as the run says it: the first line of its
    tool's description (trimmed, lower-cased when it reads as a title), or its name."""
    text = (tool.description or "").strip().splitlines()
    first = text[0].rstrip(".")[:60] if text else ""
    if first[:2].istitle():
        first = first[0].lower() + first[1:]
    return first or f"result of {tool.name}"
