"""World effect resources: their names, how they overlap, and a call's own
(docs/semantics.md, "World effects and order-only edges").

A resource is a dotted name, ``slack.users``, optionally followed by ``:`` and a path
inside it whose parts are separated by ``/``: ``files:notes/a.txt``.  Two resources
overlap when one lies below the other, part by part: ``files`` overlaps every
``files:...``, ``files:notes`` overlaps ``files:notes/a.txt``, and ``slack`` overlaps
``slack.users``.

A tool whose resource depends on an argument declares the path as ``{argument}``:
``effects={"files:{path}": "write"}``.  A call that writes that argument as a literal
string touches ``files:<that path>`` (``notes//./a.txt`` is ``files:notes/a.txt``); a
call that passes a reference, or leaves the argument out, or gives a path that is
absolute, holds ``..`` or a backslash, or names the root itself, touches the whole
``files``.  So two calls that may touch the same file always touch overlapping
resources, as long as the file has one spelling: a second name for it (a symlink, a
hard link, another letter case on a disk that ignores case) is not seen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "call_effects",
    "effect_base",
    "is_templated",
    "resource_parts",
    "resource_problem",
    "resources_overlap",
]

_DOTTED = re.compile(r"[^\s.:\x00-\x1f\x7f]+(?:\.[^\s.:\x00-\x1f\x7f]+)*")
_TEMPLATE = re.compile(r"\{([^\W\d]\w*)\}")
_PATH_PART = re.compile(r"[^/\x00-\x1f\x7f]+")


def resource_problem(resource: Any) -> str | None:
    """Why ``resource`` is not a resource name (``None`` when it is one): a dotted
    name such as ``'slack.users'``, optionally ``:`` and a ``/``-separated path
    (``'files:notes/a.txt'``) or one ``{argument}`` (``'files:{path}'``)."""
    if not isinstance(resource, str):
        return f"effect resource {resource!r} must be a string"
    name, colon, path = resource.partition(":")
    if not _DOTTED.fullmatch(name):
        return f"effect resource {resource!r} must be a dotted name such as 'slack.users'"
    if not colon or _TEMPLATE.fullmatch(path):
        return None
    parts = path.split("/")
    if all(_PATH_PART.fullmatch(part) and part not in (".", "..") for part in parts):
        return None
    return (
        f"effect resource {resource!r}: the part after ':' must be a relative path such "
        "as 'notes/a.txt' or one argument such as '{path}'"
    )


def resource_parts(resource: str) -> tuple[str, ...]:
    """The parts that overlap is judged by: the dotted name's, then the path's (each
    marked with a leading ``/``, so ``files:a`` and ``files.a`` stay apart)."""
    name, _, path = resource.partition(":")
    parts = name.split(".")
    parts.extend("/" + part for part in path.split("/") if part)
    return tuple(parts)


def resources_overlap(one: str, other: str) -> bool:
    """Whether ``one`` and ``other`` are the same resource or one lies below the other."""
    if one == other:
        return True
    a, b = resource_parts(one), resource_parts(other)
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return longer[: len(shorter)] == shorter


def effect_base(resource: str) -> str:
    """The dotted name of ``resource``, its path left out: ``files`` for
    ``files:{path}`` and ``files:notes/a.txt``."""
    return resource.partition(":")[0]


def is_templated(effects: Mapping[str, str]) -> bool:
    """Whether some resource of ``effects`` names an argument (``files:{path}``)."""
    return any(":{" in resource for resource in effects)


def _literal_path(value: Any) -> str | None:
    """``value`` as a normal relative path when it is a literal string that names one
    spelling of one place below the root; ``None`` otherwise (then the whole root)."""
    if type(value) is not str or value.startswith("†") or "\\" in value or "\x00" in value:
        return None  # a reference (or an escaped literal), or a Windows separator
    if value.startswith("/"):
        return None  # absolute: where it lands depends on the root
    parts = [part for part in value.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None  # the root itself, or a path whose '..' a symlink may redirect
    return "/".join(parts)


def call_effects(effects: Mapping[str, str], arguments: Mapping[str, Any]) -> dict[str, str]:
    """The resources one call touches: ``effects`` (a tool's) with each ``{argument}``
    replaced by the call's literal path in ``arguments`` (its arguments as written),
    or dropped with the ``:`` when that is not a literal path (the whole resource).
    Where two resources of the tool end up the same, a write wins over a read."""
    found: dict[str, str] = {}
    for resource, access in effects.items():
        name, _, path = resource.partition(":")
        template = _TEMPLATE.fullmatch(path)
        if template is not None:
            literal = _literal_path(arguments.get(template.group(1)))
            resource = name if literal is None else f"{name}:{literal}"
        if found.get(resource) != "write":
            found[resource] = access
    return found
