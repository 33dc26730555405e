"""Tool options: names, outcomes, timeouts, capacities, retries, delegation, output
validation, isolation, blocking, approvals.

Documented in docs/language.md (outcomes), docs/semantics.md (capacity, timeouts,
retries, effects), docs/tools.md (output validation, isolation, blocking, the run
context), docs/approvals.md and docs/loop.md (delegates).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from obelisk.errors import ToolDefinitionError
from obelisk.interpreter.tools.effects import resource_problem
from obelisk.interpreter.tools.validation import bad

__all__ = [
    "EFFECT_ACCESS",
    "OUTPUT_VALIDATION",
    "SCOPES",
    "Outcome",
    "OutputValidation",
    "RetryPolicy",
    "check_blocking",
    "check_context_parameter",
    "check_effects",
    "check_function_options",
    "check_options",
    "check_output_validation",
    "check_scopes",
]

Loc = tuple[str | int, ...]
# Any visible name: no control characters, no surrounding whitespace.  Real
# catalogs use spaces ("requestFirst Aid Assistance" in Seal-Tools).
_NAME = re.compile(r"[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?")
_NAME_RULE = "a non-empty string without control characters or surrounding whitespace"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often a failing call is tried again before it counts as failed (docs/semantics.md).

    ``attempts``: total tries, at least 1.  ``backoff``: seconds before the second
    try, doubling for each further one (exponential backoff, no jitter).
    ``retry_on``: exception types that are retried; others fail at once.  A
    timeout (``TimeoutError``) is retried when it is listed.  Applied by the
    engine with tenacity.  Raises :class:`ToolDefinitionError` for bad values.
    """

    attempts: int = 3
    backoff: float = 0.0
    retry_on: tuple[type[BaseException], ...] = (Exception,)

    def __post_init__(self) -> None:
        if type(self.attempts) is not int or self.attempts < 1:
            raise ToolDefinitionError(
                f"retry attempts must be an integer >= 1, got {self.attempts!r}"
            )
        if type(self.backoff) not in (int, float) or self.backoff < 0:
            raise ToolDefinitionError(f"retry backoff must be >= 0 seconds, got {self.backoff!r}")
        types = self.retry_on if isinstance(self.retry_on, tuple) else (self.retry_on,)
        if not types or not all(
            isinstance(t, type) and issubclass(t, BaseException) for t in types
        ):
            raise ToolDefinitionError(f"retry_on must be exception types, got {self.retry_on!r}")
        object.__setattr__(self, "retry_on", types)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A tool result that picks its output alternative (docs/language.md).

    ``k`` is the 0-based index of the alternative in the call's ``_outputPath``
    (``a || b || c``) or a name the tool declares in ``outcomes=``; ``value`` is
    the JSON value written there.
    """

    k: int | str
    value: Any


def _unique_names(outcomes: Any) -> bool:
    if not isinstance(outcomes, (list, tuple)):
        return False
    return all(o and isinstance(o, str) for o in outcomes) and len(set(outcomes)) == len(outcomes)


def _positive_seconds(timeout: Any) -> bool:
    return timeout is None or (type(timeout) in (int, float) and timeout > 0)


def _positive_int(capacity: Any) -> bool:
    return capacity is None or (type(capacity) is int and capacity >= 1)


_OPTION_RULES: tuple[tuple[Callable[[Any], bool], str], ...] = (
    (_unique_names, "outcomes must be a list of unique non-empty strings, got {!r}"),
    (_positive_seconds, "timeout must be a positive number of seconds, got {!r}"),
    (_positive_int, "capacity must be an integer >= 1, got {!r}"),
    (lambda pure: isinstance(pure, bool), "pure must be true or false, got {!r}"),
)
"""The rule of each option :func:`check_options` takes, in its order, and the message
of a value that breaks it."""


def check_options(name: Any, outcomes: Any, timeout: Any, capacity: Any, pure: Any) -> None:
    """Check a tool's name and its ``outcomes``, ``timeout`` (seconds), ``capacity``
    (calls) and ``pure``; raises :class:`ToolDefinitionError` for the first bad one."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ToolDefinitionError(f"invalid tool name {name!r}: must be {_NAME_RULE}")
    for (rule, message), value in zip(
        _OPTION_RULES, (outcomes, timeout, capacity, pure), strict=True
    ):
        if not rule(value):
            raise bad(name, message.format(value))


SCOPES = ("data", "state", "text")
"""Parent context a delegate's sub-request may take (``_scopes``, docs/loop.md):
``state`` the parent's current state, ``data`` its data documents, ``text`` its
instructions.  The sub-request's input is always the call's arguments."""


