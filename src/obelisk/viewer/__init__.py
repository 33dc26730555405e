"""The run viewer: one self-contained HTML page of a run (``obelisk view``, docs/viewer.md).

:func:`~obelisk.viewer.load.read_document` reads a trace, a journaled run, a dry run's
report or a loop's transcript into one JSON document (:mod:`obelisk.viewer.document`);
:func:`~obelisk.viewer.page.render_page` draws the page from it;
:mod:`obelisk.viewer.serve` serves it on 127.0.0.1, following a run in progress.

The modules, from the top: ``serve`` > ``page``, ``load`` > ``journaled``, ``plays``
> ``runs`` > ``document``.  The viewer sits above the interpreter and below the CLI.
"""
