"""Arguments objects, validated whole: one compiled validator per tool (docs/tools.md,
"How arguments are validated").

A function tool's parameters are compiled once, when the tool is built, into one
pydantic-core validator of the whole arguments object (:func:`compile_arguments`): a
typed dict whose fields are the core schemas of the parameters' own ``TypeAdapter``
s, so one call into pydantic-core gives exactly the values and errors that validating
one parameter at a time with those adapters gives.  A tool keeps what it validates
with in one :class:`ArgumentValidators`, whose :meth:`~ArgumentValidators.validate_object`
and :meth:`~ArgumentValidators.literal_problems` use that validator; a tool without
one (a JSON-schema tool, whose jsonschema validator is faster one property at a time,
or parameters pydantic-core could not combine) validates one name at a time with
:meth:`~ArgumentValidators.check_one`.  Each method reads the tool's public
description (:class:`ToolFacts`: name, schema, parameter names) from the tool it is
given, so a renamed copy of a tool shares its validators and reports its own name.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

from pydantic import TypeAdapter, ValidationError
from pydantic_core import CoreSchema, SchemaValidator, core_schema
from pydantic_core.core_schema import TypedDictSchema

from obelisk.errors import ArgumentProblem, ArgumentValidationError
from obelisk.interpreter.tools.validation import (
    pydantic_problem,
    pydantic_problems,
    schema_problems,
    validator_for,
)

__all__ = ["ArgumentValidators", "Compiled", "ToolFacts", "compile_arguments"]


class ToolFacts(Protocol):
    """What validation reads of a :class:`~obelisk.interpreter.tools.tool.Tool`'s
    public description."""

    name: str
    parameters: dict[str, Any]
    parameter_names: tuple[str, ...]
    required: frozenset[str]
    accepts_extra: bool

    def parameter_schema(self, name: str) -> dict[str, Any] | None: ...


class Compiled:
    """A function tool's compiled validators of an arguments object: ``one`` for one
    object (a mapping of names to values), :meth:`many` for a list of them."""

    __slots__ = ("_definitions", "_many", "_typed", "names", "one")

    def __init__(
        self, typed: TypedDictSchema, definitions: list[CoreSchema], names: frozenset[str]
    ) -> None:
        self._typed, self._definitions, self.names = typed, definitions, names
        self.one = SchemaValidator(self._wrap(typed))
        self._many: SchemaValidator | None = None

    def _wrap(self, schema: CoreSchema) -> CoreSchema:
        return (
            core_schema.definitions_schema(schema, self._definitions)
            if self._definitions
            else schema
        )

    def many(self, forbid: bool) -> SchemaValidator:
        """A list of objects; ``forbid``: names other than the parameters are errors
        (``extra_forbidden``), else kept as ``one`` keeps them.  Built on first use
        (a tool's ``forbid`` never changes)."""
        if self._many is None:
            typed = TypedDictSchema(**self._typed)  # a copy
            typed["extra_behavior"] = "forbid" if forbid else "allow"
            self._many = SchemaValidator(self._wrap(core_schema.list_schema(typed)))
        return self._many


def compile_arguments(
    adapters: Mapping[str, TypeAdapter[Any]], extra: TypeAdapter[Any] | None
) -> Compiled | None:
    """One validator for an arguments object whose fields are ``adapters``' (each
    optional: missing names are the caller's to report) and whose other names are
    kept, validated by ``extra`` when given (rejecting names is the caller's job).
    ``None`` when pydantic-core cannot combine the schemas."""
    definitions: dict[str, CoreSchema] = {}

    def unwrap(schema: CoreSchema) -> CoreSchema:  # one definitions list for all
        if schema["type"] != "definitions":
            return schema
        for definition in schema["definitions"]:
            definitions.setdefault(cast(str, definition.get("ref")), definition)
        return cast(CoreSchema, schema["schema"])

    try:
        fields = {
            name: core_schema.typed_dict_field(unwrap(adapter.core_schema), required=False)
            for name, adapter in adapters.items()
        }
        typed = core_schema.typed_dict_schema(
            fields,
            extras_schema=unwrap(extra.core_schema) if extra is not None else None,
            extra_behavior="allow",
            total=False,
        )
        return Compiled(typed, list(definitions.values()), frozenset(adapters))
    except Exception:  # e.g. refs pydantic-core would not merge: one parameter at a time
        return None


def unknown(tool: ToolFacts, name: str, loc: tuple[str, ...] = ()) -> ArgumentProblem:
    """The problem of an argument ``name`` that ``tool`` does not take, at ``loc``."""
    close = difflib.get_close_matches(name, tool.parameter_names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ArgumentProblem(loc, f"tool {tool.name!r} takes no argument {name!r}{hint}")


def _ordered(
    names: Sequence[str], found: Mapping[Any, list[ArgumentProblem]]
) -> list[ArgumentProblem]:
    """``found`` (problems by argument name) in the order of ``names``; problems under
    no given name (none expected) last."""
    problems = [p for name in names for p in found.get(name, ())]
    return problems + [p for key, ps in found.items() if key not in names for p in ps]


class ArgumentValidators:
    """What one tool validates its arguments with; each method takes the tool
    (:class:`ToolFacts`) for its name, schema and parameter names.

    - ``hidden``: names the function takes that are never arguments (the run
      context's parameter, keywords a ``functools.partial`` binds).
    - ``adapters``: a function tool's ``TypeAdapter`` by parameter name; ``extra``:
      the one for ``**kwargs`` values, when annotated; ``compiled``: the validator of
      the whole arguments object (:func:`compile_arguments`), ``None`` for a
      JSON-schema tool or parameters pydantic-core could not combine.
    - ``validator``: the jsonschema validator of the tool's ``parameters`` (``None``
      until first needed); ``sub_validators``: one per property, made from it on
      first use.
    """

    __slots__ = ("adapters", "compiled", "extra", "hidden", "sub_validators", "validator")

    def __init__(
        self,
        hidden: frozenset[str] = frozenset(),
        adapters: dict[str, TypeAdapter[Any]] | None = None,
        extra: TypeAdapter[Any] | None = None,
        compiled: Compiled | None = None,
        validator: Any = None,
    ) -> None:
        self.hidden = hidden
        self.adapters: dict[str, TypeAdapter[Any]] = adapters if adapters is not None else {}
        self.extra = extra
        self.compiled = compiled
        self.validator = validator
        self.sub_validators: dict[str, Any] = {}

    def rejects(self, tool: ToolFacts, name: str) -> bool:
        """Whether ``tool`` takes no argument ``name``."""
        return name not in tool.parameter_names and (not tool.accepts_extra or name in self.hidden)

    def check_one(
        self, tool: ToolFacts, name: str, value: Any
    ) -> tuple[list[ArgumentProblem], Any]:
        """Problems of one argument (``loc`` relative to the value) and its validated
        value (``value`` itself when invalid): what ``Tool.validate_argument``
        reports."""
        known = name in tool.parameter_names
        if not known and self.rejects(tool, name):
            return [unknown(tool, name)], value
        adapter = self.adapters.get(name) if known else self.extra
        if adapter is not None:
            try:
                return [], adapter.validate_python(value)
            except ValidationError as exc:
                return pydantic_problems(exc), value
        sub_validator = self.sub_validators.get(name)
        if sub_validator is None:
            sub = (
                tool.parameter_schema(name)
                if known
                else tool.parameters.get("additionalProperties")
            )
            if not isinstance(sub, (Mapping, bool)):
                return [], value
            if self.validator is None:  # compiled on first use, once per tool
                self.validator = validator_for(tool.parameters, tool.name, "parameters")
            sub_validator = self.sub_validators[name] = self.validator.evolve(schema=sub)
        return schema_problems(sub_validator, value), value

    def validate_object(self, tool: ToolFacts, args: Mapping[str, Any]) -> dict[str, Any]:
        """``Tool.validate_arguments``: validated values by name; raises
        :class:`ArgumentValidationError` (problems of the parameters in declaration
        order, then of the other names in ``args`` order, then missing required
        names)."""
        compiled = self.compiled
        keys = args.keys()
        if compiled is not None and keys <= compiled.names and keys >= tool.required:
            try:  # the common case: one call into pydantic-core
                return cast("dict[str, Any]", compiled.one.validate_python(args))
            except ValidationError as exc:
                raise ArgumentValidationError(tool.name, pydantic_problems(exc)) from None
        order = _report_order(tool, args)
        if compiled is None:
            found, result = self._problems_by_name(tool, args, order)
        else:
            found, result = self._problems_compiled(tool, args, compiled)
        missing = [n for n in tool.parameters.get("required") or () if n not in args]
        if found or missing:
            problems = _ordered(order, found)
            problems += [ArgumentProblem((name,), "missing required argument") for name in missing]
            raise ArgumentValidationError(tool.name, problems)
        return result

    def _problems_by_name(
        self, tool: ToolFacts, args: Mapping[str, Any], order: list[str]
    ) -> tuple[dict[Any, list[ArgumentProblem]], dict[str, Any]]:
        """``(problems by name, validated values)``, one name at a time in ``order``."""
        found: dict[Any, list[ArgumentProblem]] = {}
        result: dict[str, Any] = {}
        for name in order:
            problems, result[name] = self.check_one(tool, name, args[name])
            if problems:
                found[name] = [ArgumentProblem((name, *p.loc), p.message) for p in problems]
        return found, result

    def _problems_compiled(
        self, tool: ToolFacts, args: Mapping[str, Any], compiled: Compiled
    ) -> tuple[dict[Any, list[ArgumentProblem]], dict[str, Any]]:
        """``(problems by name, validated values)``: the names the tool rejects, then
        one call into pydantic-core for the others."""
        found: dict[Any, list[ArgumentProblem]] = {}
        given = {}
        for name, value in args.items():
            if self.rejects(tool, name):
                found[name] = [unknown(tool, name, (name,))]
            else:
                given[name] = value
        try:
            result: dict[str, Any] = compiled.one.validate_python(given)
        except ValidationError as exc:
            result = {}
            for problem in pydantic_problems(exc):
                found.setdefault(problem.loc[0] if problem.loc else None, []).append(problem)
        return found, result

    def literal_problems(
        self, tool: ToolFacts, arguments: Sequence[Mapping[str, Any]]
    ) -> list[list[ArgumentProblem]]:
        """``Tool.validate_literals``: see its docstring for the contract."""
        compiled = self.compiled
        if compiled is None:
            return [self._literal_problems_by_name(tool, given) for given in arguments]
        found: dict[int, dict[Any, list[ArgumentProblem]]] = {}  # by call, then by name
        batch = self._without_hidden(tool, arguments, found)
        try:  # one call into pydantic-core for every call's literals
            compiled.many(not tool.accepts_extra).validate_python(batch)
        except ValidationError as exc:
            for err in exc.errors():
                where, key, *_ = (*err["loc"], None)
                by_name = found.setdefault(int(where), {}).setdefault(key, [])
                by_name.append(_literal_problem(tool, err, key))
        problems: list[list[ArgumentProblem]] = [[] for _ in arguments]
        for at, grouped in found.items():
            problems[at] = _ordered(list(arguments[at]), grouped)
        return problems

    def _literal_problems_by_name(
        self, tool: ToolFacts, given: Mapping[str, Any]
    ) -> list[ArgumentProblem]:
        """The problems of one call's literals, one name at a time."""
        return [
            ArgumentProblem((name, *p.loc), p.message)
            for name, value in given.items()
            for p in self.check_one(tool, name, value)[0]
        ]

    def _without_hidden(
        self,
        tool: ToolFacts,
        arguments: Sequence[Mapping[str, Any]],
        found: dict[int, dict[Any, list[ArgumentProblem]]],
    ) -> Sequence[Mapping[str, Any]]:
        """``arguments`` without the hidden names of a tool that takes extra names
        (each one an unknown argument in ``found``): pydantic would accept them."""
        hidden = self.hidden
        if not (tool.accepts_extra and hidden):
            return arguments if isinstance(arguments, list) else list(arguments)
        batch = []
        for at, given in enumerate(arguments):
            if any(name in hidden for name in given):
                for name in given:
                    if name in hidden:
                        found.setdefault(at, {})[name] = [unknown(tool, name, (name,))]
                given = {n: v for n, v in given.items() if n not in hidden}
            batch.append(given)
        return batch


def _literal_problem(tool: ToolFacts, err: Any, key: Any) -> ArgumentProblem:
    """The problem of one pydantic error of a batch of calls' literals, ``loc``
    starting at the argument name (an extra name is an unknown argument)."""
    if err["type"] == "extra_forbidden":  # a name the tool does not take
        return unknown(tool, str(key), (str(key),))
    problem = pydantic_problem(err)
    return ArgumentProblem(problem.loc[1:], problem.message)


def _report_order(tool: ToolFacts, args: Mapping[str, Any]) -> list[str]:
    """The names of ``args`` in the order their problems are reported: the tool's
    parameters in declaration order, then the other names in ``args`` order."""
    order = [n for n in tool.parameter_names if n in args]
    order += [n for n in args if n not in tool.parameter_names]
    return order
