"""The standard tools, grouped by family (docs/architecture.md).

:func:`default_registry` returns every standard tool in one
:class:`~obelisk.interpreter.tools.registry.Registry`; the families live in
:mod:`~obelisk.stdlib_tools.data`, :mod:`~obelisk.stdlib_tools.text`,
:mod:`~obelisk.stdlib_tools.arithmetic`, :mod:`~obelisk.stdlib_tools.logic`,
:mod:`~obelisk.stdlib_tools.lists`, :mod:`~obelisk.stdlib_tools.json_tools`,
:mod:`~obelisk.stdlib_tools.clock` and :mod:`~obelisk.stdlib_tools.files`.
"""

from __future__ import annotations

import os

from obelisk.interpreter.tools.registry import Registry
from obelisk.stdlib_tools import arithmetic, clock, data, json_tools, lists, logic, text
from obelisk.stdlib_tools.files import file_tools as file_tools

__all__ = ["default_registry", "file_tools"]


def default_registry(files_root: str | os.PathLike[str] | None = None) -> Registry:
    """A new registry with every standard tool.

    The file tools (``read_text``, ``write_text``, ``read_json``, ``write_json``,
    ``list_dir``, ``path_exists``) are confined to ``files_root``; with ``None`` they
    are registered but refuse every call with :class:`PermissionError`.  A
    ``files_root`` that is not a directory raises
    :class:`~obelisk.errors.ToolDefinitionError`.
    """
    families = (data, text, arithmetic, logic, lists, json_tools, clock)
    return Registry([*(t for family in families for t in family.TOOLS), *file_tools(files_root)])
