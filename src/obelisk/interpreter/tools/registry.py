"""The tool registry: the tools a plan may call, by name (docs/architecture.md).

:class:`Registry` collects :class:`~obelisk.interpreter.tools.tool.Tool` objects; it can
load every ``@tool`` of a module or ``.py`` file (``obelisk check --tools``) and
coerce whatever a caller passes as ``tools=`` (docs/diagnostics.md).
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import importlib
import importlib.util
import itertools
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias, cast

from obelisk.errors import ToolDefinitionError
from obelisk.interpreter.tools.options import check_options
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Registry", "ToolsLike"]

_module_ids = itertools.count()


class Registry:
    """The tools a plan may call, by name, in insertion order (docs/architecture.md).

    ``Registry(tools)`` takes :class:`Tool` objects and plain functions (wrapped by
    :meth:`Tool.from_function`).  Iterating yields tools; ``in`` tests names.  A
    second tool with a registered name raises :class:`ToolDefinitionError`
    (``tool 'x' is already registered``) unless ``override=True``.
    """

    __slots__ = ("_tools",)

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.add(item)

    def add(self, tool_or_fn: Tool | Callable[..., Any], *, override: bool = False) -> Tool:
        """Add a tool (a function is wrapped first) and return it."""
        item = tool_or_fn if isinstance(tool_or_fn, Tool) else Tool.from_function(tool_or_fn)
        if item.name in self._tools and not override:
            raise ToolDefinitionError(f"tool {item.name!r} is already registered")
        self._tools[item.name] = item
        return item

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Tool names in insertion order."""
        return list(self._tools)

    def suggest(self, name: str) -> list[str]:
        """Up to 3 registered names similar to ``name`` (difflib ratio >= 0.6,
        ignoring case), best first; for "did you mean" diagnostics."""
        score = {
            k: difflib.SequenceMatcher(None, name.lower(), k.lower()).ratio() for k in self._tools
        }
        return sorted((k for k in score if score[k] >= 0.6), key=lambda k: -score[k])[:3]

    def __getitem__(self, name: str) -> Tool:
        """The tool called ``name``; ``KeyError("unknown tool 'x'; did you mean 'y'?")``."""
        if name not in self._tools:
            close = " or ".join(map(repr, self.suggest(name)))
            raise KeyError(f"unknown tool {name!r}" + (f"; did you mean {close}?" if close else ""))
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"Registry({self.names()!r})"

    def merge(self, other: Registry, *, override: bool = False) -> Registry:
        """A new registry: these tools, then ``other``'s (name clashes as in :meth:`add`)."""
        merged = Registry(self)
        for item in other:
            merged.add(item, override=override)
        return merged

    @classmethod
    def from_schemas(cls, specs: Iterable[Mapping[str, Any]]) -> Registry:
        """Latent tools from JSON tool descriptions (see :meth:`Tool.from_schema`)."""
        return cls(Tool.from_schema(spec) for spec in specs)

    @classmethod
    def from_openai_tools(
        cls,
        specs: Iterable[Mapping[str, Any]],
        functions: Mapping[str, Callable[..., Any]] | None = None,
    ) -> Registry:
        """Tools from a list of JSON tool descriptions, such as the ``tools=`` list of
        an OpenAI request (docs/tools.md), in order.

        Each description may take any shape :meth:`Tool.from_schema` reads;
        ``functions`` maps tool names to the sync or async functions that run them.
        A description without a function is a latent tool; a function without a
        description raises :class:`ToolDefinitionError` naming it, as do the
        problems :meth:`Tool.from_schema` finds and repeated names.

        >>> registry = Registry.from_openai_tools(
        ...     [{"type": "function", "function": {"name": "add", "parameters": {
        ...         "type": "object", "properties": {"a": {"type": "integer"}},
        ...         "required": ["a"]}}}],
        ...     functions={"add": lambda a: a + 1},
        ... )
        >>> registry["add"].latent, registry["add"](a=1)
        (False, 2)
        """
        return cls._with_functions(list(specs), functions or {})

    @classmethod
    def from_mcp_tools(
        cls, tools: Any, functions: Mapping[str, Callable[..., Any]] | None = None
    ) -> Registry:
        """Tools from MCP tool descriptions (docs/tools.md): a list of them, or a
        ``tools/list`` result (``{"tools": [...]}``); each a mapping or an object with
        ``model_dump`` (the ``mcp`` package's ``Tool``, dumped by alias without
        ``None`` fields).  ``functions`` as in :meth:`from_openai_tools`, which
        raises the same errors.
        """
        if isinstance(tools, Mapping) and "tools" in tools:
            tools = tools["tools"]
        elif hasattr(tools, "tools") and not isinstance(tools, Mapping):
            tools = tools.tools
        if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
            raise ToolDefinitionError(f"expected a list of MCP tool descriptions, got {tools!r}")
        specs = [
            item.model_dump(by_alias=True, exclude_none=True)
            if hasattr(item, "model_dump")
            else item
            for item in tools
        ]
        return cls._with_functions(specs, functions or {})

    @classmethod
    def _with_functions(
        cls, specs: list[Any], functions: Mapping[str, Callable[..., Any]]
    ) -> Registry:
        names = {_description_name(spec) for spec in specs}
        orphans = [name for name in functions if name not in names]
        if orphans:
            plural = "s" if len(orphans) > 1 else ""
            raise ToolDefinitionError(
                f"no tool description for the function{plural} " + ", ".join(map(repr, orphans))
            )
        return cls(
            Tool.from_schema(spec, function=functions.get(_description_name(spec)))
            for spec in specs
        )

    @classmethod
    def from_module(cls, target: str | ModuleType) -> Registry:
        """Every :class:`Tool` among a module's attributes, in definition order.

        ``target`` is a module, an importable dotted name, or a path to a ``.py``
        file (its directory is importable while it loads).  A missing file or an
        import failure raises :class:`ToolDefinitionError` naming the module or path
        and the underlying error (no traceback attached).
        """
        module = target if isinstance(target, ModuleType) else _load(target)
        found = {id(v): v for v in vars(module).values() if isinstance(v, Tool)}
        return cls(found.values())

    @classmethod
    def coerce(cls, tools: ToolsLike) -> Registry:
        """Normalize a user's ``tools=`` (a :data:`ToolsLike`): ``None`` (empty), a
        Registry (as is), a module, a mapping ``{name: Tool | function | JSON
        description}``, one JSON tool description, or an iterable of Tools,
        functions and JSON descriptions.  Raises :class:`ToolDefinitionError` for
        anything else (checked at run time: callers may pass any object)."""
        if isinstance(tools, Registry):
            return tools
        if tools is None:
            return cls()
        if isinstance(tools, ModuleType):
            return cls.from_module(tools)
        if isinstance(tools, Mapping):
            if isinstance(tools.get("name"), str) or isinstance(tools.get("function"), Mapping):
                return cls([Tool.from_schema(tools)])
            return cls(_as_tool(value, str(key)) for key, value in tools.items())
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise ToolDefinitionError(f"cannot make a tool registry from {tools!r}")
        items = cast("Iterable[Any]", tools)  # mypy does not narrow ModuleType out
        return cls(_as_tool(item) for item in items)