def check_scopes(name: str, scopes: Any) -> tuple[str, ...]:
    """``scopes`` as a tuple; raises :class:`ToolDefinitionError` for unknown ones."""
    if isinstance(scopes, str) or not isinstance(scopes, (list, tuple)):
        raise bad(name, f"scopes must be a list drawn from {list(SCOPES)}, got {scopes!r}")
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise bad(name, f"unknown scope {unknown[0]!r}; scopes are {', '.join(SCOPES)}")
    return tuple(dict.fromkeys(scopes))


OutputValidation = Literal["strict", "warn", "off"]
"""What a call does with a result that does not fit its tool's output schema or return
annotation (docs/tools.md, "Output validation"): ``strict`` (the default) settles it
``invalid_output`` and writes nothing; ``warn`` writes the value as returned and keeps
a warning in the call's record; ``off`` writes it without a word."""
OUTPUT_VALIDATION: tuple[OutputValidation, ...] = ("strict", "warn", "off")


def check_output_validation(value: Any, tool: str | None = None) -> OutputValidation:
    """``value`` when it is one of :data:`OUTPUT_VALIDATION`.  Otherwise raises
    :class:`ToolDefinitionError` naming ``tool``, or without a tool a
    :class:`ValueError` (the caller turns it into its own error class)."""
    if isinstance(value, str) and value in OUTPUT_VALIDATION:
        return value
    message = f"output_validation must be 'strict', 'warn' or 'off', got {value!r}"
    raise ValueError(message) if tool is None else bad(tool, message)


EFFECT_ACCESS = ("read", "write")
"""How a tool may touch a world resource (``effects=``, docs/semantics.md)."""


def check_effects(name: str, effects: Any) -> dict[str, str]:
    """``effects`` as a ``{resource: "read" | "write"}`` dict, checked.

    A resource is a dotted name such as ``"slack.users"``: non-empty segments
    without whitespace, ``:`` or control characters, optionally followed by ``:`` and
    a relative path (``"files:notes/a.txt"``) or one argument (``"files:{path}"``,
    :mod:`~obelisk.interpreter.tools.effects`).  Raises :class:`ToolDefinitionError`
    for anything else.
    """
    if effects is None:
        return {}
    if not isinstance(effects, Mapping):
        raise bad(name, f'effects must be an object such as {{"slack": "write"}}, got {effects!r}')
    checked: dict[str, str] = {}
    for resource, access in effects.items():
        problem = resource_problem(resource)
        if problem is not None:
            raise bad(name, problem)
        if access not in EFFECT_ACCESS:
            raise bad(name, f"effect on {resource!r} must be 'read' or 'write', got {access!r}")
        checked[resource] = access
    return checked


def check_function_options(
    name: str,
    function: Callable[..., Any] | None,
    *,
    isolation: Any,
    requires_approval: Any,
    delegate: Any,
    context_parameter: Any,
) -> None:
    """Check the options that depend on the tool's function (``None`` for a latent
    tool): ``isolation``, ``requires_approval``, ``delegate`` and ``context_parameter``
    (docs/tools.md, docs/approvals.md, docs/loop.md).  Raises
    :class:`ToolDefinitionError` for the first bad one, in that order."""
    if isolation not in ("thread", "process"):
        raise ToolDefinitionError(
            f"tool {name!r}: isolation must be 'thread' or 'process', got {isolation!r}"
        )
    if isolation == "process" and (
        function is None or inspect.iscoroutinefunction(function) or context_parameter is not None
    ):
        raise ToolDefinitionError(
            f"tool {name!r}: isolation='process' needs a sync function without "
            "a run context (its arguments and result travel to another process)"
        )
    if not (isinstance(requires_approval, bool) or callable(requires_approval)):
        raise ToolDefinitionError(
            f"tool {name!r}: requires_approval must be true, false or a function "
            f"of the arguments, got {requires_approval!r}"
        )
    if not isinstance(delegate, bool) or (delegate and function is not None):
        raise ToolDefinitionError(
            f"tool {name!r}: delegate must be true or false, and only on a latent tool"
        )


def check_context_parameter(name: str, context_parameter: Any, function: Any) -> None:
    """``context_parameter`` is a name, and given only with a function (docs/tools.md)."""
    if not isinstance(context_parameter, str) or function is None:
        raise bad(name, "context_parameter must be a name, and only on a function")


def check_blocking(name: str, blocking: Any, function: Any, is_async: bool, isolation: Any) -> None:
    """``blocking`` is true or false, and false only for a sync function run in a
    thread (docs/tools.md)."""
    if blocking is True:
        return
    if blocking is not False or function is None or is_async or isolation == "process":
        raise ToolDefinitionError(
            f"tool {name!r}: blocking must be true or false, and false only for a "
            f"sync function run in a thread (got {blocking!r})"
        )
