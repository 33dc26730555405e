"""``obelisk tools``: list the tools a command would see, or show one in full."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from obelisk.cli.io import (
    FilesRootOption,
    NoStdlibOption,
    OverrideOption,
    ToolsOption,
    fail,
    load_registry,
    out,
)
from obelisk.interpreter.tools.tool import Tool

__all__ = ["signature", "tools_command"]


def _type_name(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "$ref" in schema and isinstance(schema["$ref"], str):
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"][:5])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(_type_name(branch) for branch in schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if kind == "array":
        return f"array[{_type_name(schema.get('items'))}]"
    return str(kind) if kind else "any"


def signature(tool: Tool) -> str:
    """``name(a: integer, b?: string) -> object``: parameters from the JSON schema
    (``?`` marks an optional one, ``**extra`` extra names), and the output type."""
    properties = tool.parameters.get("properties") or {}
    parts = []
    for name, schema in properties.items():
        mark = "" if name in tool.required else "?"
        parts.append(f"{name}{mark}: {_type_name(schema)}")
    if tool.accepts_extra:
        parts.append("**extra")
    returns = _type_name(tool.output_schema) if tool.output_schema is not None else "any"
    return f"{tool.name}({', '.join(parts)}) -> {returns}"


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0] if text.strip() else ""


def _options(tool: Tool) -> list[tuple[str, str]]:
    found = [("kind", "latent (the model gives its result)" if tool.latent else "function")]
    if tool.delegate:
        found.append(("delegate", "yes, scopes: " + (", ".join(tool.scopes) or "none")))
    if tool.outcomes:
        found.append(("outcomes", ", ".join(tool.outcomes)))
    if tool.timeout is not None:
        found.append(("timeout", f"{tool.timeout:g} s"))
    if tool.capacity is not None:
        found.append(("capacity", f"{tool.capacity} at once"))
    if tool.retry is not None:
        found.append(("retry", f"{tool.retry.attempts} attempts, backoff {tool.retry.backoff:g} s"))
    if tool.pure:
        found.append(("pure", "yes"))
    if tool.idempotent:
        found.append(("idempotent", "yes"))
    if tool.output_validation is not None:
        found.append(("output validation", tool.output_validation))
    return found


def tools_command(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="Show this tool in full.")
    ] = None,
    tools: ToolsOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the tool descriptions exactly as the loop sends them."),
    ] = False,
) -> None:
    """List the tools a command would see (the standard tools plus --tools).

    Without NAME: one line per tool, its signature and the first line of its
    description.  With NAME: that tool in full.  --json prints the descriptions
    the execution loop sends a model.  Exits 2 for an unknown NAME.
    """
    from obelisk.interpreter.loop.messages import tool_description  # as a model sees them

    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    if name is not None:
        chosen = registry.get(name)
        if chosen is None:
            close = registry.suggest(name)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            fail(f"unknown tool {name!r}{hint}")
        if as_json:
            sys.stdout.write(json.dumps(tool_description(chosen), ensure_ascii=False) + "\n")
            return
        out.print(signature(chosen), markup=False, style="bold")
        if chosen.description:
            out.print(chosen.description, markup=False)
        for key, value in _options(chosen):
            out.print(f"{key}: {value}", markup=False)
        out.print("parameters:", markup=False, style="bold")
        out.print(json.dumps(chosen.parameters, ensure_ascii=False, indent=2), markup=False)
        if chosen.output_schema is not None:
            out.print("output:", markup=False, style="bold")
            out.print(json.dumps(chosen.output_schema, ensure_ascii=False, indent=2), markup=False)
        return
    if as_json:
        described = [tool_description(item) for item in registry]
        sys.stdout.write(json.dumps(described, ensure_ascii=False) + "\n")
        return
    rows = [(signature(item), _first_line(item.description)) for item in registry]
    width = max((len(sig) for sig, _ in rows), default=0)
    for sig, description in rows:
        out.print(f"{sig:<{width}}  {description}".rstrip(), markup=False)
