"""``ScriptedModel``: a model that replays answers (docs/loop.md).

The test double of the execution loop, in the spirit of httpx's
``MockTransport``: give it the solutions a model would write, in order, or a
function that answers each request, and the loop cannot tell it from a real
model.  It records every request it was given.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from obelisk.errors import ScriptExhausted, UsageError
from obelisk.interpreter.loop.messages import Request, Solution, parse_solution
from obelisk.json_values import loads_strict

__all__ = ["Answer", "ScriptedModel"]

Answer = Solution | Mapping[str, Any] | str | Callable[[Request], Any]
"""One scripted answer: a :class:`Solution`, its JSON object, raw text (which may
be deliberately broken) or a function of the request returning one of those."""


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class ScriptedModel:
    """Replays ``answers`` in order, one per request.

    ``answers``: a list of :data:`Answer` items.  ``respond``: instead of a list, a
    function ``request -> answer`` called for every request (for parallel
    sub-requests whose order is not fixed).  ``tokens_per_second``: the rate at
    which :meth:`stream` writes, counting one token per ``chars_per_token``
    characters (default 4); ``None`` streams without waiting.  ``latency``:
    seconds before the first chunk (and before :meth:`complete` answers).

    ``requests`` lists every :class:`Request` received, in order.  Running out
    raises :class:`ScriptExhausted`; text that is not a solution raises
    :class:`~obelisk.errors.SolutionError` from :meth:`complete`,
    as a real model's bad answer would.

    >>> import asyncio
    >>> model = ScriptedModel([{"calls": [], "output": "done"}])
    >>> asyncio.run(model.complete(Request())).output
    'done'
    >>> asyncio.run(model.complete(Request()))
    Traceback (most recent call last):
    ...
    obelisk.ScriptExhausted: the scripted model ran out of answers: \
it had 1 and was asked for answer 2
    """

    def __init__(
        self,
        answers: Iterable[Answer] = (),
        *,
        respond: Callable[[Request], Any] | None = None,
        tokens_per_second: float | None = None,
        chars_per_token: int = 4,
        latency: float = 0.0,
    ) -> None:
        self.answers: list[Answer] = list(answers)
        if respond is not None and self.answers:
            raise UsageError("give ScriptedModel either answers or respond=, not both")
        if tokens_per_second is not None and not tokens_per_second > 0:
            raise UsageError(f"tokens_per_second must be > 0, got {tokens_per_second!r}")
        if type(chars_per_token) is not int or chars_per_token < 1:
            raise UsageError(f"chars_per_token must be an integer >= 1, got {chars_per_token!r}")
        self.respond = respond
        self.tokens_per_second = tokens_per_second
        self.chars_per_token = chars_per_token
        self.latency = latency
        self.requests: list[Request] = []
        self._next = 0

    @classmethod
    def from_jsonl(cls, path: str | Path, **options: Any) -> ScriptedModel:
        """Answers from a JSON-lines file: each line is a solution object, or a
        turn record with a ``"solution"`` key (what ``LoopResult.to_jsonl`` writes;
        a ``"raw"`` key replays a broken answer verbatim).  Blank lines are skipped, and
        so is a ``{"header": ...}`` line (what a recording says about its model and
        settings).
        Lines are read as strict JSON (no ``NaN``, no integer too long for Python, no
        nesting too deep to decode; see docs/limits.md).  Raises
        :class:`~obelisk.errors.UsageError` naming the line and column of a bad entry."""
        answers: list[Answer] = []
        text = Path(path).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = loads_strict(line)
            except json.JSONDecodeError as exc:
                raise UsageError(
                    f"{path}:{number}: not JSON: {exc.msg} at column {exc.colno}"
                ) from None
            if not isinstance(entry, dict):
                raise UsageError(f"{path}:{number}: expected a JSON object")
            if "header" in entry:  # a recording's model and settings, not an answer
                continue
            if "raw" in entry and isinstance(entry["raw"], str):
                answers.append(entry["raw"])
            elif "solution" in entry:
                if entry["solution"] is None:  # a turn that got no usable answer
                    continue
                answers.append(entry["solution"])
            else:
                answers.append(entry)
        return cls(answers, **options)

    def _answer(self, request: Request) -> Any:
        self.requests.append(request)
        if self.respond is not None:
            return self.respond(request)
        if self._next >= len(self.answers):
            raise ScriptExhausted(self._next)
        answer = self.answers[self._next]
        self._next += 1
        return answer(request) if callable(answer) else answer

    async def complete(self, request: Request) -> Solution:
        """The next answer, parsed (raises as described on the class)."""
        answer = self._answer(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        elif self.tokens_per_second is not None:
            text = answer if isinstance(answer, str) else _text(answer)
            await asyncio.sleep(len(text) / self.chars_per_token / self.tokens_per_second)
        return parse_solution(answer)

    async def stream(self, request: Request) -> AsyncIterator[str]:
        """The next answer's JSON text in token-sized chunks, at ``tokens_per_second``."""
        answer = self._answer(request)
        text = answer if isinstance(answer, str) else _text(answer)
        if self.latency:
            await asyncio.sleep(self.latency)
        rate = self.tokens_per_second
        step = self.chars_per_token
        if rate is None:
            for chunk in _chunks(text, 256):
                yield chunk
            return
        loop = asyncio.get_running_loop()
        start = loop.time()
        for position, chunk in enumerate(_chunks(text, step)):
            due = start + (position + 1) / rate
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            yield chunk


def _text(answer: Any) -> str:
    if isinstance(answer, Solution):
        return json.dumps(answer.to_data(), ensure_ascii=False)
    return json.dumps(answer, ensure_ascii=False)
