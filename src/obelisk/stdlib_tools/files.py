"""File tools, confined to one root directory chosen by the caller.

:func:`file_tools` builds the tools for a root.  Every ``path`` argument is
relative to the root (an absolute path must lie inside it).  Confinement is checked
while the file is opened, not before: the root is held open, and every component of
the path is opened relative to the directory before it with ``O_NOFOLLOW``
(``os.open(..., dir_fd=...)``).  A symlink met on the way is read and followed by
this module, never by the kernel, and ``..`` steps back to a directory already
held; so an absolute path elsewhere, a ``..`` escape, a symlink pointing outside,
and a directory swapped for such a symlink between a check and a use are all
refused with :class:`PermissionError`.  Only regular files are read or written (a
FIFO could block forever).  Text is UTF-8, written and read without newline
translation.  Each tool declares a world effect on ``files:<its path>`` (:data:`READ`,
:data:`WRITE`), so a write and a later read of one file are ordered.  With no root
(``None``) the tools exist but every call raises
:class:`PermissionError`.  Platforms without ``dir_fd`` and ``O_NOFOLLOW`` (Windows)
fall back to resolving the path first, which is not race-free.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from obelisk.errors import ToolDefinitionError
from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.stdlib_tools._common import check_output_size, one_line
from obelisk.stdlib_tools.json_tools import parse_json_text, pretty_json_size

__all__ = ["NO_ROOT_MESSAGE", "READ", "WRITE", "FilesRoot", "file_tools"]

NO_ROOT_MESSAGE = "no files root is configured; pass --files-root DIR (or files_root=...)"

_RACE_FREE = (
    hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
    and {os.open, os.mkdir, os.readlink, os.stat} <= os.supports_dir_fd
)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_MAX_LINKS = 40
"""Symlinks followed for one path before giving up (ELOOP), as the kernel does."""


class FilesRoot:
    """The resolved root directory, or ``None``; opens paths inside it race-free.

    ``root`` is the resolved path; the directory itself is held open (``fd``) from
    construction on, so renaming or replacing the root's path later changes nothing.
    """

    __slots__ = ("fd", "root")

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.fd: int | None = None
        if root is None:
            self.root: Path | None = None
            return
        resolved = Path(root).expanduser().resolve(strict=False)
        if not resolved.is_dir():
            raise ToolDefinitionError(f"files root '{resolved}' is not a directory")
        self.root = resolved
        if _RACE_FREE:
            self.fd = os.open(resolved, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)

    def __del__(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(Exception):  # also at interpreter shutdown
                os.close(self.fd)
            self.fd = None

    def _outside(self, path: str) -> PermissionError:
        return PermissionError(f"path {path!r} is outside the files root '{self.root}'")

    def resolve(self, path: str) -> Path:
        """The absolute path for ``path``, checked lexically and through the symlinks
        that exist now; PermissionError outside the root or with no root.  Not
        race-free: the tools open paths with :meth:`open` instead."""
        if self.root is None:
            raise PermissionError(NO_ROOT_MESSAGE)
        target = (self.root / path).resolve(strict=False)
        if target != self.root and self.root not in target.parents:
            raise self._outside(path)
        return target

    def _parts(self, path: str, shown: str) -> list[str]:
        """``path`` as components relative to the root (absolute: it must lie inside)."""
        assert self.root is not None
        if "\0" in path:
            raise ValueError(f"path {shown!r} contains a NUL character")
        if os.path.isabs(path):
            normal = os.path.normpath(path)
            root = str(self.root)
            if normal == root:
                return []
            if not normal.startswith(root.rstrip(os.sep) + os.sep):
                raise self._outside(shown)
            path = normal[len(root) :]
        parts = [part for part in path.split("/") if part not in ("", ".")]
        depth = 0
        for part in parts:  # a path that climbs above the root is refused as written
            depth += -1 if part == ".." else 1
            if depth < 0:
                raise self._outside(shown)
        return parts

    def open(self, path: str, flags: int, *, create_parents: bool = False) -> int:
        """A file descriptor for ``path`` opened with ``flags`` (``O_NOFOLLOW`` and
        ``O_CLOEXEC`` added), confined to the root; the caller closes it.

        Every directory on the way is opened relative to the one before it; a
        symlink is read and followed here, its target confined like the path
        itself.  With ``create_parents``, missing directories are created.
        Raises PermissionError outside the root (or with no root),
        FileNotFoundError, NotADirectoryError, or OSError(ELOOP) after 40 symlinks.
        """
        if self.root is None:
            raise PermissionError(NO_ROOT_MESSAGE)
        if self.fd is None:  # no dir_fd on this platform: resolve, then open
            return os.open(self.resolve(path), flags | _CLOEXEC)
        parts = self._parts(path, path)
        held = [os.dup(self.fd)]  # the directories from the root down to the current one
        try:
            return self._walk(path, parts, held, flags, create_parents)
        finally:
            for fd in held:
                os.close(fd)

    def _walk(
        self, path: str, parts: list[str], held: list[int], flags: int, create_parents: bool
    ) -> int:
        """:meth:`open`'s walk down ``parts`` from the directory ``held[-1]``: each
        directory opened is pushed on ``held`` (and popped by ``..``); the caller
        closes what is left."""
        if not parts:
            return os.open(".", flags | _NOFOLLOW | _CLOEXEC, dir_fd=held[-1])
        links = 0
        while parts:
            name = parts.pop(0)
            if name == "..":
                if len(held) == 1:
                    raise self._outside(path)
                os.close(held.pop())
                continue
            last = not parts
            try:
                if last:
                    return os.open(name, flags | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=held[-1])
                held.append(os.open(name, _DIRECTORY, dir_fd=held[-1]))
                continue
            except OSError as exc:
                target = _link_target(name, held[-1], exc)
                if target is None:
                    if exc.errno == errno.ENOENT and create_parents and not last:
                        _make_dir(name, held[-1])
                        parts.insert(0, name)
                        continue
                    raise _located(exc, path) from None
            links += 1
            if links > _MAX_LINKS:
                raise OSError(errno.ELOOP, f"too many symlinks in {path!r}")
            parts = self._followed(target, held, path) + parts
        return os.open(".", flags | _CLOEXEC, dir_fd=held[-1])  # the path ended in ".."

    def _followed(self, target: str, held: list[int], path: str) -> list[str]:
        """The parts of a symlink's ``target`` to walk next: an absolute target starts
        again from the root (the directories below it closed), confined like ``path``."""
        if not os.path.isabs(target):
            return [p for p in target.split("/") if p not in ("", ".")]
        for fd in held[1:]:
            os.close(fd)
        del held[1:]
        return self._parts(target, path)


def _link_target(name: str, directory: int, error: OSError) -> str | None:
    """The target of the symlink ``name`` when ``error`` came from meeting one."""
    if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return None
    try:
        return os.readlink(name, dir_fd=directory)
    except OSError:
        return None


def _make_dir(name: str, directory: int) -> None:
    with contextlib.suppress(FileExistsError):  # made meanwhile: the retry opens it
        os.mkdir(name, 0o777, dir_fd=directory)


def _located(error: OSError, path: str) -> OSError:
    """``error`` again, naming the plan's ``path`` instead of one component."""
    kind = type(error)
    return kind(error.errno, os.strerror(error.errno or 0), path)


