"""JSON tool descriptions: the shapes :meth:`Tool.from_schema` reads (docs/tools.md).

Three shapes: obelisk's own (``{"name", "description", "parameters", "output",
...}``), OpenAI's function tool (``{"type": "function", "function": {...}}``) and
MCP's tool (``{"name", "inputSchema", ...}``).  :func:`read_description` checks a
description's keys (an unknown key is an error naming the allowed ones), options and
schemas; :func:`function_interface` and :func:`match_function` check that a Python
function can take the arguments a description lists.  Problems raise
:class:`~obelisk.errors.ToolDefinitionError`.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from obelisk.errors import ToolDefinitionError
from obelisk.interpreter.tools.options import check_options
from obelisk.interpreter.tools.policies import tuple_of
from obelisk.interpreter.tools.run_context import is_context_annotation
from obelisk.interpreter.tools.validation import bad, checked_validator_class

__all__ = [
    "Description",
    "Interface",
    "function_interface",
    "match_description",
    "match_function",
    "read_description",
]

OPTIONS = ("outcomes", "timeout", "capacity", "pure")
_OWN_KEYS = (
    *OPTIONS, "_delegate", "_scopes", "delegate", "scopes", "effects", "requires_approval",
    "idempotent", "output_trust", "trusted_args", "on_untrusted", "audience_arg",
)  # fmt: skip
_PLAIN_KEYS = (
    "name", "description", "parameters", "input_schema", "output", "output_schema", "strict",
    "type", *_OWN_KEYS,
)  # fmt: skip
_FUNCTION_KEYS = tuple(key for key in _PLAIN_KEYS if key != "type")
_OPENAI_KEYS = ("type", "function", *_OWN_KEYS)
_MCP_KEYS = (
    "name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons",
    "execution", "_meta", *_OWN_KEYS,
)  # fmt: skip
_ALLOWED = {
    keys: frozenset(keys) for keys in (_PLAIN_KEYS, _FUNCTION_KEYS, _OPENAI_KEYS, _MCP_KEYS)
}
_NO_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}


def _names(names: Iterable[str]) -> str:
    return ", ".join(map(repr, names))


def _check_keys(name: str, spec: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """Raise :class:`ToolDefinitionError` naming every key of ``spec`` not in ``allowed``."""
    known = _ALLOWED[allowed]
    unknown = [key for key in spec if key not in known]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise bad(
            name,
            f"unknown key{plural} {_names(unknown)} in {where}; "
            f"the allowed keys are {', '.join(allowed)}",
        )


@dataclass(frozen=True, slots=True)
class Description:
    """A JSON tool description, read and checked (see :meth:`Tool.from_schema`,
    docs/tools.md): ``parameters`` and ``output`` are shallow copies of the JSON
    schemas, ``parameters_key`` is the key they came under (``parameters``,
    ``input_schema`` or ``inputSchema``), ``options`` holds ``outcomes``, ``timeout``
    (seconds), ``capacity`` (calls) and ``pure`` as given (``pure`` also from MCP's
    ``readOnlyHint``); ``effects`` and ``requires_approval`` as given (checked by
    :class:`Tool`); ``idempotent`` as given, or from MCP's ``idempotentHint``;
    ``labels`` the keywords of labels and policies (``output_trust`` also from MCP's
    ``openWorldHint``; docs/security.md)."""

    name: str
    description: str
    parameters: dict[str, Any]
    parameters_key: str  # the key the user wrote: parameters, input_schema, inputSchema
    output: dict[str, Any] | None
    options: dict[str, Any]
    delegate: Any
    scopes: Any
    effects: Any = None
    requires_approval: Any = False
    idempotent: Any = False
    labels: dict[str, Any] = field(default_factory=dict)


def read_description(spec: Any) -> Description:
    """Read any of the three shapes :meth:`Tool.from_schema` takes (docs/tools.md);
    check keys, options and schemas (the metaschema check is cached, see
    :func:`~obelisk.interpreter.tools.validation.checked_validator_class`).  Raises
    :class:`ToolDefinitionError` for a description that is not an object, has no
    name, has an unknown key (naming it and the allowed keys), a bad option, or a
    schema that is invalid or not an object schema."""
    spec, mcp = _unwrap_shape(spec)
    name = spec["name"]
    options = _read_options(name, spec, mcp)
    idempotent = _read_idempotent(name, spec, mcp)
    description = _read_text(name, spec, mcp)
    _check_flags(name, spec)
    key, params, output = _read_schemas(name, spec, mcp)
    return Description(
        name,
        description,
        dict(params),
        key,
        None if output is None else dict(output),
        options,
        spec.get("_delegate", spec.get("delegate", False)),
        spec.get("_scopes", spec.get("scopes", ())),
        spec.get("effects"),
        spec.get("requires_approval", False),
        idempotent,
        {
            "output_trust": _read_trust(name, spec, mcp),
            "trusted_args": tuple_of(spec.get("trusted_args", ())),
            "on_untrusted": spec.get("on_untrusted", "ask"),
            "audience_arg": spec.get("audience_arg"),
        },
    )


def _unwrap_shape(spec: Any) -> tuple[Mapping[str, Any], bool]:
    """``(the description in obelisk's or MCP's shape, whether it is MCP's)``, its
    keys checked; OpenAI's ``function`` is unwrapped, keeping obelisk's own keys."""
    if not isinstance(spec, Mapping):
        raise ToolDefinitionError(f"a tool description must be an object, not {spec!r}")
    if spec.get("type") == "function" and "function" in spec:  # OpenAI Chat Completions
        inner = spec["function"]
        if not isinstance(inner, Mapping):
            raise ToolDefinitionError("tool description: 'function' must be an object")
        if "name" not in inner:
            raise ToolDefinitionError("tool description has no 'name'")
        _check_keys(inner["name"], spec, _OPENAI_KEYS, "the OpenAI tool description")
        _check_keys(inner["name"], inner, _FUNCTION_KEYS, "'function'")
        return {**inner, **{key: spec[key] for key in _OWN_KEYS if key in spec}}, False
    if "name" not in spec:
        raise ToolDefinitionError("tool description has no 'name'")
    if "inputSchema" in spec:
        _check_keys(spec["name"], spec, _MCP_KEYS, "the MCP tool description")
        return spec, True
    _check_keys(spec["name"], spec, _PLAIN_KEYS, "the tool description")
    return spec, False


def _read_options(name: str, spec: Mapping[str, Any], mcp: bool) -> dict[str, Any]:
    """The options given (checked), ``pure`` also from MCP's ``readOnlyHint``."""
    options = {key: spec[key] for key in OPTIONS if key in spec}
    check_options(
        name,
        options.get("outcomes", ()),
        options.get("timeout"),
        options.get("capacity"),
        options.get("pure", False),
    )
    if mcp and "pure" not in options and spec.get("annotations") is not None:
        annotations = spec["annotations"]
        if not isinstance(annotations, Mapping):
            raise bad(name, f"'annotations' must be an object, got {annotations!r}")
        read_only = annotations.get("readOnlyHint", False)
        if not isinstance(read_only, bool):
            raise bad(name, f"'annotations.readOnlyHint' must be true or false, got {read_only!r}")
        options["pure"] = read_only  # docs/tools.md
    return options


def _read_idempotent(name: str, spec: Mapping[str, Any], mcp: bool) -> bool:
    """``idempotent`` as given, else MCP's ``idempotentHint`` (docs/tools.md, docs/durable.md)."""
    idempotent = spec.get("idempotent", False)
    if not isinstance(idempotent, bool):
        raise bad(name, f"idempotent must be true or false, got {idempotent!r}")
    if mcp and "idempotent" not in spec and isinstance(spec.get("annotations"), Mapping):
        hint = spec["annotations"].get("idempotentHint", False)
        if not isinstance(hint, bool):
            raise bad(name, f"'annotations.idempotentHint' must be true or false, got {hint!r}")
        return hint
    return idempotent


def _read_trust(name: str, spec: Mapping[str, Any], mcp: bool) -> Any:
    """``output_trust`` as given, else ``"untrusted"`` for an MCP tool whose
    ``annotations.openWorldHint`` is true (it reads the open world; docs/security.md)."""
    if "output_trust" in spec or not mcp or not isinstance(spec.get("annotations"), Mapping):
        return spec.get("output_trust", "trusted")
    hint = spec["annotations"].get("openWorldHint", False)
    if not isinstance(hint, bool):
        raise bad(name, f"'annotations.openWorldHint' must be true or false, got {hint!r}")
    return "untrusted" if hint else "trusted"


def _read_text(name: str, spec: Mapping[str, Any], mcp: bool) -> str:
    """The description text (MCP's ``title`` when it has none), indentation cleaned."""
    description = spec.get("description")
    if description is None:
        description = spec.get("title", "") if mcp else ""
    if not isinstance(description, str):
        key = "description" if "description" in spec else "title"
        raise bad(name, f"{key!r} must be a string, got {description!r}")
    if "\n" in description:
        description = inspect.cleandoc(description)
    return description


def _check_flags(name: str, spec: Mapping[str, Any]) -> None:
    """``strict`` is a boolean and ``type``, when given, is ``"function"``."""
    strict = spec.get("strict", False)
    if not isinstance(strict, bool):
        raise bad(name, f"'strict' must be true or false, got {strict!r}")
    if "type" in spec and spec["type"] != "function":
        raise bad(name, f"'type' must be \"function\", got {spec['type']!r}")


def _read_schemas(
    name: str, spec: Mapping[str, Any], mcp: bool
) -> tuple[str, Mapping[str, Any], Mapping[str, Any] | None]:
    """``(parameters key, parameters schema, output schema or None)``,
    both schemas checked against the metaschema under the user's keys."""
    key = "inputSchema" if mcp else "input_schema" if "input_schema" in spec else "parameters"
    params = spec.get(key) or _NO_PARAMETERS
    if not isinstance(params, Mapping) or params.get("type", "object") != "object":
        raise bad(name, f'{key!r} must be a JSON schema with "type": "object"')
    out_key = "outputSchema" if mcp else "output" if "output" in spec else "output_schema"
    output = spec.get(out_key)
    if output is not None and not isinstance(output, Mapping):
        raise bad(name, f"{out_key!r} must be a JSON schema object")
    checked_validator_class(params, name, key)  # problems are reported under the user's key
    if output is not None:
        checked_validator_class(output, name, out_key)
    return key, params, output


@dataclass(frozen=True, slots=True)
class Interface:
    """What a function accepts as keyword arguments (see :func:`function_interface`,
    docs/tools.md): parameter names in declaration order."""

    names: tuple[str, ...]  # parameters a keyword argument reaches, partial-bound ones left out
    required: tuple[str, ...]  # those of ``names`` without a default
    var_keyword: bool  # takes **kwargs
    bound: frozenset[str]  # keywords bound by functools.partial
    contexts: tuple[str, ...]  # parameters annotated obelisk.Context[...]


def function_interface(fn: Callable[..., Any], tool_name: str) -> Interface:
    """Read ``fn``'s parameters (docs/tools.md): from its code object for a plain
    function (a few microseconds), through :func:`inspect.signature` for anything
    else (methods, ``functools.partial``, callable objects).  Raises
    :class:`ToolDefinitionError` for a required positional-only parameter or a
    signature that cannot be read."""
    if type(fn) is types.FunctionType:
        return _code_interface(fn, tool_name)
    return _signature_interface(fn, tool_name)


def _positional(tool_name: str, name: str) -> ToolDefinitionError:
    return bad(tool_name, f"parameter {name!r} is positional; tools take named arguments")


def _code_interface(fn: types.FunctionType, tool_name: str) -> Interface:
    """:func:`function_interface` of a plain function, read from its code object."""
    code = fn.__code__
    count, posonly = code.co_argcount, code.co_posonlyargcount
    positional = code.co_varnames[:count]
    keyword_only = code.co_varnames[count : count + code.co_kwonlyargcount]
    first_default = count - len(fn.__defaults__ or ())
    if posonly and first_default > 0:  # a positional-only parameter without a default
        raise _positional(tool_name, positional[0])
    kw_defaults = fn.__kwdefaults__ or {}
    names = positional[posonly:] + keyword_only
    required = positional[posonly:first_default] + tuple(
        n for n in keyword_only if n not in kw_defaults
    )
    var_keyword = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    contexts = _code_contexts(fn, names, tool_name)
    return Interface(names, required, var_keyword, frozenset(), contexts)


def _code_contexts(
    fn: types.FunctionType, names: tuple[str, ...], tool_name: str
) -> tuple[str, ...]:
    """The parameters of ``names`` annotated ``obelisk.Context[...]``; string
    annotations that mention ``Context`` are resolved."""
    annotations = fn.__annotations__
    if any(isinstance(annotations.get(n), str) and "Context" in annotations[n] for n in names):
        try:
            annotations = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise bad(tool_name, f"cannot read the signature: {exc}") from None
    return tuple(n for n in names if n in annotations and is_context_annotation(annotations[n]))


def _signature_interface(fn: Callable[..., Any], tool_name: str) -> Interface:
    """:func:`function_interface` of anything but a plain function, through
    :func:`inspect.signature`."""
    bound = frozenset(fn.keywords) if isinstance(fn, functools.partial) else frozenset()
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise bad(tool_name, f"cannot read the signature: {exc}") from None
    hints = _type_hints(fn.func if isinstance(fn, functools.partial) else fn)
    found_names: list[str] = []
    found_required: list[str] = []
    contexts: list[str] = []
    var_keyword = False
    for param in signature.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            var_keyword = True
        elif not _takes_keyword(param, bound, tool_name):
            continue
        else:
            found_names.append(param.name)
            if param.default is param.empty:
                found_required.append(param.name)
            if is_context_annotation(hints.get(param.name, param.annotation)):
                contexts.append(param.name)
    return Interface(tuple(found_names), tuple(found_required), var_keyword, bound, tuple(contexts))


def _type_hints(target: Any) -> dict[str, Any]:
    """The type hints of a routine or a callable object's ``__call__`` ({} when they
    cannot be read: only Context annotations matter here, the schema gives the types)."""
    try:
        source = target if inspect.isroutine(target) else type(target).__call__
        return typing.get_type_hints(source, include_extras=True)
    except Exception:
        return {}


def _takes_keyword(param: inspect.Parameter, bound: frozenset[str], tool_name: str) -> bool:
    """Whether a keyword argument reaches ``param`` (not ``*args``, not bound by a
    partial, not positional-only); a required positional-only parameter raises."""
    if param.kind is param.VAR_POSITIONAL or param.name in bound:
        return False
    if param.kind is param.POSITIONAL_ONLY:
        if param.default is param.empty:
            raise _positional(tool_name, param.name)
        return False
    return True


def match_function(
    name: str, found: Description, interface: Interface, context_parameter: str | None
) -> str | None:
    """Check that a function's parameters fit a description's properties (the rules
    are in docs/tools.md); returns the name of the parameter that takes the run
    context, or ``None``.  Raises :class:`ToolDefinitionError` naming the
    properties the function does not take, the parameters the schema does not list
    or leaves optional, or a bad ``context_parameter``."""
    key = found.parameters_key
    context = _context_of(name, interface, context_parameter)
    properties = found.parameters.get("properties") or {}
    if context is not None and context in properties:
        raise bad(name, f"{key!r} lists {context!r}, the parameter that takes the run context")
    takes = [n for n in interface.names if n != context]
    if not interface.var_keyword:
        unknown = [p for p in properties if p not in takes]
        if unknown:
            raise bad(
                name,
                f"{key!r} lists {_names(unknown)}, which the function does not take"
                f" (it takes {', '.join(takes) or 'no arguments'})",
            )
    _check_required(name, found, [n for n in interface.required if n != context], properties)
    return context


def _context_of(name: str, interface: Interface, context_parameter: str | None) -> str | None:
    """The parameter that takes the run context: ``context_parameter``, else the one
    annotated ``Context[...]`` (at most one), else None."""
    if context_parameter is None:
        if len(interface.contexts) > 1:
            first, second = interface.contexts[:2]
            raise bad(
                name,
                f"parameters {first!r} and {second!r} both take the run context;"
                " a tool has at most one",
            )
        return interface.contexts[0] if interface.contexts else None
    if context_parameter not in interface.names:
        raise bad(
            name, f"context_parameter {context_parameter!r} is not a parameter of the function"
        )
    return context_parameter


def _check_required(
    name: str, found: Description, needed: list[str], properties: Mapping[str, Any]
) -> None:
    """Every parameter the function ``needed`` is listed in the schema, and required."""
    key = found.parameters_key
    unlisted = [n for n in needed if n not in properties]
    if unlisted:
        raise bad(name, f"the function requires {_names(unlisted)}, which {key!r} does not list")
    required = found.parameters.get("required") or ()
    optional = [n for n in needed if n not in required]
    if optional:
        raise bad(
            name,
            f"the function requires {_names(optional)}, which {key!r} leaves optional;"
            ' list it in "required" or give it a default',
        )


def match_description(
    found: Description, function: Any, context_parameter: str | None
) -> tuple[Interface | None, str | None]:
    """``(the function's interface, the parameter that takes the run context)`` for a
    description given a ``function`` to run (``(None, None)`` without one), after
    :func:`match_function`.  Raises :class:`ToolDefinitionError` for a function that
    is not callable or does not fit, or a ``context_parameter`` without a function."""
    name = found.name
    if function is None:
        if context_parameter is not None:
            raise bad(name, "context_parameter needs a function")
        return None, None
    if not callable(function):
        raise bad(name, f"function must be callable, got {function!r}")
    interface = function_interface(function, name)
    return interface, match_function(name, found, interface, context_parameter)
