"""What the execution loop sends a model and what it gets back (docs/loop.md).

A :class:`Request` is ``{"schema", "context", "config"}``: the JSON schema a
:class:`Solution` must fit, the context messages, rebuilt from scratch for every
request (there is no hidden chat history), and the loop's settings, last because
its turn number changes every turn.  Context
messages are tagged by ``type``:

* ``{"type": "text", "text"}``: an instruction or a notice;
* ``{"type": "tool", "tools": [{"name", "description", "parameters", "output"?, "latent"}]}``;
* ``{"type": "input", "input", "instance"?}``: the read-only input (per instance);
* ``{"type": "state", "state", "instance"?, "schema"?}``: the current state (per
  instance), with the state's JSON schema when the loop has one;
* ``{"type": "data", "kind", "data"}``: another data document (``†data...``);
* ``{"type": "plan", "plan": [call, ...], "mode"}``: the calls carried over;
* ``{"type": "error", "call"?, "error": {"type", "message", ...}}``: one error record.

A :class:`Solution` is ``{"calls": [call, ...], "output": <user schema> | null}``.
:func:`solution_schema` builds its schema from a registry: one item schema per
tool in ``calls`` (its arguments, ``_tool`` as a const, ``_outputPath`` as a
string starting with ``†``, required for tools with a result, ``_output`` for
latent tools in eager mode), and the caller's output schema, made nullable, for
``output``, where any value may be a reference (``"†state.summary"``), as the loop
reads them in every mode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from obelisk.errors import SolutionError
from obelisk.interpreter.loop.answer_schema import (
    IDENTICAL_CALLS,
    output_schema_with_references,
    solution_schema,
    tool_description,
)
from obelisk.interpreter.loop.reference_patterns import (
    OUTPUT_PATH_PATTERN,
    REFERENCE_PATTERN,
)
from obelisk.json_values import decimal_digits, loads_strict
from obelisk.limits import DEFAULT_LIMITS, int_digits_limit

__all__ = [
    "IDENTICAL_CALLS",
    "OUTPUT_PATH_PATTERN",
    "REFERENCE_PATTERN",
    "DataMessage",
    "ErrorMessage",
    "InputMessage",
    "Message",
    "PlanMessage",
    "Request",
    "Solution",
    "StateMessage",
    "TextMessage",
    "ToolMessage",
    "parse_solution",
    "message_data",
    "output_schema_with_references",
    "solution_schema",
    "tool_description",
]


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextMessage(_Message):
    """An instruction or notice for the model."""

    type: Literal["text"] = "text"
    text: str


class ToolMessage(_Message):
    """The tools the model may call (see :func:`tool_description`)."""

    type: Literal["tool"] = "tool"
    tools: list[dict[str, Any]]


class InputMessage(_Message):
    """The read-only input; ``instance`` names the instance it belongs to (docs/semantics.md)."""

    type: Literal["input"] = "input"
    input: Any
    instance: str | None = None


class StateMessage(_Message):
    """The current state as ``instance`` sees it (the shared state when ``None``);
    ``schema``: the JSON schema of the state, when the loop has one (``state_schema``),
    so the model plans against its shape."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    type: Literal["state"] = "state"
    state: Any
    instance: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class DataMessage(_Message):
    """Another data document, read as ``†<kind>...``."""

    type: Literal["data"] = "data"
    kind: str
    data: Any


class PlanMessage(_Message):
    """Calls carried into this request: every call of the last answer that was a
    solution, as the model wrote it (after any edit by the approver), those that ran
    included (the state shows what they did); on the first turn, the plan given to
    ``Loop.run``.  ``mode`` is the loop's (docs/loop.md, "The carried plan")."""

    type: Literal["plan"] = "plan"
    plan: list[dict[str, Any]]
    mode: Literal["eager", "lazy"] = "eager"


class ErrorMessage(_Message):
    """One error record ``{call, error}`` (docs/semantics.md): ``call`` is a label such as
    ``#3 issueRefund`` or ``None`` for a problem of the whole answer."""

    type: Literal["error"] = "error"
    call: str | None = None
    error: dict[str, Any]


Message = Annotated[
    TextMessage
    | ToolMessage
    | InputMessage
    | StateMessage
    | DataMessage
    | PlanMessage
    | ErrorMessage,
    Field(discriminator="type"),
]


def message_data(message: Message) -> dict[str, Any]:
    """A context message as plain JSON; an absent ``instance``, ``call`` or state
    ``schema`` is left out, a ``null`` payload is kept."""
    data = message.model_dump(mode="json", by_alias=True)
    for key in ("instance", "call", "schema"):
        if key in data and data[key] is None:
            del data[key]
    return data


