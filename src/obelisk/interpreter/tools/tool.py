"""Tools: what a plan's ``_tool`` names (docs/language.md, docs/architecture.md).

A :class:`Tool` is a function, or a latent (schema-only) description, plus the JSON
schemas of its arguments and result and the options the scheduler honours
(docs/semantics.md).  :func:`tool` declares one from a Python function; :class:`Registry` holds
the tools a plan may call.  Declaration problems raise
:class:`~obelisk.errors.ToolDefinitionError`; bad argument values raise
:class:`ArgumentValidationError` (code ``invalid_argument``, docs/diagnostics.md).
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any, Literal, cast

from pydantic import TypeAdapter, ValidationError

from obelisk.errors import ArgumentProblem, ToolDefinitionError
from obelisk.interpreter.tools import signatures
from obelisk.interpreter.tools.arguments import ArgumentValidators
from obelisk.interpreter.tools.descriptions import match_description, read_description
from obelisk.interpreter.tools.options import (
    OutputValidation,
    RetryPolicy,
    check_blocking,
    check_context_parameter,
    check_effects,
    check_function_options,
    check_options,
    check_output_validation,
    check_scopes,
)
from obelisk.interpreter.tools.policies import PolicyCall, Rules, check_rules, tuple_of
from obelisk.interpreter.tools.remote import Remote, remote_options
from obelisk.interpreter.tools.signatures import Built, Signature, build, is_async, read_function
from obelisk.interpreter.tools.validation import (
    bad,
    pydantic_problems,
    schema_problems,
    validator_for,
)

__all__ = ["Tool", "tool"]

_DEFERRED = ("parameters", "output_schema", "_arguments", "_output_adapter")
"""What a deferred tool (:func:`standard_tool`) builds on first use."""


def _finish(
    signature: Signature,
    output_schema: Mapping[str, Any] | None,
    hidden: frozenset[str],
    tool: Tool,
) -> None:
    """Build a deferred tool's adapters and schemas (see :func:`standard_tool`);
    ``hidden``: the names its arguments validators reject (the run context, bound
    keywords)."""
    built = build(tool.name, signature, output_schema)
    found = built.parameters
    if (
        tuple(found["properties"]) != tool.parameter_names
        or frozenset(found["required"]) != tool.required
        or (found.get("additionalProperties", True) is not False) != tool.accepts_extra
    ):
        raise bad(tool.name, "its arguments schema does not match its signature")
    tool._install(built, output_schema, hidden)
    tool._pending = None


@dataclass(eq=False, repr=False, slots=True)
class Tool:
    """A callable tool, or a latent (schema-only) one (docs/language.md, docs/loop.md).

    Build with :meth:`from_function` / :func:`tool` or :meth:`from_schema`.

    - ``parameters``: JSON schema of the arguments object, ``{"type": "object",
      "properties", "required", "additionalProperties": false, "$defs"?}``
      (``additionalProperties`` is absent or a schema when extra names are allowed).
    - ``output_schema``: JSON schema of the result; ``None`` = unknown.
    - ``function``: ``None`` for a latent tool, whose result the model writes.
    - ``outcomes``: names usable as :class:`Outcome` ``k`` (docs/language.md).
    - ``timeout``: seconds per attempt; ``capacity``: max concurrent calls;
      ``None`` = no limit (docs/semantics.md).  ``pure``: no side effects.
    - ``idempotent``: running a call twice with the same arguments has the effect of
      running it once; a durable run resumed after a crash runs such a call again
      when it was in flight, instead of reporting it ``unknown`` (docs/durable.md).
    - ``effects``: the world resources the tool touches, ``{"slack.users": "read" |
      "write"}``; calls whose effects conflict run in plan order (docs/semantics.md).
    - ``requires_approval``: ``True``, or a function of the call's validated
      arguments (as the function would get them) returning ``True``, pauses a call
      until a person decides (docs/approvals.md).
    - ``retry``: a :class:`RetryPolicy`, or ``None`` to try once.
    - ``isolation``: ``"thread"`` (default: a sync tool runs in a worker thread) or
      ``"process"`` (a worker process, stopped for good at its timeout; the function
      must be sync, at module level, and its arguments and result picklable;
      docs/tools.md).
    - ``blocking``: ``True`` (default) for a sync function that may block, which runs
      in a worker thread; ``False`` for a quick sync function, called on the event
      loop itself without a thread (a timeout then cannot stop it, only fail it once
      it returns late; docs/tools.md).
    - ``output_validation``: ``"strict"``, ``"warn"``, ``"off"``: what a call does with a
      result that does not fit ``output_schema``; ``None`` takes the run's setting (a
      tool's own wins; docs/tools.md, "Output validation").
    - ``delegate``: a latent tool whose call runs as an isolated sub-request of
      the execution loop (docs/loop.md); ``scopes`` names the parent context it
      takes (``state``, ``data``, ``text``; its input is always the arguments).
    - ``context_parameter``: the name of the function's parameter that receives the
      run's :class:`~obelisk.interpreter.tools.run_context.Context` (``obelisk.Context[T]``,
      docs/tools.md); it is not in ``parameters`` and a plan cannot pass it.
    - ``output_trust``, ``trusted_args``, ``on_untrusted``, ``audience_arg``,
      ``policy``: labels and policies, gathered in ``rules`` (docs/security.md).
    - ``remote``: a :class:`~obelisk.interpreter.tools.remote.Remote` (``None``: a local
      tool): its calls run as Ray tasks under ``obelisk.RayExecutor`` (docs/scale.md).
    - ``parameter_names`` (declaration order), ``required``, ``accepts_extra`` and
      ``is_async`` are derived.  Bad options raise :class:`ToolDefinitionError`.
    """

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    function: Callable[..., Any] | None = None
    outcomes: tuple[str, ...] = ()
    timeout: float | None = None
    capacity: int | None = None
    pure: bool = False
    retry: RetryPolicy | None = None
    delegate: bool = False
    scopes: tuple[str, ...] = ()
    effects: dict[str, str] = field(default_factory=dict)
    requires_approval: bool | Callable[[dict[str, Any]], bool] = False
    context_parameter: str | None = None
    idempotent: bool = False
    isolation: Literal["thread", "process"] = "thread"
    blocking: bool = True
    output_validation: OutputValidation | None = None
    output_trust: Literal["trusted", "untrusted"] = "trusted"
    trusted_args: tuple[str, ...] = ()
    on_untrusted: Literal["ask", "deny"] = "ask"
    audience_arg: str | None = None
    policy: Callable[[PolicyCall], Any] | None = None
    remote: Remote | None = None
    rules: Rules = field(init=False)
    parameter_names: tuple[str, ...] = field(init=False)
    required: frozenset[str] = field(init=False)
    accepts_extra: bool = field(init=False)
    is_async: bool = field(init=False)
    _arguments: ArgumentValidators = field(init=False, default_factory=ArgumentValidators)
    _output_adapter: TypeAdapter[Any] | None = field(init=False, default=None)
    _output_validator: Any = field(init=False, default=None)
    _closed_output: tuple[dict[str, Any] | None] | None = field(init=False, default=None)
    _pending: Callable[[Tool], None] | None = field(init=False, default=None)  # builds _DEFERRED
    _checked: InitVar[bool] = False  # from_schema checked the schemas already

    def __post_init__(self, _checked: bool) -> None:
        name = self.name
        if not _checked:  # from_schema checked the options with the description
            check_options(name, self.outcomes, self.timeout, self.capacity, self.pure)
        self.outcomes = tuple(self.outcomes)
        if not isinstance(self.idempotent, bool):
            raise bad(name, f"idempotent must be true or false, got {self.idempotent!r}")
        self.scopes = check_scopes(name, self.scopes)
        if self.output_validation is not None:
            check_output_validation(self.output_validation, name)
        self.effects = check_effects(name, self.effects)
        check_function_options(
            name,
            self.function,
            isolation=self.isolation,
            requires_approval=self.requires_approval,
            delegate=self.delegate,
            context_parameter=self.context_parameter,
        )
        self.timeout = None if self.timeout is None else float(self.timeout)
        self.parameter_names = tuple(self.parameters.get("properties") or ())
        self.required = frozenset(self.parameters.get("required") or ())
        self.accepts_extra = self.parameters.get("additionalProperties", True) is not False
        self.rules = check_rules(self)  # labels and policies (docs/security.md)
        self.trusted_args = self.rules.trusted_args
        if self.context_parameter is not None:
            check_context_parameter(name, self.context_parameter, self.function)
            self._arguments.hidden = frozenset((self.context_parameter,))
        if self.function is None and not _checked:  # schema-only: validate with jsonschema
            self._arguments.validator = validator_for(self.parameters, name, "parameters")
            if self.output_schema is not None:
                self._output_validator = validator_for(self.output_schema, name, "output_schema")
        self.is_async = is_async(self.function)
        check_blocking(name, self.blocking, self.function, self.is_async, self.isolation)

    def needs_approval(self, arguments: dict[str, Any]) -> bool:
        """Whether a call with these arguments waits for a person.  A predicate
        that raises counts as ``True`` (ask rather than guess).  Runs and dry runs
        give it the validated arguments (``runtime.approvals.needs_approval``)."""
        rule = self.requires_approval
        if isinstance(rule, bool):
            return rule
        try:
            return bool(rule(arguments))
        except Exception:
            return True

    @property
    def built(self) -> bool:
        """True once the tool's schemas and validators exist: at declaration for
        ``@tool``, on first use for the standard tools (docs/tools.md)."""
        return self._pending is None

    @property
    def latent(self) -> bool:
        """True for a schema-only tool (no function; the model produces the result)."""
        return self.function is None

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        outcomes: Iterable[str] = (),
        timeout: float | None = None,
        capacity: int | None = None,
        pure: bool = False,
        output_schema: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        effects: Mapping[str, str] | None = None,
        requires_approval: bool | Callable[[dict[str, Any]], bool] = False,
        idempotent: bool = False,
        isolation: Literal["thread", "process"] = "thread",
        blocking: bool = True,
        output_validation: OutputValidation | None = None,
        output_trust: Literal["trusted", "untrusted"] = "trusted",
        trusted_args: Iterable[str] = (),
        on_untrusted: Literal["ask", "deny"] = "ask",
        audience_arg: str | None = None,
        policy: Callable[[PolicyCall], Any] | None = None,
        remote: bool = False,
        num_cpus: float | None = None,
        num_gpus: float | None = None,
        resources: Mapping[str, float] | None = None,
        _deferred: bool = False,
    ) -> Tool:
        """Declare a tool from a sync or async function's signature, via pydantic.

        ``name`` defaults to ``fn.__name__``, ``description`` to the docstring.
        Unannotated parameters take any JSON value; parameters with defaults are
        optional; ``**kwargs`` allows extra names; ``Annotated[T, Field(...)]`` adds
        descriptions and constraints.  A parameter annotated ``obelisk.Context[T]``
        receives the run's context and is left out of the schema (docs/tools.md); so are
        the keywords a ``functools.partial`` binds.  The return annotation gives
        ``output_schema`` (the result *as written to the state*; none for ``Any`` or
        :class:`Outcome`) unless one is passed.  Raises :class:`ToolDefinitionError` for
        ``*args`` or positional-only parameters, two context parameters, unresolvable
        hints, types without a JSON schema, bad options.  The other options are the
        class docstring's: ``output_validation`` (docs/tools.md), labels and policies
        (docs/security.md), ``remote`` with what one call needs (docs/scale.md)."""
        options = (outcomes, timeout, capacity, pure)
        read = read_function(fn, name, description, options, output_schema, _deferred)
        where = (remote, num_cpus, num_gpus, resources, read.signature.context)
        self = cls(
            read.name,
            read.description,
            read.parameters,
            dict(output_schema) if output_schema is not None else None,
            fn,
            read.outcomes,
            timeout,
            capacity,
            pure,
            retry,
            effects=effects if effects is not None else {},  # type: ignore[arg-type]  # checked
            requires_approval=requires_approval,
            context_parameter=read.signature.context,
            idempotent=idempotent,
            isolation=isolation,
            blocking=blocking,
            output_validation=output_validation,
            output_trust=output_trust,
            trusted_args=tuple_of(trusted_args),
            on_untrusted=on_untrusted,
            audience_arg=audience_arg,
            policy=policy,
            remote=remote_options(read.name, *where),
        )
        hidden = self._arguments.hidden | read.bound
        if read.built is None:  # __getattr__ builds them on first use
            self._pending = functools.partial(_finish, read.signature, output_schema, hidden)
            for slot in _DEFERRED:
                if slot != "output_schema" or output_schema is None:
                    object.__delattr__(self, slot)
        else:
            self._install(read.built, output_schema, hidden)
        return self

    def _install(
        self, built: Built, output_schema: Mapping[str, Any] | None, hidden: frozenset[str]
    ) -> None:
        self.parameters = built.parameters
        self._arguments = ArgumentValidators(hidden, built.adapters, built.extra, built.compiled)
        self._output_adapter = built.output[0] if built.output else None
        if output_schema is not None:
            self._output_validator = validator_for(self.output_schema, self.name, "output_schema")
        else:
            self.output_schema = built.output[1] if built.output else None

    if not typing.TYPE_CHECKING:  # mypy keeps seeing only the declared attributes

        def __getattr__(self, name: str) -> Any:
            """A deferred tool's schemas and adapters, built on first use (called
            only for an attribute that is not set)."""
            if name in _DEFERRED:
                try:
                    pending = object.__getattribute__(self, "_pending")
                except AttributeError:  # a copy under construction
                    pending = None
                if pending is not None:
                    pending(self)
                    return object.__getattribute__(self, name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def from_schema(
        cls,
        spec: Mapping[str, Any],
        *,
        function: Callable[..., Any] | None = None,
        context_parameter: str | None = None,
        retry: RetryPolicy | None = None,
        output_validation: OutputValidation | None = None,
        policy: Callable[[PolicyCall], Any] | None = None,
    ) -> Tool:
        """Declare a tool from a JSON tool description (docs/tools.md); latent
        (schema only) without ``function``, runnable with it.

        Shapes (``description`` fields are optional, obelisk's keys are
        ``outcomes``, ``timeout``, ``capacity``, ``pure``, ``idempotent``,
        ``_delegate``, ``_scopes``, ``effects``, ``requires_approval``, and
        ``output_trust``, ``trusted_args``, ``on_untrusted``, ``audience_arg``):

        - obelisk's own: ``{"name", "description", "parameters", "output", ...}``
          (``input_schema`` is an alias of ``parameters``, ``output_schema`` of
          ``output``; no ``parameters`` = no arguments; ``"type": "function"`` and
          ``strict`` may appear, as in OpenAI's Responses API);
        - OpenAI function tool: ``{"type": "function", "function": {"name",
          "description", "parameters", "strict"}}``, obelisk's keys beside
          ``function`` or inside it;
        - MCP tool: ``{"name", "title", "description", "inputSchema",
          "outputSchema", "annotations", "icons", "execution", "_meta"}``
          (``title`` stands in for a missing ``description``; ``annotations.readOnlyHint:
          true`` makes the tool ``pure`` unless ``pure`` is given,
          ``annotations.idempotentHint: true`` makes it ``idempotent`` unless
          ``idempotent`` is given, ``openWorldHint: true`` makes ``output_trust``
          untrusted unless given; other hints are ignored).

        ``strict`` is accepted and changes nothing: arguments are always validated
        against ``parameters``.  Schemas are checked once per distinct schema with
        the jsonschema validator their ``$schema`` names (default draft 2020-12) and
        compiled on first use.  Extra argument names are allowed unless
        ``additionalProperties`` is false (or ``function`` takes no ``**kwargs``).

        With ``function`` (sync or async), a call validates its arguments against
        ``parameters`` and calls ``function(**arguments)``; results are checked
        against the output schema.  The function's keyword parameters must match
        the schema's properties: every property is a parameter (or the function
        takes ``**kwargs``), and every parameter without a default is a required
        property.  ``context_parameter`` names the parameter that receives the
        run's ``obelisk.Context``; by default a parameter annotated
        ``obelisk.Context[T]`` is found.  Keywords bound by ``functools.partial``
        are never arguments.  ``retry`` is a :class:`RetryPolicy`; ``output_validation``
        and ``policy`` are as in :meth:`from_function`.

        Raises :class:`ToolDefinitionError` naming the tool and the key: a missing
        ``name``, an unknown key (the message lists the allowed ones), a schema
        that is invalid or not an object schema, bad options, a function whose
        parameters do not match the properties.
        """
        found = read_description(spec)
        interface, context_parameter = match_description(found, function, context_parameter)
        made = cls(
            found.name,
            found.description,
            found.parameters,
            found.output,
            function,
            **found.options,
            retry=retry,
            delegate=found.delegate,
            scopes=found.scopes,
            context_parameter=context_parameter,
            effects=found.effects if found.effects is not None else {},
            requires_approval=found.requires_approval,
            idempotent=found.idempotent,
            output_validation=output_validation,
            _checked=True,
            **{**found.labels, "policy": policy},  # labels and policies: docs/security.md
        )
        if interface is not None:
            made._arguments.hidden |= interface.bound
            if not interface.var_keyword:
                made.accepts_extra = False  # the function could not take them
        return made

    def parameter_schema(self, name: str) -> dict[str, Any] | None:
        """JSON schema of parameter ``name`` (any ``$ref`` resolves against
        ``parameters``), or ``None`` when the tool has no such parameter."""
        return cast("dict[str, Any] | None", (self.parameters.get("properties") or {}).get(name))

    def validate_argument(self, name: str, value: Any) -> list[ArgumentProblem]:
        """Problems of one argument value (JSON) for parameter ``name``, each
        ``loc`` relative to the value; ``[]`` = valid.  An unknown name (when extra
        names are not allowed) is one problem at ``loc == ()``."""
        return self._arguments.check_one(self, name, value)[0]

    def validate_arguments(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Validate a whole arguments object; return the validated arguments by
        name (coerced by pydantic for function tools, ready for
        ``function(**result)``; defaults are left to the function, so a parameter
        not given is not in the result; an ``Any`` value is returned as is, the same
        object).  A function tool validates the object in one call to its compiled
        validator (docs/tools.md, "How arguments are validated").

        Raises :class:`ArgumentValidationError` listing every invalid, unexpected
        and missing argument, in that order (invalid ones in declaration order, then
        the other names as ``args`` orders them); each ``loc`` starts with the
        argument name.
        """
        return self._arguments.validate_object(self, args)

    def validate_literals(
        self, arguments: Sequence[Mapping[str, Any]]
    ) -> list[list[ArgumentProblem]]:
        """Problems of the given arguments of many calls of this tool, checked in one
        go (what a plan's check does with literal arguments; docs/tools.md, "How
        arguments are validated").

        ``arguments[i]`` maps the names to check of call ``i`` (typically its literal
        arguments; leave out those a reference fills) to JSON values.  Returns one
        list per mapping, in order: for each name in that mapping's order, exactly the
        problems ``validate_argument(name, value)`` gives, each ``loc`` prefixed with
        ``name`` (an unknown name is one problem at ``loc == (name,)``).  A required
        name absent from a mapping is not a problem here.  ``[]`` = all valid.  Raises
        only what a validator itself raises (a custom pydantic validator that breaks).
        """
        return self._arguments.literal_problems(self, arguments)

    @property
    def typed_output(self) -> bool:
        """True when the function's return annotation checks results: pydantic
        validates the value the function returned, as Python data, before it is
        turned into JSON (docs/semantics.md).  False when a JSON ``output_schema``
        (or nothing) checks the JSON data."""
        return self._output_adapter is not None

    @property
    def closed_output_schema(self) -> dict[str, Any] | None:
        """:attr:`output_schema` as ``check`` reads it (docs/diagnostics.md): made from
        the return annotation, the objects of pydantic models and dataclasses (without
        ``extra="allow"``) are closed, as their results hold their fields only."""
        if self._closed_output is None:
            adapter = self._output_adapter
            closed = signatures.closed_output_schema(adapter) if adapter is not None else None
            self._closed_output = (closed if closed is not None else self.output_schema,)
        return self._closed_output[0]

    def validate_output(self, value: Any) -> list[ArgumentProblem]:
        """Problems of a result value (``[]`` = valid, also when the output is
        unknown): against the return annotation, as Python data, when
        :attr:`typed_output`; else JSON data against ``output_schema``."""
        if self._output_adapter is not None:
            try:
                self._output_adapter.validate_python(value)
            except ValidationError as exc:
                return pydantic_problems(exc)
        elif self.output_schema is not None:
            if self._output_validator is None:  # compiled on first use, once per tool
                self._output_validator = validator_for(
                    self.output_schema, self.name, "output_schema"
                )
            return schema_problems(self._output_validator, value)
        return []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function directly, without validation.  Raises
        :class:`ToolDefinitionError` for a latent tool."""
        if self.function is None:
            raise ToolDefinitionError(
                f"tool {self.name!r} is latent (schema only); it cannot be called"
            )
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, params={list(self.parameter_names)!r}, latent={self.latent})"


@typing.overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@typing.overload
def tool(**options: Any) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Decorator: turn a sync or async function into a :class:`Tool`.

    Use bare (``@tool``) or with the keywords of :meth:`Tool.from_function`:
    ``name``, ``description``, ``outcomes`` (names for :class:`Outcome`,
    docs/language.md), ``timeout`` (seconds), ``capacity`` (max concurrent calls), ``pure``,
    ``idempotent`` (docs/durable.md), ``output_schema``, ``retry``, ``effects``,
    ``requires_approval``, ``blocking`` (``False``: a quick sync function runs on the
    event loop, not in a thread), ``output_validation`` (docs/tools.md),
    ``output_trust``, ``trusted_args``, ``on_untrusted``, ``audience_arg``, ``policy``
    (docs/security.md), ``remote``, ``num_cpus``, ``num_gpus``, ``resources`` (a Ray
    task per call, docs/scale.md).  Raises
    :class:`ToolDefinitionError` as that method does.

    >>> @tool(outcomes=["ok", "declined"], timeout=2.5)
    ... def refund(customer_id: str, amount: float = 0.0) -> dict[str, str]:
    ...     "Refund a customer."
    ...     return {"customer": customer_id}
    >>> refund
    Tool('refund', params=['customer_id', 'amount'], latent=False)
    >>> sorted(refund.required), refund.description, refund.outcomes, refund.timeout
    (['customer_id'], 'Refund a customer.', ('ok', 'declined'), 2.5)
    >>> refund("c1")
    {'customer': 'c1'}
    """
    if fn is not None:
        return Tool.from_function(fn, **options)
    return lambda f: Tool.from_function(f, **options)


def standard_tool(**options: Any) -> Callable[[Callable[..., Any]], Tool]:
    """Decorator for obelisk's own (trusted) tools: :func:`tool` with the same
    keywords, except that the pydantic adapters and JSON schemas are built on first
    use (``parameters``, ``output_schema``, validation) instead of at declaration,
    so importing the standard tools and building a registry of them stays cheap.

    The signature is read at once (names, required parameters, ``**kwargs``, the
    run context); a type without a JSON schema raises
    :class:`ToolDefinitionError` when first used, so a test builds every standard
    tool.  Not for user tools, whose mistakes belong at declaration.
    """

    return lambda fn: Tool.from_function(fn, **options, _deferred=True)
