"""The plan model: :class:`Plan`, :class:`Call` and their parts (docs/language.md).

These are the inspectable output of parsing (:func:`obelisk.interpreter.plan.parse_plan`);
pydantic models, frozen.  ``Plan.to_json()`` writes a plan back as JSON equal to
what was parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from obelisk.diagnostics import Diagnostic
from obelisk.grammar import Alternatives, Escaped, Expression, Reference

__all__ = [
    "META_KEYS",
    "ArgumentExpression",
    "alternatives_of",
    "Call",
    "OutputMethod",
    "Plan",
    "PlanMode",
    "format_argument_path",
    "iter_references",
    "new_argument_expression",
    "new_call",
    "OUTPUT_METHODS",
    "ROUND_TRIP_KEYS",
]

OutputMethod = Literal["set", "merge", "assign", "push", "concat", "erase"]
PlanMode = Literal["eager", "lazy"]
OUTPUT_METHODS: tuple[str, ...] = get_args(OutputMethod)
META_KEYS = (
    "_tool",
    "_outputPath",
    "_outputMethod",
    "_output",
    "_instance",
    "_id",
    "_reasoningForCall",
    "_after",
    "_status",
    "_tools",
)
ROUND_TRIP_KEYS = (
    "_id",
    "_outputPath",
    "_outputMethod",
    "_instance",
    "_reasoningForCall",
    "_after",
    "_tools",
)
_IDENTIFIER = re.compile(r"[^\W\d][\w\-]*")


def format_argument_path(parts: tuple[str | int, ...], root: str = "args") -> str:
    """Render an argument path: ``("customer", "id")`` -> ``"args.customer.id"``.

    Integers become ``[i]``; keys that are not identifiers are quoted, as in
    ``args["a b"]``.
    """
    text = root
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            text += "." + part
        else:
            text += "[" + json.dumps(part, ensure_ascii=False) + "]"
    return text


@dataclass(frozen=True, slots=True)
class ArgumentExpression:
    """One expression found inside a call's arguments.

    ``path`` is where it sits inside the arguments object (``("customer", "id")``);
    ``text`` is the original string; ``expression`` the parsed node (an
    :class:`~obelisk.grammar.Escaped` for ``††`` literals).
    """

    path: tuple[str | int, ...]
    text: str
    expression: Expression | Escaped

    @property
    def argument_path(self) -> str:
        """``"args.customer.id"``-style path used in diagnostics."""
        return format_argument_path(self.path)

    @property
    def is_whole_argument(self) -> bool:
        """True when the expression is the whole value of a top-level argument."""
        return len(self.path) == 1


class Call(BaseModel):
    """One tool call of a plan (docs/language.md).

    ``arguments`` holds the argument values exactly as written (expressions are
    still strings there); ``expressions`` lists every expression found in them,
    parsed, with its location; ``target`` is the parsed ``_outputPath``.
    ``outputs`` holds ``target``'s alternatives, worked out once when parsing.
    ``has_output`` tells a latent call's ``_output`` (which may be ``null``)
    from an absent one.  ``extra`` keeps unknown ``_keys``, and ``written_meta``
    the known meta-properties exactly as written (``"_outputMethod": "set"``,
    ``"_id": null``), so that serializing gives back equal JSON.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, defer_build=True)

    index: int
    tool: str
    arguments: dict[str, Any] = {}
    output_path: str | None = None
    output_method: OutputMethod = "set"
    has_output: bool = False
    output: Any = None
    instance: str | None = None
    id: str | int | None = None
    reasoning: str | None = None
    after: tuple[str | int, ...] = ()
    extra: dict[str, Any] = {}
    written_meta: dict[str, Any] = {}
    expressions: tuple[ArgumentExpression, ...] = ()
    target: Expression | None = None
    outputs: tuple[tuple[Reference, ...], ...] = ()

    @property
    def label(self) -> str:
        """How the call is named in every message: ``#3 issueRefund`` or
        ``#3 issueRefund (refund-1)`` when it has an ``_id``."""
        if self.id is None:
            return f"#{self.index} {self.tool}"
        return f"#{self.index} {self.tool} ({self.id})"

    @property
    def delegate_tools(self) -> Any:
        """The call's ``_tools`` as written (``None`` when absent): the tools a
        delegate call's child loop may use (docs/loop.md, "Delegates"); the checker
        judges it against the tools (``invalid_tools``)."""
        return self.written_meta.get("_tools")

    @property
    def alternatives(self) -> tuple[tuple[Reference, ...], ...]:
        """The output alternatives, each a tuple of fan-out targets (docs/language.md).

        ``†a || †b && †c`` gives ``((†a,), (†b, †c))``; no ``_outputPath`` gives ``()``.
        """
        target = self.target
        if target is None:
            return ()
        return self.outputs or alternatives_of(target)

    def to_data(self) -> dict[str, Any]:
        """The call as a JSON object (a ``dict``), as it would appear in a plan."""
        data: dict[str, Any] = {"_tool": self.tool}
        if "_id" in self.written_meta or self.id is not None:
            data["_id"] = self.written_meta.get("_id", self.id)
        data.update(self.arguments)
        values = {
            "_outputPath": self.output_path,
            "_outputMethod": None if self.output_method == "set" else self.output_method,
            "_instance": self.instance,
            "_reasoningForCall": self.reasoning,
            "_after": list(self.after) if self.after else None,
            "_tools": None,  # only as written
        }
        for key, value in values.items():
            if key in self.written_meta:
                data[key] = self.written_meta[key]
            elif value is not None:
                data[key] = value
        if self.has_output:
            data["_output"] = self.output
        data.update(self.extra)
        return data


