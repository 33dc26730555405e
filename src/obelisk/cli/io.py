"""What the commands share: consoles, errors, reading plans and JSON, loading tools.

Every problem with the command line itself (a missing file, bad JSON in
``--input``, a tools module that does not import) goes through :func:`fail`,
which prints ``obelisk: error: ...`` on standard error and exits 2.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from obelisk.diagnostics import caret_lines, printable
from obelisk.errors import ObeliskError
from obelisk.interpreter.tools.registry import Registry
from obelisk.json_values import decimal_digits, loads_strict
from obelisk.limits import int_digits_limit
from obelisk.stdlib_tools import default_registry

__all__ = [
    "BaseUrlOption",
    "FilesRootOption",
    "InputOption",
    "InputOrStdinOption",
    "JournalOption",
    "NoStdlibOption",
    "OverrideOption",
    "PlanArgument",
    "StateOption",
    "ToolsOption",
    "decode_json",
    "err",
    "fail",
    "json_default",
    "json_for_output",
    "load_registry",
    "out",
    "plural",
    "read_input",
    "read_json",
    "read_object",
    "read_plan",
    "stdout_to_stderr_from_now",
    "tool_flags",
    "tools_print_to_stderr",
]

# emoji=False: text such as ":x:" in a tool's error message is printed as written (and
# rich's table of emoji codes, half a MiB, is never loaded)
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


PlanArgument = Annotated[
    str, typer.Argument(metavar="PLAN", help="Plan JSON file, or - for standard input.")
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url", metavar="URL", help="Base URL of an OpenAI-compatible server (openai:)."
    ),
]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        metavar="FILE|MODULE",
        help="Python file or importable module whose tools to load: @tool functions and "
        "other Tool objects (repeatable).",
    ),
]
PolicyOption = Annotated[
    str,
    typer.Option(
        "--policy",
        metavar="off|strict",
        help="strict: a call that writes the world waits for approval when an argument is "
        "untrusted (docs/security.md); off: only the tools' own rules.",
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
InputOrStdinOption = Annotated[
    str | None,
    typer.Option("--input", "-i", metavar="FILE", help="JSON file with the input, or - for stdin."),
]
JournalOption = Annotated[
    str | None,
    typer.Option(
        "--journal",
        metavar="FILE|URL",
        help="Run journal (an SQLite file, or a postgresql:// URL): the run is durable and "
        "can be resumed (docs/durable.md, docs/scale.md).",
    ),
]
StateOption = Annotated[
    Path | None,
    typer.Option("--state", metavar="FILE", help="JSON file with the state the plan starts from."),
]


def fail(message: str) -> NoReturn:
    """Print ``obelisk: error: <message>`` on standard error and exit 2 (characters
    that would not print are escaped, see :func:`obelisk.diagnostics.printable`)."""
    head, newline, rest = message.partition("\n")
    err.print(f"obelisk: error: {printable(head)}{newline}{rest}", markup=False)
    raise typer.Exit(2)


def check_policy(policy: str) -> None:
    """``--policy`` (``obelisk run`` and ``obelisk simulate``): exit 2 unless ``off`` or
    ``strict`` (docs/security.md)."""
    if policy not in ("off", "strict"):
        fail(f"--policy must be off or strict, got {policy!r}")


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
    through :func:`fail`, a module that calls ``sys.exit()`` as it loads included.  What
    a module prints as it loads goes to standard error.
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
            with tools_print_to_stderr():  # a module that prints as it loads
                loaded = Registry.from_module(target)
        except ObeliskError as exc:
            fail(str(exc))
        except SystemExit as exc:  # sys.exit() at import: not a silent exit 0
            fail(f"cannot load tools from {target}: it called sys.exit({exc.code!r}) as it loaded")
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


def tool_flags(
    tools: list[str] | None,
    *,
    no_stdlib: bool = False,
    files_root: Path | None = None,
    override: bool = False,
) -> str:
    """The options that chose a command's tools, quoted for a shell, so that a hint
    such as ``obelisk resume RUN_ID --journal FILE --tools shop.py`` works as printed
    (``""`` for the standard tools alone)."""
    parts: list[str] = []
    for target in tools or ():
        parts += ["--tools", target]
    if no_stdlib:
        parts.append("--no-stdlib")
    if files_root is not None:
        parts += ["--files-root", os.fspath(files_root)]
    if override:
        parts.append("--override")
    return shlex.join(parts)


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


# -- JSON that strict parsers read ---------------------------------------------------------

_PRINT_DEPTH = 400
"""Arrays and objects nested deeper than this are printed as a string (``json.dumps``
itself recurses)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _replacement(value: Any) -> tuple[bool, Any]:
    """``(True, what to print)`` for a value strict JSON cannot hold, else ``(False, None)``."""
    if isinstance(value, float) and not math.isfinite(value):
        return True, None
    if isinstance(value, int) and not isinstance(value, bool):
        limit = int_digits_limit()
        if limit and value.bit_length() > 3 * limit and decimal_digits(value) > limit:
            return True, f"<integer of {decimal_digits(value)} digits>"
    return False, None


