"""Quarantine: a planner that never reads untrusted data (docs/loop.md, "Quarantine").

With ``Loop(quarantine=True)`` every planning request is built through a
:class:`Quarantine` made from the labels of the state (a
:class:`~obelisk.interpreter.tools.labels.LabelMap`):

- :meth:`Quarantine.document` replaces each untrusted value of the input, the state
  and the data documents by a handle, ``{"$untrusted": "†state.c3", "type":
  "string", "bytes": 2311}`` (the value's JSON type and the size of its compact JSON
  text, in bytes); the handle's reference reads the value as any reference does;
- :meth:`Quarantine.text` redacts the messages sent back (diagnostics, skip reasons,
  output errors): every untrusted string (or key) of 4 characters or more that a
  message quotes, as it is or escaped as JSON or Python quote it, or its start of 4
  characters or more cut short with ``...``, becomes its handle;
- :func:`withheld` withholds the whole message of a call's error when the call read
  untrusted data or its tool's results are untrusted: its type is kept, its text
  could be anything the attacker chose.

Sub-requests (latent calls, delegates) are not built here: they see the values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from obelisk.grammar import ref
from obelisk.interpreter.loop.messages import ErrorMessage
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.labels import Label, LabelMap, Path, Source
from obelisk.interpreter.tools.tool import Tool

__all__ = ["HANDLE_KEY", "QUARANTINE_INSTRUCTIONS", "Quarantine", "handle", "withheld"]

HANDLE_KEY = "$untrusted"
"""The key that marks a handle in a quarantined request."""

QUARANTINE_INSTRUCTIONS = (
    "Quarantine: values from untrusted sources are not shown to you. In their place is "
    'a handle {"$untrusted": "<reference>", "type": <JSON type>, "bytes": <size>}. Pass '
    'such a value along by its reference, e.g. "text": "†state.mail.body": the tool '
    "receives the value. To read, sort or summarize it, hand it to a latent tool (leave "
    "out _output): it is answered separately, by a model that sees the value. Never "
    "guess an untrusted value."
)
"""The text a quarantined planning request carries after the mode's instructions."""

MIN_QUOTED = 4
"""Untrusted strings shorter than this are not looked for in messages."""

_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}


def json_type(value: Any) -> str:
    """The JSON type of ``value``: ``object``, ``array``, ``string``, ``integer``,
    ``number``, ``boolean`` or ``null``."""
    if value is None:
        return "null"
    return _TYPES.get(type(value), "object" if isinstance(value, dict) else "string")