def _read_bytes(files: FilesRoot, path: str, tool: str | None = None) -> bytes:
    """The file's bytes; with ``tool``, a file whose text is bigger than the run's
    ``Limits.max_output_bytes`` is refused before it is read (its JSON is as big)."""
    fd = files.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        _regular(handle.fileno(), path)
        if tool is not None:
            check_output_size(tool, os.fstat(handle.fileno()).st_size + 2)
        return handle.read()


def _write_bytes(files: FilesRoot, path: str, data: bytes) -> int:
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
    fd = files.open(path, flags, create_parents=True)
    with os.fdopen(fd, "wb") as handle:
        _regular(handle.fileno(), path)
        os.ftruncate(handle.fileno(), 0)
        handle.write(data)
    return len(data)


def _regular(fd: int, path: str) -> None:
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(mode):
        raise PermissionError(f"path {path!r} is not a regular file")


def _encode_json(value: Any, indent: int | None) -> bytes:
    if indent is not None and indent < 0:
        raise ValueError(f"indent must be >= 0, got {indent}")
    if indent is not None:  # the file is bounded as a result would be
        check_output_size("write_json", pretty_json_size(value, indent) + 1)
    text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


READ = {"files:{path}": "read"}
WRITE = {"files:{path}": "write"}
"""The file tools' world effects: the file or folder at their ``path`` argument, or the
whole files root when ``path`` is not a literal relative path (docs/tools.md,
"Files"; :mod:`obelisk.interpreter.tools.effects`).  So a call that writes a file and
one that reads it run in plan order, never at the same time."""


def file_tools(root: str | os.PathLike[str] | None) -> list[Tool]:
    """The file tools confined to ``root`` (``None``: tools that always refuse).

    Raises :class:`~obelisk.errors.ToolDefinitionError` when ``root`` is given but
    is not an existing directory.
    """
    files = FilesRoot(root)

    @standard_tool(name="read_text", effects=READ)
    def read_text(path: str) -> str:
        """The UTF-8 text of the file at `path` (relative to the files root). Missing file:
        FileNotFoundError; outside the root: PermissionError."""
        return _read_bytes(files, path, "read_text").decode("utf-8")

    @standard_tool(name="write_text", effects=WRITE)
    def write_text(path: str, text: str) -> int:
        """Write `text` as UTF-8 to the file at `path` (relative to the files root), replacing
        it and creating parent folders; returns the bytes written."""
        return _write_bytes(files, path, text.encode("utf-8"))

    @standard_tool(name="read_json", effects=READ)
    def read_json(path: str) -> Any:
        """The JSON value in the file at `path` (relative to the files root). Invalid JSON:
        ValueError naming line and column."""
        text = _read_bytes(files, path).decode("utf-8")
        try:
            return parse_json_text(text)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    @standard_tool(name="write_json", effects=WRITE)
    def write_json(path: str, value: Any, indent: int | None = 2) -> int:
        """Write `value` as JSON (UTF-8, `indent` spaces, null: one line; final newline) to
        the file at `path` (relative to the files root); returns the bytes written."""
        return _write_bytes(files, path, _encode_json(value, indent))

    @standard_tool(name="list_dir", effects=READ)
    def list_dir(path: str = ".") -> list[str]:
        """The sorted names in the folder at `path` (relative to the files root; default the
        root itself); folder names end with "/"."""
        if files.fd is None:  # no dir_fd on this platform
            folder = files.resolve(path)
            return sorted(
                entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir()
            )
        fd = files.open(path, _DIRECTORY)
        try:
            with os.scandir(fd) as entries:
                return sorted(entry.name + ("/" if entry.is_dir() else "") for entry in entries)
        finally:
            os.close(fd)

    @standard_tool(name="path_exists", effects=READ)
    def path_exists(path: str) -> bool:
        """Whether a file or folder exists at `path` (relative to the files root)."""
        try:
            fd = files.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (FileNotFoundError, NotADirectoryError):
            return False
        except PermissionError as exc:
            if exc.errno == errno.EACCES:  # there, but not readable
                return True
            raise
        os.close(fd)
        return True

    return list(one_line(read_text, write_text, read_json, write_json, list_dir, path_exists))