def _key(key: Any) -> Any:
    if isinstance(key, str):
        return key
    replaced, shown = _replacement(key)
    if replaced:
        return shown if shown is not None else "null"
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    return repr(key)


def json_for_output(
    value: Any, *, indent: int | None = None, sort_keys: bool = False
) -> tuple[str, int]:
    """``(text, replaced)``: ``value`` as JSON text that every strict parser reads, and how
    many values had to be replaced (docs/cli.md):

    * ``NaN``, ``Infinity`` and ``-Infinity`` are printed as ``null``;
    * an integer longer than Python converts (4,300 digits) as the string
      ``"<integer of N digits>"``;
    * arrays and objects nested deeper than 400 levels as the string
      ``"<nested too deeply to print>"``;
    * lone surrogates (``"\\ud800"``) as JSON escapes, so the text encodes as UTF-8;
    * a value that is not JSON at all (a tool's odd result) as its repr.

    ``sort_keys`` sorts the keys of every object (non-string keys by their text).
    Iterative, so any nesting is safe; ``†`` and other characters stay readable.
    """
    replaced = 0
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, holder, 0, 1)]
    while stack:
        item, parent, slot, depth = stack.pop()
        if isinstance(item, (dict, list)) and depth > _PRINT_DEPTH:
            parent[slot] = "<nested too deeply to print>"
            replaced += 1
        elif isinstance(item, dict):
            pairs = [(_key(key), child) for key, child in item.items()]
            if sort_keys:
                pairs.sort(key=lambda pair: pair[0])
            built: dict[str, Any] = dict.fromkeys(key for key, _ in pairs)
            parent[slot] = built
            stack.extend((child, built, key, depth + 1) for key, child in reversed(pairs))
        elif isinstance(item, list):
            items: list[Any] = [None] * len(item)
            parent[slot] = items
            stack.extend((child, items, n, depth + 1) for n, child in enumerate(item))
        else:
            swap, shown = _replacement(item)
            parent[slot] = shown if swap else item
            replaced += swap
    text = json.dumps(
        holder[0], ensure_ascii=False, indent=indent, allow_nan=False, default=json_default
    )
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group(0)):04x}", text), replaced


def warn_replaced(replaced: int) -> None:
    """Say on standard error that ``replaced`` values were printed differently."""
    if replaced:
        err.print(
            f"obelisk: warning: {plural(replaced, 'value')} could not be printed as strict JSON "
            "(NaN or Infinity: null; an integer too long or nesting too deep: a string)",
            markup=False,
            style="yellow",
        )


@contextlib.contextmanager
def tools_print_to_stderr() -> Iterator[None]:
    """While tools run, what they print goes to standard error, so standard output
    holds only obelisk's own output (``obelisk run --json`` stays parseable).

    ``sys.stdout`` is redirected; when it is the process's file descriptor 1, that
    descriptor is pointed at standard error too, for output that bypasses Python
    (a subprocess, a C extension).
    """
    moved: int | None = None
    with contextlib.suppress(Exception):
        if sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2:
            sys.stdout.flush()
            moved = os.dup(1)
            os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if moved is not None:
            with contextlib.suppress(Exception):
                if sys.__stdout__ is not None:  # what went to fd 1 meanwhile: to stderr
                    sys.__stdout__.flush()
                sys.stderr.flush()
            os.dup2(moved, 1)
            os.close(moved)


def stdout_to_stderr_from_now() -> None:
    """Once a command has printed its output: send whatever is written to standard
    output from now on (``atexit`` handlers of a tools module, through ``print`` or file
    descriptor 1) to standard error, so that ``--json`` output stays one JSON document
    to the end of the process (docs/cli.md)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        if sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2:
            if sys.__stdout__ is not None:
                sys.__stdout__.flush()
            os.dup2(2, 1)
    sys.stdout = sys.stderr
