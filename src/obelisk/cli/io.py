"""What the commands share: consoles, errors, reading plans and JSON, loading tools.

Every problem with the command line itself (a missing file, bad JSON in
``--input``, a tools module that does not import) goes through :func:`fail`,
which prints ``obelisk: error: ...`` on standard error and exits 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from obelisk.errors import ObeliskError, caret_lines, printable
from obelisk.interpreter.tools.registry import Registry
from obelisk.json_values import loads_strict
from obelisk.stdlib_tools import default_registry

__all__ = [
    "FilesRootOption",
    "InputOption",
    "NoStdlibOption",
    "OverrideOption",
    "PlanArgument",
    "StateOption",
    "ToolsOption",
    "decode_json",
    "err",
    "fail",
    "json_default",
    "load_registry",
    "out",
    "plural",
    "read_input",
    "read_json",
    "read_object",
    "read_plan",
]

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


PlanArgument = Annotated[
    str, typer.Argument(metavar="PLAN", help="Plan JSON file, or - for standard input.")
]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        metavar="FILE|MODULE",
        help="Python file or importable module whose @tool functions to load (repeatable).",
    ),
]
NoStdlibOption = Annotated[bool, typer.Option("--no-stdlib", help="Leave the standard tools out.")]
FilesRootOption = Annotated[
    Path | None,
    typer.Option(
        "--files-root", metavar="DIR", help="Directory the standard file tools may read and write."
    ),
]
OverrideOption = Annotated[
    bool,
    typer.Option("--override", help="Let --tools replace standard tools of the same name."),
]
InputOption = Annotated[
    Path | None,
    typer.Option("--input", "-i", metavar="FILE", help="JSON file with the input document."),
]
StateOption = Annotated[
    Path | None,
    typer.Option("--state", metavar="FILE", help="JSON file with the state the plan starts from."),
]


def fail(message: str) -> NoReturn:
    """Print ``obelisk: error: <message>`` on standard error and exit 2 (characters
    that would not print are escaped, see :func:`obelisk.errors.printable`)."""
    head, newline, rest = message.partition("\n")
    err.print(f"obelisk: error: {printable(head)}{newline}{rest}", markup=False)
    raise typer.Exit(2)


def decode_json(text: str, what: str) -> Any:
    """The JSON value of ``text``, read strictly (no ``NaN``, no integers too long for
    Python; see :func:`obelisk.json_values.loads_strict`).  Bad JSON exits 2 through
    :func:`fail` with the line, the column and a caret line under the spot::

        obelisk: error: input 'in.json' is not valid JSON: Expecting value at line 1, column 7
            {"a": }
                  ^
    """
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        end = exc.pos + 1 if exc.pos < len(text) else exc.pos
        shown = "\n".join("    " + line for line in caret_lines(text, (exc.pos, end)))
        fail(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}\n"
            + shown
        )


def read_plan(source: str) -> bytes:
    """The plan's bytes from a file, or from standard input for ``-``."""
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        fail(f"cannot read plan {source!r}: {exc.strerror or exc}")


def read_json(path: Path | None, what: str) -> Any:
    """The JSON value in ``path`` (``None`` without a path); ``what`` names it in errors."""
    if path is None:
        return None
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        fail(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        fail(f"{what} {str(path)!r} is not UTF-8: {exc.reason} at byte {exc.start}")
    return decode_json(text, f"{what} {str(path)!r}")


def load_registry(
    targets: list[str] | None,
    *,
    stdlib: bool = True,
    files_root: Path | None = None,
    override: bool = False,
) -> Registry:
    """The tools every command sees: the standard tools (unless ``stdlib`` is false)
    plus the ``@tool`` functions of each ``--tools`` file or module.

    A ``--tools`` tool may replace a standard tool of the same name only with
    ``override``; two ``--tools`` targets that define the same name are an error
    naming both.  ``files_root`` confines the standard file tools.  Problems exit 2
    through :func:`fail`.
    """
    if not stdlib and files_root is not None:
        fail("--files-root applies to the standard file tools; it cannot go with --no-stdlib")
    try:
        registry = default_registry(files_root=files_root) if stdlib else Registry()
    except ObeliskError as exc:
        fail(str(exc))
    standard = set(registry.names())
    origin: dict[str, str] = {}
    for target in targets or ():
        try:
            loaded = Registry.from_module(target)
        except ObeliskError as exc:
            fail(str(exc))
        for item in loaded:
            if item.name in origin:
                fail(f"tool {item.name!r} is defined in both {origin[item.name]} and {target}")
            if item.name in standard and not override:
                fail(
                    f"tool {item.name!r} in {target} has the name of a standard tool; pass "
                    "--override to replace the standard one, or --no-stdlib to leave the "
                    "standard tools out"
                )
            registry.add(item, override=True)
            origin[item.name] = target
    return registry


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 call``, ``3 calls`` (``many`` for irregular plurals)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def json_default(value: Any) -> Any:
    """How ``json.dumps`` shows a value that is not JSON (a tool's odd result): its repr."""
    return repr(value)


def read_object(path: Path | None, what: str) -> dict[str, Any] | None:
    """A JSON file that must hold an object (``None`` without a path)."""
    value = read_json(path, what)
    if value is not None and not isinstance(value, dict):
        fail(f"{what} {str(path)!r} must hold a JSON object, got {type(value).__name__}")
    return value


def read_input(source: str | None) -> Any:
    """The ``--input`` document: a JSON file, ``-`` for standard input, or ``None``."""
    if source != "-":
        return read_json(Path(source) if source else None, "input")
    try:
        text = sys.stdin.buffer.read().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fail(f"input from stdin is not UTF-8: {exc.reason} at byte {exc.start}")
    return decode_json(text, "input from stdin")
