"""Function tools' signatures, read into JSON schemas by pydantic (docs/tools.md).

:func:`read_signature` reads what :meth:`Tool.from_function
<obelisk.interpreter.tools.tool.Tool.from_function>` needs from a function without
any pydantic work (parameter names, which are required, ``**kwargs``, the run
context); :func:`build` makes the pydantic adapters and JSON schemas, the costly
part, which standard tools defer to first use.  Problems raise
:class:`~obelisk.errors.ToolDefinitionError`.
"""

from __future__ import annotations

import copy
import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from pydantic import Field, TypeAdapter, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import core_schema

from obelisk.interpreter.tools.arguments import Compiled, compile_arguments
from obelisk.interpreter.tools.labels import Labeled
from obelisk.interpreter.tools.options import Outcome, check_options
from obelisk.interpreter.tools.run_context import is_context_annotation
from obelisk.interpreter.tools.validation import bad

__all__ = [
    "Built",
    "Declared",
    "Signature",
    "build",
    "closed_output_schema",
    "read_function",
    "read_signature",
]


def _adapter(
    tool_name: str, what: str, annotation: Any, mode: JsonSchemaMode = "validation"
) -> tuple[TypeAdapter[Any], dict[str, Any]]:
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        return adapter, adapter.json_schema(mode=mode)
    except Exception as exc:
        reason = str(exc).strip().split("\n")[0].split(". ")[0].rstrip(".")
        raise bad(tool_name, f"{what} has no JSON schema: {reason}") from None


@dataclass(frozen=True, slots=True)
class Signature:
    """A function's parameters as a tool reads them, before any pydantic work."""

    fields: tuple[tuple[int, str, Any, Any], ...]  # (position, name, annotation, default or ...)
    extra: tuple[str, Any] | None  # **kwargs: its name and annotation (Any when none)
    context: str | None  # the parameter that takes the run context
    returns: Any  # the return annotation (Any when none)

    def outline(self) -> dict[str, Any]:
        """The arguments schema without the parameters' schemas: the names, which are
        required and whether extra names are allowed (what ``Tool`` derives)."""
        required = [
            name
            for _, name, _, default in self.fields
            if default is ... or (isinstance(default, FieldInfo) and default.is_required())
        ]
        outline: dict[str, Any] = {
            "type": "object",
            "properties": {name: {} for _, name, _, _ in self.fields},
            "required": required,
        }
        if self.extra is None:
            outline["additionalProperties"] = False
        return outline


def read_signature(
    fn: Callable[..., Any], target: Any, tool_name: str, bound: frozenset[str]
) -> Signature:
    try:
        signature = inspect.signature(fn)
        source = target if inspect.isroutine(target) else type(target).__call__
        hints = typing.get_type_hints(source, include_extras=True)
    except Exception as exc:
        raise bad(tool_name, f"cannot read the signature: {exc}") from None
    fields: list[tuple[int, str, Any, Any]] = []
    extra: tuple[str, Any] | None = None
    context: str | None = None
    for index, param in enumerate(signature.parameters.values()):
        annotation = hints.get(param.name, Any)
        if param.name in bound and param.kind is not param.VAR_KEYWORD:
            continue  # bound by functools.partial: not the model's to pass
        if param.kind in (param.VAR_POSITIONAL, param.POSITIONAL_ONLY):
            raise bad(
                tool_name, f"parameter {param.name!r} is positional; tools take named arguments"
            )
        if is_context_annotation(annotation):
            if context is not None:
                raise bad(
                    tool_name,
                    f"parameters {context!r} and {param.name!r} both take the run context;"
                    " a tool has at most one",
                )
            context = param.name
            continue
        default = ... if param.default is param.empty else param.default
        if isinstance(default, FieldInfo):
            # a copy: older pydantic (2.7) changes a FieldInfo it builds a schema from,
            # and a second tool made of the same function then recursed without end
            default = copy.deepcopy(default)
            annotation = typing.Annotated[annotation, default]
        if param.kind is param.VAR_KEYWORD:
            extra = (param.name, annotation)
            continue
        fields.append((index, param.name, annotation, default))
    return Signature(tuple(fields), extra, context, hints.get("return", Any))


@dataclass(frozen=True, slots=True)
class Built:
    """A function tool's pydantic adapters and JSON schemas."""

    parameters: dict[str, Any]
    adapters: dict[str, TypeAdapter[Any]]
    extra: TypeAdapter[Any] | None  # for **kwargs values, when annotated
    output: tuple[TypeAdapter[Any], dict[str, Any]] | None  # from the return annotation
    compiled: Compiled | None  # one validator of the whole arguments object


def build(tool_name: str, signature: Signature, output_schema: Mapping[str, Any] | None) -> Built:
    """The adapters and schemas of a function tool, and the validator of its whole
    arguments object (:func:`~obelisk.interpreter.tools.arguments.compile_arguments`);
    :class:`ToolDefinitionError` for a type without a JSON schema."""
    adapters: dict[str, TypeAdapter[Any]] = {}
    fields: dict[str, Any] = {}
    for index, name, annotation, default in signature.fields:
        adapters[name] = _adapter(tool_name, f"parameter {name!r}", annotation)[0]
        fields[f"f{index}"] = (typing.Annotated[annotation, Field(alias=name)], default)
    extra: tuple[TypeAdapter[Any], dict[str, Any]] | None = None
    if signature.extra is not None and signature.extra[1] is not Any:
        name, annotation = signature.extra
        extra = _adapter(tool_name, f"parameter {name!r}", annotation)
    parameters, definitions = _arguments_schema(tool_name, fields)
    if signature.extra is None or extra is not None:
        parameters["additionalProperties"] = extra[1] if extra else False
    if definitions is not None:
        parameters["$defs"] = definitions
    output = _output_adapter(tool_name, signature.returns, output_schema)
    extra_adapter = extra[0] if extra else None
    compiled = compile_arguments(adapters, extra_adapter)
    return Built(parameters, adapters, extra_adapter, output, compiled)


