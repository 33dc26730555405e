"""Durable runs: a plan run with a journal, resumed by its id after a crash, a pause
for approvals or a stop (docs/durable.md).

The stage's modules, from the top: :mod:`.runs` (run and resume a journaled run),
:mod:`.settled` (a run whose calls all settled, read straight from the journal),
:mod:`.unknown` (calls whose outcome nobody knows), :mod:`.journal` (the public
:class:`~obelisk.interpreter.runtime.durable.journal.Journal`), :mod:`.writer`
(what a running engine records: an
:class:`~obelisk.interpreter.runtime.hooks.Observer` of it), :mod:`.store`
(the SQLite file), :mod:`.pinning` (what a run is pinned to) and :mod:`.data` (the
rows and their JSON).  The scheduler below never imports this package: the engine
knows a journal only as one of its ``Hooks``' observers.
"""
