"""File tools, confined to one root directory chosen by the caller.

:func:`file_tools` builds the tools for a root.  Every ``path`` argument is
relative to the root; it is resolved (following ``..`` and symlinks) and refused
with :class:`PermissionError` unless the result lies inside the resolved root, so
absolute paths elsewhere, ``..`` escapes and symlinks that point outside are all
refused.  Text is UTF-8, written and read without newline translation.  With no
root (``None``) the tools exist but every call raises :class:`PermissionError`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from obelisk.errors import ToolDefinitionError
from obelisk.interpreter.tools.tool import Tool, tool
from obelisk.stdlib_tools._common import one_line
from obelisk.stdlib_tools.json_tools import parse_json_text

__all__ = ["NO_ROOT_MESSAGE", "FilesRoot", "file_tools"]

NO_ROOT_MESSAGE = "no files root is configured; pass --files-root DIR (or files_root=...)"


class FilesRoot:
    """The resolved root directory, or ``None``; resolves paths inside it."""

    __slots__ = ("root",)

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        if root is None:
            self.root: Path | None = None
            return
        resolved = Path(root).expanduser().resolve(strict=False)
        if not resolved.is_dir():
            raise ToolDefinitionError(f"files root '{resolved}' is not a directory")
        self.root = resolved

    def resolve(self, path: str) -> Path:
        """The absolute path for ``path``; PermissionError outside the root or with no root."""
        if self.root is None:
            raise PermissionError(NO_ROOT_MESSAGE)
        target = (self.root / path).resolve(strict=False)
        if target != self.root and self.root not in target.parents:
            raise PermissionError(f"path {path!r} is outside the files root '{self.root}'")
        return target


def _encode_json(value: Any, indent: int | None) -> bytes:
    if indent is not None and indent < 0:
        raise ValueError(f"indent must be >= 0, got {indent}")
    text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def _write(target: Path, data: bytes) -> int:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return len(data)


def file_tools(root: str | os.PathLike[str] | None) -> list[Tool]:
    """The file tools confined to ``root`` (``None``: tools that always refuse).

    Raises :class:`~obelisk.errors.ToolDefinitionError` when ``root`` is given but
    is not an existing directory.
    """
    files = FilesRoot(root)

    @tool(name="read_text")
    def read_text(path: str) -> str:
        """The UTF-8 text of the file at `path` (relative to the files root). Missing file:
        FileNotFoundError; outside the root: PermissionError."""
        return files.resolve(path).read_bytes().decode("utf-8")

    @tool(name="write_text")
    def write_text(path: str, text: str) -> int:
        """Write `text` as UTF-8 to the file at `path` (relative to the files root), replacing
        it and creating parent folders; returns the bytes written."""
        return _write(files.resolve(path), text.encode("utf-8"))

    @tool(name="read_json")
    def read_json(path: str) -> Any:
        """The JSON value in the file at `path` (relative to the files root). Invalid JSON:
        ValueError naming line and column."""
        text = files.resolve(path).read_bytes().decode("utf-8")
        try:
            return parse_json_text(text)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    @tool(name="write_json")
    def write_json(path: str, value: Any, indent: int | None = 2) -> int:
        """Write `value` as JSON (UTF-8, `indent` spaces, null: one line; final newline) to
        the file at `path` (relative to the files root); returns the bytes written."""
        return _write(files.resolve(path), _encode_json(value, indent))

    @tool(name="list_dir")
    def list_dir(path: str = ".") -> list[str]:
        """The sorted names in the folder at `path` (relative to the files root; default the
        root itself); folder names end with "/"."""
        folder = files.resolve(path)
        return sorted(entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir())

    @tool(name="path_exists")
    def path_exists(path: str) -> bool:
        """Whether a file or folder exists at `path` (relative to the files root)."""
        return files.resolve(path).exists()

    return list(one_line(read_text, write_text, read_json, write_json, list_dir, path_exists))