def handle(reference: str, value: Any) -> dict[str, Any]:
    """The handle that stands for ``value`` at ``reference`` in a quarantined request."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return {HANDLE_KEY: reference, "type": json_type(value), "bytes": len(text.encode())}


def _below(suffixes: list[Path], key: Any, size: int | None) -> list[Path]:
    """The untrusted paths below ``key`` (a list's index, of a list of ``size``, also
    matches a negative index that pointed at it)."""
    found = []
    for suffix in suffixes:
        head = suffix[0]
        if head is ... or head == key or _from_end(head, size) == key:
            found.append(suffix[1:])
    return found


def _from_end(head: Any, size: int | None) -> int | None:
    """The index a negative index ``head`` points at in a list of ``size``."""
    if size is None or not isinstance(head, int) or head >= 0:
        return None
    return head + size


class Quarantine:
    """The quarantined view of one request (see the module docstring): ``labels`` are
    the state's labels, ``sources()`` gives the documents shown, as ``(kind, value)``
    pairs, which :meth:`text` looks for quoted values in."""

    def __init__(
        self,
        labels: LabelMap | None,
        sources: Callable[[], Iterable[tuple[str, Any]]] = tuple,
    ) -> None:
        self.paths: dict[str, list[Path]] = {}
        for path, label in labels.items() if labels is not None else ():
            if label.untrusted and path:
                self.paths.setdefault(str(path[0]), []).append(path[1:])
        self.sources = sources
        self._quoted: list[tuple[str, str]] | None = None  # (quoted text, its handle's text)

    @classmethod
    def of(
        cls, labels: LabelMap | None, state: State, input: Any, inputs: Mapping[str, Any]
    ) -> Quarantine:
        """The quarantined view of a request showing ``state``, ``input`` and each
        instance's ``inputs``, under the state's ``labels``."""

        def sources() -> Iterator[tuple[str, Any]]:  # read only when a message needs it
            yield "input", input
            yield from (("input", value) for value in inputs.values())
            yield from ((kind, state.peek(kind)) for kind in state.kinds)
            yield from (("state", state.peek("state", name)) for name in state.instances)

        return cls(labels, sources)

    def document(self, kind: str, value: Any) -> Any:
        """``value``, the document of ``kind``, with each untrusted part a handle."""
        suffixes = self.paths.get(kind)
        return value if not suffixes else self._redacted(kind, value, suffixes, ())

    def _redacted(self, kind: str, value: Any, suffixes: list[Path], path: Path) -> Any:
        if any(not suffix for suffix in suffixes):
            return handle(ref(kind, *path), value)
        if not suffixes:
            return value
        if isinstance(value, dict):
            return {
                k: self._redacted(kind, v, _below(suffixes, k, None), (*path, k))
                for k, v in value.items()
            }
        if isinstance(value, list):
            size = len(value)
            return [
                self._redacted(kind, v, _below(suffixes, i, size), (*path, i))
                for i, v in enumerate(value)
            ]
        return value  # a label below a scalar: nothing there to hide

    # -- messages ------------------------------------------------------------------
    def text(self, text: str) -> str:
        """``text`` with every untrusted string it quotes replaced by its handle, the
        start of one cut short with ``...`` (as obelisk's messages cut long values)
        included."""
        if not self.paths:
            return text
        for quoted, replacement in self.quoted():
            if quoted in text:
                text = text.replace(quoted, replacement)
            if "..." in text and quoted[:MIN_QUOTED] in text:
                text = _cut_quotes(text, quoted, replacement)
        return text

    def error(self, message: ErrorMessage) -> ErrorMessage:
        """``message`` with its text redacted (:meth:`text`)."""
        error = message.error
        text = error.get("message")
        if not self.paths or not isinstance(text, str):
            return message
        redacted = self.text(text)
        if redacted == text:
            return message
        return ErrorMessage(call=message.call, error={**error, "message": redacted})

    def quoted(self) -> list[tuple[str, str]]:
        """Each untrusted string as a message may quote it, longest first, with the
        text of the handle that replaces it."""
        if self._quoted is None:
            found: dict[str, str] = {}
            for kind, document in self.sources():
                for reference, value in self._untrusted(kind, document):
                    replacement = json.dumps(handle(reference, value), ensure_ascii=False)
                    for text in _strings(value):
                        for quoted in _spellings(text):
                            found.setdefault(quoted, replacement)
            self._quoted = sorted(found.items(), key=lambda item: -len(item[0]))
        return self._quoted

    def _untrusted(self, kind: str, document: Any) -> Iterator[tuple[str, Any]]:
        """``(reference, value)`` of each untrusted part of ``document``."""
        stack: list[tuple[Any, list[Path], Path]] = [(document, self.paths.get(kind, []), ())]
        while stack:
            value, suffixes, path = stack.pop()
            if not suffixes:
                continue
            if any(not suffix for suffix in suffixes):
                yield ref(kind, *path), value
            elif isinstance(value, dict):
                stack.extend((v, _below(suffixes, k, None), (*path, k)) for k, v in value.items())
            elif isinstance(value, list):
                size = len(value)
                stack.extend(
                    (v, _below(suffixes, i, size), (*path, i)) for i, v in enumerate(value)
                )


def _cut_quotes(text: str, quoted: str, replacement: str) -> str:
    """``text`` with each start of ``quoted`` (:data:`MIN_QUOTED` characters or more)
    that ends just before a ``...`` replaced, with the ``...``, by ``replacement``."""
    start = text.find("...")
    while start != -1:
        shared = _shared(text[:start], quoted)
        if shared >= MIN_QUOTED:
            text = text[: start - shared] + replacement + text[start + 3 :]
            start = start - shared + len(replacement)
        else:
            start += 3
        start = text.find("...", start)
    return text


def _shared(before: str, quoted: str) -> int:
    """The length of the longest start of ``quoted`` that ``before`` ends with."""
    head = quoted[:MIN_QUOTED]
    place = before.find(head)
    while place != -1:  # the leftmost place whose rest starts quoted is the longest
        if quoted.startswith(before[place:]):
            return len(before) - place
        place = before.find(head, place + 1)
    return 0


def _strings(value: Any) -> Iterator[str]:
    """Every string inside ``value``, keys included, of :data:`MIN_QUOTED` or more."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= MIN_QUOTED:
                yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _spellings(text: str) -> set[str]:
    """``text`` as a message may quote it: as it is, escaped as in JSON (ASCII or
    not) and as in a Python ``repr``."""
    return {
        text,
        json.dumps(text, ensure_ascii=False)[1:-1],
        json.dumps(text)[1:-1],
        repr(text)[1:-1],
    }


def call_label(record: CallRecord, tool: Tool | None) -> Label:
    """What a call's error may carry: the join of its arguments' labels (as its record
    keeps them) and its tool's own result label."""
    label = Label()
    for data in (record.labels or {}).values():
        label = label.join(Label.from_dict(data))
    if tool is not None:
        label = label.join(tool.rules.output_label(Source(record.label)))
    return label


def withheld(record: CallRecord, tool: Tool | None, message: ErrorMessage) -> ErrorMessage:
    """``message``, the error record of ``record``'s call, with its text withheld when
    the call read untrusted data or its tool's results are untrusted (its type kept)."""
    label = call_label(record, tool)
    if not label.untrusted:
        return message
    untrusted = sorted(
        name
        for name, data in (record.labels or {}).items()
        if Label.from_dict(data).untrusted and not name.startswith("_")
    )
    what = f"its argument {', '.join(untrusted)}" if untrusted else "its tool's own results"
    text = (
        f"withheld in quarantine: {record.label} read untrusted data ({what}), and its "
        "message may quote it. To read the error, give the call an error arm "
        '("_outputPath": "†state.ok || †state.error") and hand that to a latent tool.'
    )
    return ErrorMessage(call=message.call, error={**message.error, "message": text})
