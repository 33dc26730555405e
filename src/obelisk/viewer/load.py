"""Read what a run left behind, whichever kind it is, into the viewer's document
(docs/viewer.md).

:func:`read_document` tells the kinds apart by their content: a journal is an SQLite
file; a JSON document with ``scenarios`` is a dry run's report (``obelisk simulate
--json``), one with ``turns`` a loop's result (``obelisk loop --json``); JSON lines whose
first record has ``event`` are a trace (``obelisk run --trace``), with ``turn`` a loop's
transcript (``obelisk loop --transcript``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from obelisk.errors import UsageError
from obelisk.interpreter.tools.registry import ToolsLike
from obelisk.json_values import loads_strict
from obelisk.viewer.journaled import journal_document
from obelisk.viewer.plays import loop_document, simulation_document
from obelisk.viewer.runs import trace_document

__all__ = ["is_journal", "read_document"]

_SQLITE = b"SQLite format 3\x00"


def is_journal(path: Path) -> bool:
    """Whether ``path`` is an SQLite file (a journal)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(_SQLITE)) == _SQLITE
    except OSError:
        return False


def read_document(
    source: str | None,
    *,
    journal: str | None = None,
    plan: Any = None,
    tools: ToolsLike = None,
) -> dict[str, Any]:
    """The document of ``source``: a trace, report or transcript file, a journal file,
    or, with ``journal``, a run id of that journal (``None``: its newest run).  ``plan``
    (a decoded plan) gives a trace's or dry run's graph its edges; ``tools`` the world
    effects' order edges.  Raises :class:`~obelisk.errors.UsageError` for a file that
    cannot be read or is none of these kinds, :class:`~obelisk.errors.JournalError` for
    a bad journal or an unknown run."""
    if journal is not None:
        return journal_document(journal, source, tools)
    if source is None:
        raise UsageError("nothing to view: give a trace, a report, a transcript or --journal")
    path = Path(source)
    if is_journal(path):
        return journal_document(source, None, tools)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise UsageError(f"cannot read {source!r}: {reason}") from None
    return _text_document(text, path.name, plan, tools)


def _text_document(text: str, name: str, plan: Any, tools: ToolsLike) -> dict[str, Any]:
    whole = _whole(text)
    if isinstance(whole, Mapping) and "scenarios" in whole:
        return simulation_document(whole, f"dry run of {name}", plan, tools)
    if isinstance(whole, Mapping) and isinstance(whole.get("turns"), list):
        return loop_document(whole["turns"], f"loop {name}", tools, whole.get("revisions") or [])
    records = _lines(text, name)
    first = records[0] if records else {}
    if "event" in first:
        return trace_document(records, f"trace {name}", plan, tools)
    if "turn" in first:
        return loop_document(records, f"loop {name}", tools)
    raise UsageError(f"{name!r} is not a trace, a journal, a dry run's report or a loop transcript")


def _whole(text: str) -> Any:
    try:
        return loads_strict(text)
    except ValueError:
        return None


def _lines(text: str, name: str) -> list[Mapping[str, Any]]:
    """The JSON objects of ``text``'s lines.  A last line without its newline that is not
    JSON is left out: the file is still being written (``--serve`` reads it again)."""
    records: list[Mapping[str, Any]] = []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = loads_strict(line)
        except json.JSONDecodeError as exc:
            if number == len(lines) and not text.endswith("\n"):
                break
            raise UsageError(f"{name!r} line {number} is not JSON: {exc.msg}") from None
        if isinstance(record, Mapping):
            records.append(record)
    return records
