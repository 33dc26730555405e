"""``python -m obelisk``: the command line."""

from obelisk.cli import main

main()
