"""``python -m obelisk``: the command line."""

from obelisk.cli.entry import main

main()
