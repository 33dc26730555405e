"""The ``obelisk`` command line (typer + rich), one module per command group.

``app`` builds the typer application and registers the commands; ``io`` holds
what they share (reading plans and JSON files, loading tools, printing errors);
``check`` holds ``check`` and ``graph``, ``run`` holds ``run``, ``loop`` holds
``loop``.  The command line is documented in docs/cli.md.
"""