class Request(_Message):
    """One request to a model: ``schema`` (the JSON schema of the expected
    :class:`Solution`), ``context`` and ``config`` (loop settings: mode, turn, ...),
    serialized in that order (:meth:`to_data`)."""

    config: dict[str, Any] = {}
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")
    context: list[Message] = []

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @property
    def schema(self) -> dict[str, Any]:  # type: ignore[override]
        """The solution's JSON schema."""
        return self.schema_

    def to_data(self) -> dict[str, Any]:
        """``{"schema", "context": [message, ...], "config"}`` as plain JSON values, in
        that order: what stays the same from turn to turn first, ``config`` (whose
        ``turn`` changes every turn) last, so a server's prefix cache reuses the start
        of the request (docs/loop.md)."""
        return {
            "schema": self.schema_,
            "context": [message_data(m) for m in self.context],
            "config": self.config,
        }

    def to_json(self) -> str:
        """The request as compact JSON text (what a model adapter sends)."""
        return json.dumps(self.to_data(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Request:
        """Inverse of :meth:`to_data`; raises ``pydantic.ValidationError`` on bad shapes."""
        return cls.model_validate(dict(data))


class Solution(_Message):
    """A model's answer: ``calls`` (plan calls as JSON objects) and ``output``
    (the final answer, or ``None`` to go on)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: list[dict[str, Any]] = []
    output: Any = None
    _usage: dict[str, int] | None = PrivateAttr(default=None)

    @property
    def usage(self) -> dict[str, int] | None:
        """Token usage of the answer when the model reported it
        (``{"prompt_tokens", "completion_tokens", "total_tokens"}``), else ``None``."""
        return self._usage

    def with_usage(self, usage: Mapping[str, int] | None) -> Solution:
        """A copy of this solution that carries ``usage`` (token counts)."""
        copied = self.model_copy()
        copied._usage = None if usage is None else dict(usage)
        return copied

    def to_data(self) -> dict[str, Any]:
        """``{"calls": [...], "output": ...}``."""
        return {"calls": self.calls, "output": self.output}


def _path_text(link: Any) -> str:
    """``"calls.0.x"`` for a chain of ``(parent link, key)`` pairs (``None`` ends it)."""
    parts: list[str] = []
    while link is not None:
        link, key = link
        parts.append(str(key))
    return ".".join(reversed(parts)) or "the answer"


def _unusable_value(value: Any, max_depth: int) -> str | None:
    """Why a decoded answer cannot be used as JSON data (``"calls.0.x: ..."``), or None.

    Iterative, so any nesting is safe: a value nested deeper than ``max_depth``
    levels, an integer of more digits than Python converts to text, an object key
    that is not a string.  The path of an item is a chain of links, made into text
    only for the problem found, so a large answer is walked in linear time.
    """
    digits_limit = int_digits_limit()
    stack: list[tuple[Any, int, Any]] = [(value, 0, None)]
    while stack:
        item, depth, link = stack.pop()
        if isinstance(item, bool) or not isinstance(item, (int, dict, list)):
            continue
        if isinstance(item, int):
            if digits_limit and item.bit_length() > 3 * digits_limit:
                digits = decimal_digits(item)
                if digits > digits_limit:
                    return (
                        f"{_path_text(link)}: integer of {digits} digits is too long (Python "
                        f"converts at most {digits_limit} digits)"
                    )
            continue
        if depth >= max_depth:
            return f"{_path_text(link)}: nested deeper than {max_depth} levels"
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    kind = type(key).__name__
                    return f"{_path_text(link)}: object keys must be strings, found {kind}"
                if isinstance(child, _WALKED):  # text, numbers and null need no look
                    stack.append((child, depth + 1, (link, key)))
        else:
            stack.extend(
                (child, depth + 1, (link, n))
                for n, child in enumerate(item)
                if isinstance(child, _WALKED)
            )
    return None


_WALKED = (dict, list, int)


_SOLUTION_DEPTH = DEFAULT_LIMITS.max_argument_depth + 3
"""A solution nests at most this deep: the object, ``calls``, a call, then an argument
(``Limits.max_argument_depth``); ``output`` gets the same room."""


def parse_solution(answer: str | bytes | Mapping[str, Any] | Solution) -> Solution:
    """A :class:`Solution` from JSON text or a decoded object.

    Raises :class:`SolutionError` when the text is not JSON or the value is not
    ``{"calls": [object, ...], "output": ...}``; the message names the first
    problem and where it is (``line 1 column 9`` or ``calls.2``).  The text is read
    strictly (``NaN``, ``Infinity``, integers too long for Python and nesting too
    deep to decode are errors, located); a value nested deeper than
    ``Limits.max_argument_depth`` + 3 levels, or holding an integer too long for
    Python, is an error too (docs/limits.md).  A :class:`Solution` built by hand is
    returned as it is, after the same checks of its values.

    >>> parse_solution('{"calls": [], "output": 42}').output
    42
    >>> parse_solution('{"calls": [1]}')
    Traceback (most recent call last):
    ...
    obelisk.SolutionError: the answer does not fit the solution shape: \
calls.0: Input should be a valid dictionary
    """
    if isinstance(answer, Solution):
        problem = _unusable_value(answer.to_data(), _SOLUTION_DEPTH)
        if problem is not None:  # a Solution built by hand, nested too deep
            raise SolutionError(f"the answer cannot be used: {problem}")
        return answer
    text = None
    if isinstance(answer, (str, bytes)):
        text = answer.decode("utf-8", "replace") if isinstance(answer, bytes) else answer
        try:
            answer = loads_strict(text)
        except json.JSONDecodeError as exc:
            raise SolutionError(
                f"the answer is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                text,
            ) from None
    if not isinstance(answer, Mapping):
        raise SolutionError(
            f'the answer must be a JSON object {{"calls": [...], "output": ...}}, '
            f"got {type(answer).__name__}",
            text,
        )
    problem = _unusable_value(dict(answer), _SOLUTION_DEPTH)
    if problem is not None:
        raise SolutionError(f"the answer cannot be used: {problem}", text)
    try:
        return Solution.model_validate(dict(answer))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise SolutionError(
            f"the answer does not fit the solution shape: {where}: {first['msg']}", text
        ) from None
