"""``python -m obelisk``: the command line."""

from obelisk.cli.app import main

main()
