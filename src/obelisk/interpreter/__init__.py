"""The interpreter, one package per pipeline stage (docs/architecture.md).

``plan`` (JSON text to a typed plan) and ``tools`` (what a plan may call) feed
``analysis`` (dependency graph and every diagnostic), which feeds ``runtime``
(state, scheduler, run records), which the execution ``loop`` drives.  Imports
point down that list only.  The public names are re-exported by :mod:`obelisk`.
"""