def _description_name(spec: Any) -> Any:
    """The tool name a JSON description gives (``None`` when it gives none)."""
    if not isinstance(spec, Mapping):
        return None
    inner = spec.get("function")
    if spec.get("type") == "function" and isinstance(inner, Mapping):
        return inner.get("name")
    return spec.get("name")


def _as_tool(item: Any, name: str | None = None) -> Tool:
    """A Tool from a Tool, a function or a JSON description, renamed to ``name``."""
    if isinstance(item, Mapping):
        return Tool.from_schema(item if name is None else {**item, "name": name})
    if not isinstance(item, Tool):
        if not callable(item):
            raise ToolDefinitionError(
                f"cannot use {item!r} as a tool: expected a Tool, a function or a JSON tool"
                " description"
            )
        return Tool.from_function(item, name=name)
    if name is None or item.name == name:
        return item
    check_options(name, (), None, None, False)
    renamed = copy.copy(item)
    renamed.name = name
    return renamed


def _load(target: str) -> ModuleType:
    path = Path(target)
    if not (target.endswith(".py") or path.is_file()):
        try:
            return importlib.import_module(target)
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            raise ToolDefinitionError(f"cannot import tools module {target!r}: {message}") from None
    path = path.resolve()
    if not path.is_file():
        raise ToolDefinitionError(f"cannot load tools from {path}: no such file")
    module_name = f"_obelisk_tools_{next(_module_ids)}_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ToolDefinitionError(f"cannot load tools from {path}: not a Python file")
    module = sys.modules[module_name] = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        message = f"{type(exc).__name__}: {exc}"
        raise ToolDefinitionError(f"cannot load tools from {path}: {message}") from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(path.parent))
    return module


ToolsLike: TypeAlias = (
    Registry
    | ModuleType
    | Mapping[str, Any]
    | Iterable[Tool | Callable[..., Any] | Mapping[str, Any]]
    | None
)
"""What a public function takes as ``tools=`` (``obelisk.ToolsLike``), as
:meth:`Registry.coerce` turns it into a :class:`Registry` (docs/tools.md):

* a :class:`Registry`, used as is;
* a module: every :class:`~obelisk.Tool` it holds (its ``@obelisk.tool`` functions;
  :meth:`Registry.from_module`);
* a mapping ``{name: Tool | function | JSON tool description}``, each tool renamed
  to its key, or one JSON tool description (``{"name": ..., "parameters": ...}``
  or ``{"type": "function", "function": {...}}``);
* an iterable of :class:`~obelisk.Tool` objects, plain functions (wrapped by
  :meth:`Tool.from_function`) and JSON tool descriptions;
* ``None``: no tools (``check`` then checks no tool; ``run`` can call none).

Anything else raises :class:`~obelisk.ToolDefinitionError` when it is used.
"""
