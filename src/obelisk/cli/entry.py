"""The ``obelisk`` command's entry point (and ``python -m obelisk``).

``obelisk --version`` is answered here, before the command line's libraries (typer,
click, rich) are imported: some versions of typer import click and rich as soon as
they are imported themselves.  Everything else goes to :func:`obelisk.cli.app.main`
(docs/cli.md).
"""

from __future__ import annotations

import sys

from obelisk import __version__

__all__ = ["main"]


def main() -> None:
    """Print the version for ``obelisk --version``; else run the command line."""
    if sys.argv[1:] == ["--version"]:
        print(f"obelisk {__version__}")
        return
    from obelisk.cli.app import main as command_line

    command_line()