def _arguments_schema(tool_name: str, fields: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The arguments schema of a model of ``fields`` (aliased to the parameter names):
    ``type``, ``properties`` (without pydantic's generated titles) and ``required``;
    and its ``$defs`` (None without any)."""
    try:
        model = create_model(f"{tool_name}_arguments", **fields)
        generated = model.model_json_schema(by_alias=True)
    except Exception as exc:
        raise bad(tool_name, f"cannot build the arguments schema: {exc}") from None
    properties = generated.get("properties", {})
    for info in model.model_fields.values():
        if info.title is None and isinstance(properties.get(info.alias), dict):
            properties[info.alias].pop("title", None)
    required = [str(f.alias) for f in model.model_fields.values() if f.is_required()]
    parameters = {"type": "object", "properties": properties, "required": required}
    return parameters, generated.get("$defs")


_UNTYPED = (Outcome, Labeled)
"""Return annotations that give no output schema: the value inside says it."""


def _output_adapter(
    tool_name: str, returns: Any, output_schema: Mapping[str, Any] | None
) -> tuple[TypeAdapter[Any], dict[str, Any]] | None:
    """The adapter and serialization schema of the return annotation, or None: when
    an ``output_schema`` is given, or the annotation is ``Any``, an ``Outcome`` or a
    ``Labeled`` (docs/security.md)."""
    wrapped = typing.get_args(returns)
    outcome = returns in _UNTYPED or any(kind in wrapped for kind in _UNTYPED)
    if output_schema is None and returns is not Any and not outcome:
        return _adapter(tool_name, "the return type", returns, "serialization")
    return None


@dataclass(frozen=True, slots=True)
class Declared:
    """A function read as a tool, before the ``Tool`` is made (:meth:`Tool.from_function
    <obelisk.interpreter.tools.tool.Tool.from_function>`)."""

    name: str
    description: str  # cleaned of indentation
    outcomes: tuple[str, ...]
    signature: Signature
    parameters: dict[str, Any]  # the arguments schema, or its outline when deferred
    built: Built | None  # None when deferred: built on first use (standard tools)
    bound: frozenset[str]  # the keywords a functools.partial binds


def read_function(
    fn: Callable[..., Any],
    name: str | None,
    description: str | None,
    options: tuple[Iterable[str], float | None, int | None, bool],
    output_schema: Mapping[str, Any] | None,
    deferred: bool,
) -> Declared:
    """Read ``fn`` (a function, a ``functools.partial`` or a callable object) as a
    tool: its name (``name``, else the function's), description (``description``,
    else the docstring), ``options`` ``(outcomes, timeout, capacity, pure)``
    checked, its signature and, unless ``deferred``, its adapters and schemas.
    Raises :class:`ToolDefinitionError` as :meth:`Tool.from_function
    <obelisk.interpreter.tools.tool.Tool.from_function>` documents."""
    bound = frozenset(fn.keywords) if isinstance(fn, functools.partial) else frozenset()
    target = fn.func if isinstance(fn, functools.partial) else fn
    tool_name: str = (
        name if name is not None else getattr(target, "__name__", type(target).__name__)
    )
    outcomes, timeout, capacity, pure = options
    if isinstance(outcomes, Iterable) and not isinstance(outcomes, str):
        outcomes = tuple(outcomes)
    check_options(tool_name, outcomes, timeout, capacity, pure)
    signature = read_signature(fn, target, tool_name, bound)
    if deferred:  # standard_tool: the adapters and schemas are built on first use
        built = None
        parameters = signature.outline()
    else:
        built = build(tool_name, signature, output_schema)
        parameters = built.parameters
    doc = description if description is not None else inspect.getdoc(target)
    text = inspect.cleandoc(doc or "")
    return Declared(
        tool_name, text, cast(tuple[str, ...], outcomes), signature, parameters, built, bound
    )


class _ClosedClasses(GenerateJsonSchema):
    """Serialization schemas in which the object of a pydantic model or a dataclass
    that does not allow extra fields admits only its fields."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        return _closed(super().model_schema(schema))

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        return _closed(super().dataclass_schema(schema))


def _closed(json_schema: JsonSchemaValue) -> JsonSchemaValue:
    if json_schema.get("type") == "object" and "properties" in json_schema:
        json_schema.setdefault("additionalProperties", False)  # ("allow" set it to true)
    return json_schema


def closed_output_schema(adapter: TypeAdapter[Any]) -> dict[str, Any] | None:
    """The serialization schema of a return annotation in which each pydantic model's
    and dataclass's object has ``"additionalProperties": false`` (unless the class
    allows extra fields): a result of that class serializes to its fields only.
    None when pydantic cannot make it."""
    try:
        return adapter.json_schema(mode="serialization", schema_generator=_ClosedClasses)
    except Exception:  # (the plain schema was made: this is only a sharper copy)
        return None


def is_async(function: Callable[..., Any] | None) -> bool:
    """Whether calling ``function`` gives a coroutine: an async function, or an
    object (not a plain function) whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(function, "__call__", None)  # noqa: B004
    return (
        type(function) is not types.FunctionType
        and function is not None
        and inspect.iscoroutinefunction(call)
    )