class Plan(BaseModel):
    """A parsed plan: its calls in order, its mode and the warnings found parsing it.

    ``form`` remembers which of the three input shapes it came in
    (``"list"``, ``"object"`` or ``"message"``) so that :meth:`to_json` writes the
    same shape back.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    calls: tuple[Call, ...]
    mode: PlanMode | None = None
    form: Literal["list", "object", "message"] = "list"
    mode_written: bool = False
    diagnostics: tuple[Diagnostic, ...] = ()

    def __len__(self) -> int:
        return len(self.calls)

    def __iter__(self) -> Iterator[Call]:  # type: ignore[override]
        return iter(self.calls)

    def __getitem__(self, index: int) -> Call:
        return self.calls[index]

    def to_data(self) -> list[Any] | dict[str, Any]:
        """The plan as a decoded JSON value, in the shape it was parsed from."""
        calls = [call.to_data() for call in self.calls]
        if self.form == "list":
            return calls
        if self.form == "object":
            data: dict[str, Any] = {"calls": calls}
            if self.mode is not None or self.mode_written:
                data["mode"] = self.mode
            return data
        message: dict[str, Any] = {"type": "plan", "plan": calls}
        if self.mode is not None or self.mode_written:
            message["mode"] = self.mode
        return message

    def to_json(self, indent: int | None = None) -> str:
        """JSON text of the plan; ``parse_plan(plan.to_json()) == plan``."""
        return json.dumps(self.to_data(), ensure_ascii=False, indent=indent)


_CALL_FIELDS = frozenset(Call.model_fields)
_new_object = object.__new__
# the slots BaseModel keeps a model's state in, set through their descriptors: about
# twice as fast as object.__setattr__, which looks each name up on the type first
_set_dict, _set_fields_set, _set_extra, _set_private = (
    BaseModel.__dict__[name].__set__
    for name in (
        "__dict__",
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
    )
)


class _CallFields:
    """Holds a :class:`Call`'s fields on the way to its ``__dict__``.

    The dict of an instance of a plain class shares its table of keys with every
    other instance's (PEP 412), and keeps only the values: about 230 bytes for a
    call's 16 fields, against about 580 for a dict of its own (benchmarks/memory.py).
    A call's ``__dict__`` is such a dict; it is a ``dict`` like any other."""

    index: int
    tool: str
    arguments: dict[str, Any]
    output_path: str | None
    output_method: OutputMethod
    has_output: bool
    output: Any
    instance: str | None
    id: str | int | None
    reasoning: str | None
    after: tuple[str | int, ...]
    extra: dict[str, Any]
    written_meta: dict[str, Any]
    expressions: tuple[ArgumentExpression, ...]
    target: Expression | None
    outputs: tuple[tuple[Reference, ...], ...]


def _shared_keys_dict(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (every field of :class:`Call`, in field order) in a key-sharing dict."""
    held = _new_object(_CallFields)
    held.index = values["index"]
    held.tool = values["tool"]
    held.arguments = values["arguments"]
    held.output_path = values["output_path"]
    held.output_method = values["output_method"]
    held.has_output = values["has_output"]
    held.output = values["output"]
    held.instance = values["instance"]
    held.id = values["id"]
    held.reasoning = values["reasoning"]
    held.after = values["after"]
    held.extra = values["extra"]
    held.written_meta = values["written_meta"]
    held.expressions = values["expressions"]
    held.target = values["target"]
    held.outputs = values["outputs"]
    fields: dict[str, Any] = held.__dict__
    return fields


def new_call(values: dict[str, Any]) -> Call:
    """Build a :class:`Call` from already-validated values, every field given.

    Equivalent to ``Call.model_construct(**values)`` (which spends most of its
    time on defaults we never need) at about a fifth of the cost; this is the
    hot path of parsing large plans (benchmarks/check_throughput.py).  The call's
    ``__dict__`` shares its keys with every other call's (:class:`_CallFields`).
    """
    call: Call = _new_object(Call)
    _set_dict(call, _shared_keys_dict(values))
    _set_fields_set(call, _CALL_FIELDS)
    _set_extra(call, None)
    _set_private(call, None)
    return call


_set_path, _set_text, _set_expression = (
    ArgumentExpression.__dict__[name].__set__ for name in ("path", "text", "expression")
)


def new_argument_expression(
    path: tuple[str | int, ...], text: str, expression: Expression | Escaped
) -> ArgumentExpression:
    """``ArgumentExpression(path, text, expression)`` at about half the cost: a
    frozen dataclass's ``__init__`` goes through ``object.__setattr__`` once per
    field; this sets the slots directly.  Parsing makes one per expression."""
    made = _new_object(ArgumentExpression)
    _set_path(made, path)
    _set_text(made, text)
    _set_expression(made, expression)
    return made


def alternatives_of(target: Expression) -> tuple[tuple[Reference, ...], ...]:
    """An output path's alternatives, each a tuple of its fan-out targets."""
    if type(target) is Reference:  # the common output path, one plain reference
        return ((target,),)
    options = target.options if isinstance(target, Alternatives) else (target,)
    return tuple(option.references for option in options)


def iter_references(expression: Expression | Escaped) -> tuple[Reference, ...]:
    """Every reference inside an expression (none for an escaped literal)."""
    if isinstance(expression, Escaped):
        return ()
    return expression.references
