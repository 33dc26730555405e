"""``AnthropicModel``: Claude, through the Anthropic Messages API, as a loop model
(docs/loop.md, "Providers").

Talks to ``POST /v1/messages`` through the official ``anthropic`` SDK
(``pip install 'obelisk[anthropic]'``), with native tool use: the ``tools`` protocol of
:mod:`obelisk.models.tool_calls`.  Each tool is offered as a tool (its parameters as
``input_schema``), with ``final_output`` for the answer; the ``tool_use`` blocks of one
answer become one plan; the calls carried from the last answer are replayed as the
assistant's ``tool_use`` blocks, each answered by a ``tool_result``, before the state
and plan.  The opening (what stays the same from turn to turn) is marked for Anthropic's
prompt cache.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import AsyncGenerator, Awaitable
from typing import Any

from obelisk.errors import MissingDependencyError, ModelError, SolutionError, UsageError

try:
    import anthropic
except ImportError:
    raise MissingDependencyError(
        "AnthropicModel needs the anthropic package, an optional extra: "
        "pip install 'obelisk[anthropic]' (from a clone: pip install '.[anthropic]')"
    ) from None
from obelisk.interpreter.loop.messages import Request, Solution
from obelisk.models import tool_calls
from obelisk.models.clients import Deadline, PerLoop, check_settings, first_bytes, shortened

__all__ = ["AnthropicModel", "AnthropicStream"]

_MALFORMED = (ValueError, TypeError, AttributeError, LookupError)


def _usage(usage: Any) -> dict[str, int] | None:
    """Anthropic's usage as ``{"prompt_tokens", "completion_tokens", "total_tokens"}``;
    the prompt counts the tokens read from and written to the prompt cache too."""
    if usage is None:
        return None
    prompt = sum(
        int(getattr(usage, name, 0) or 0)
        for name in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    completion = int(getattr(usage, "output_tokens", 0) or 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _detail(exc: anthropic.APIError) -> str:
    """The message of an API error: ``{"error": {"message"}}`` in its body, else the SDK's."""
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return shortened(error["message"])
    return shortened(exc.message)


def _messages(talk: tool_calls.Conversation) -> list[dict[str, Any]]:
    """A :class:`~obelisk.models.tool_calls.Conversation` as Anthropic messages: the
    opening (cached), then the carried calls as ``tool_use`` blocks answered by
    ``tool_result`` blocks, then the closing."""
    opening = {"type": "text", "text": talk.opening, "cache_control": {"type": "ephemeral"}}
    closing = {"type": "text", "text": talk.closing}
    if not talk.calls:
        return [{"role": "user", "content": [opening, closing]}]
    uses = [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in talk.calls
    ]
    results = [
        {"type": "tool_result", "tool_use_id": call.id, "content": result}
        for call, result in zip(talk.calls, talk.results, strict=True)
    ]
    return [
        {"role": "user", "content": [opening]},
        {"role": "assistant", "content": uses},
        {"role": "user", "content": [*results, closing]},
    ]


def _tools(request: Request) -> list[dict[str, Any]]:
    return [
        {"name": f["name"], "description": f["description"], "input_schema": f["parameters"]}
        for f in tool_calls.functions(request)
    ]


class AnthropicStream:
    """One streamed answer of :meth:`AnthropicModel.stream`: an async iterator of the
    solution's JSON text, each tool call's object as soon as its ``tool_use`` block is
    complete.  Once ended, ``usage`` holds the token counts and ``finish_reason`` the
    stop reason, ``"max_tokens"`` given as ``"length"`` (as the loop reads it)."""

    def __init__(self, model: AnthropicModel, request: Request) -> None:
        self.usage: dict[str, int] | None = None
        self.finish_reason: str | None = None
        self.prompt: Any = None  # message_start's usage, until message_delta completes it
        self._chunks = model._stream(request, self)

    def __aiter__(self) -> AnthropicStream:
        return self

    def __anext__(self) -> Awaitable[str]:
        return self._chunks.__anext__()

    async def aclose(self) -> None:
        """Stop reading the stream and release its connection."""
        await self._chunks.aclose()


def _start(event: Any, calls: tool_calls.StreamedCalls, into: AnthropicStream) -> str:
    block = event.content_block
    if block.type == "tool_use":
        return calls.start(event.index, block.id, block.name)
    return ""


def _delta(event: Any, calls: tool_calls.StreamedCalls, into: AnthropicStream) -> str:
    delta = event.delta
    if delta.type == "text_delta":
        calls.content(delta.text)
    elif delta.type == "input_json_delta":
        calls.piece(event.index, delta.partial_json)
    return ""


def _stop(event: Any, calls: tool_calls.StreamedCalls, into: AnthropicStream) -> str:
    return calls.done(event.index) if calls.is_open(event.index) else ""


def _message_start(event: Any, calls: tool_calls.StreamedCalls, into: AnthropicStream) -> str:
    into.prompt = event.message.usage
    return ""


def _message_delta(event: Any, calls: tool_calls.StreamedCalls, into: AnthropicStream) -> str:
    reason = event.delta.stop_reason
    into.finish_reason = "length" if reason == "max_tokens" else reason
    usage = _usage(into.prompt) or {"prompt_tokens": 0}
    completion = int(getattr(event.usage, "output_tokens", 0) or 0)
    prompt = usage["prompt_tokens"]
    into.usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    return ""


def _ignored(event: Any, calls: tool_calls.StreamedCalls, into: AnthropicStream) -> str:
    return ""


_EVENTS = {
    "message_start": _message_start,
    "content_block_start": _start,
    "content_block_delta": _delta,
    "content_block_stop": _stop,
    "message_delta": _message_delta,
}
"""What each stream event does (``ping``, ``message_stop`` and new kinds do nothing)."""


class AnthropicModel:
    """A :class:`~obelisk.interpreter.loop.model.StreamingModel` backed by Anthropic's
    Messages API, with native tool use (docs/loop.md, "Providers").

    ``model``: the model name (``"claude-haiku-4-5"``).  ``base_url``: the API root
    (default Anthropic's; a proxy or a compatible server).  ``api_key``: by default
    ``$ANTHROPIC_API_KEY``, or ``"not-needed"`` when ``base_url`` is given.
    ``client``: a ready ``anthropic.AsyncAnthropic`` instead (used as it is, in every
    event loop).  ``max_tokens`` (tokens, default 4096; the API requires one),
    ``temperature`` and ``extra_body`` (extra JSON fields) go with every request.
    ``timeout`` (seconds, default none) bounds each call of :meth:`complete` or
    :meth:`stream` as a whole, the SDK's retries and a whole stream included;
    ``max_retries`` (count, default the SDK's, 2) is how often the SDK sends a request
    again after a connection error, a timeout, 408, 409, 429 or 5xx.

    ``requests`` lists every request received, ``usage`` the token counts
    ``{"prompt_tokens", "completion_tokens", "total_tokens"}`` of every answer (the
    prompt includes the tokens read from or written to the prompt cache).

    :meth:`complete` raises :class:`~obelisk.errors.SolutionError` for an answer that is
    empty, a refusal (``stop_reason="refusal"``), or not a solution (arguments that are
    not an object, a text that does not fit the output schema, see
    :func:`~obelisk.models.tool_calls.solution_of`); an answer cut off at ``max_tokens``
    says so.  It raises :class:`~obelisk.errors.ModelError` when the server cannot be
    reached, answers with an error status, sends a body that is not a message (quoting
    its first bytes) or does not answer within ``timeout``.  Bad settings raise
    :class:`~obelisk.errors.UsageError`.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if client is not None and (base_url is not None or api_key is not None):
            raise UsageError("give AnthropicModel either client= or base_url=/api_key=, not both")
        check_settings(timeout, max_retries)
        if type(max_tokens) is not int or max_tokens < 1:
            raise UsageError(f"max_tokens must be an integer >= 1, got {max_tokens!r}")
        settings: dict[str, Any] = {"base_url": base_url, "timeout": timeout}
        if max_retries is not None:
            settings["max_retries"] = max_retries
        if client is None:
            key = api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not key and base_url is None:
                raise UsageError(
                    "AnthropicModel needs an API key: pass api_key= or set ANTHROPIC_API_KEY"
                )
            settings["api_key"] = key or "not-needed"
            self.client = anthropic.AsyncAnthropic(**settings)  # the settings; never sends
            self._clients = PerLoop(lambda: anthropic.AsyncAnthropic(**settings))
        else:
            if max_retries is not None:
                client = client.with_options(max_retries=max_retries)
            self.client = client
            self._clients = PerLoop(lambda: client, client)
        self.model, self.max_tokens, self.temperature = model, max_tokens, temperature
        self.timeout, self.max_retries = timeout, max_retries
        self.extra_body = dict(extra_body) if extra_body else None
        self.requests: list[Request] = []
        self.usage: list[dict[str, int]] = []

    def _where(self) -> str:
        return f"model {self.model!r} at {self.client.base_url}"

    def _timed_out(self) -> ModelError:
        return ModelError(
            f"{self._where()} did not answer within timeout={self.timeout:g} s (retries included)"
        )

    def _error(self, exc: anthropic.AnthropicError) -> ModelError:
        if isinstance(exc, anthropic.APIStatusError):
            name = type(exc).__name__
            return ModelError(
                f"{self._where()} answered HTTP {exc.status_code} ({name}): {_detail(exc)}"
            )
        if isinstance(exc, anthropic.APITimeoutError):
            if self.timeout is not None:
                return self._timed_out()
            return ModelError(f"{self._where()} did not answer in time (the SDK's timeout)")
        if isinstance(exc, anthropic.APIConnectionError):
            return ModelError(f"cannot reach {self._where()}: {_detail(exc)}")
        return ModelError(f"{self._where()} failed: {type(exc).__name__}: {shortened(str(exc))}")

    def _malformed(self, what: str, detail: str) -> ModelError:
        return ModelError(f"{self._where()} sent a malformed response ({what}): {detail}")

    def _params(self, request: Request, deadline: Deadline) -> dict[str, Any]:
        talk = tool_calls.conversation(request)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": talk.system,
            "messages": _messages(talk),
            "tools": _tools(request),
        }
        extra = dict(self.extra_body or {})
        if self.temperature is not None:  # not a parameter of every SDK release
            extra.setdefault("temperature", self.temperature)
        if extra:
            params["extra_body"] = extra
        if deadline.left() is not None:
            params["timeout"] = deadline.left()
        return params

    async def _send(self, request: Request, deadline: Deadline, **options: Any) -> Any:
        """The SDK's answer to ``request`` (``options``: ``stream=True``)."""
        client = await self._clients.get()
        params = {**self._params(request, deadline), **options}
        create = (
            client.messages.create(**params)
            if options
            else client.messages.with_raw_response.create(**params)
        )
        try:
            return await deadline.within(create)
        except anthropic.AnthropicError as exc:
            raise self._error(exc) from exc

    async def _read(self, raw: Any) -> tuple[str, list[tool_calls.ToolCall], Any, Any]:
        """``(text, tool calls, stop_reason, usage)`` of a raw message; a body that is
        not a message is the server's fault: a ModelError quoting its first bytes."""
        try:
            message = raw.parse()
            if inspect.isawaitable(message):  # the SDK's async raw response
                message = await message
            text = "".join(block.text for block in message.content if block.type == "text")
            calls = [
                tool_calls.ToolCall(block.id, block.name, dict(block.input))
                for block in message.content
                if block.type == "tool_use"
            ]
            return text, calls, message.stop_reason, message.usage
        except _MALFORMED as exc:
            content = bytes(raw.http_response.content)
            detail = shortened(f"{type(exc).__name__}: {exc}", 200)
            raise self._malformed(
                f"not a message, {detail}", f"body starts {first_bytes(content)}"
            ) from None

    async def complete(self, request: Request) -> Solution:
        """The model's answer to ``request``, parsed (raises as described on the class)."""
        self.requests.append(request)
        deadline = Deadline(self.timeout, self._timed_out)
        text, calls, stop_reason, usage = await self._read(await self._send(request, deadline))
        counts = _usage(usage)
        if counts is not None:
            self.usage.append(counts)
        if stop_reason == "refusal":
            raise SolutionError(f"the model refused: {text or 'stop_reason=refusal'}", text)
        cut = f"max_tokens={self.max_tokens}" if stop_reason == "max_tokens" else None
        solution = tool_calls.answer_of(
            request, calls, text, stop=("stop_reason", stop_reason), cut=cut
        )
        return solution.with_usage(counts)

    def stream(self, request: Request) -> AnthropicStream:
        """The solution's JSON text as the answer streams (an :class:`AnthropicStream`).
        Raises like :meth:`complete`, a malformed event being the server's fault."""
        return AnthropicStream(self, request)

    async def _stream(self, request: Request, into: AnthropicStream) -> AsyncGenerator[str, None]:
        self.requests.append(request)
        deadline = Deadline(self.timeout, self._timed_out)
        events = await self._send(request, deadline, stream=True)
        calls = tool_calls.StreamedCalls(request)
        try:
            iterator = events.__aiter__()
            while True:
                try:
                    event = await deadline.within(iterator.__anext__())
                except StopAsyncIteration:
                    break
                except anthropic.AnthropicError as exc:
                    raise self._error(exc) from exc
                try:
                    text = _EVENTS.get(event.type, _ignored)(event, calls, into)
                except _MALFORMED as exc:
                    raise self._malformed("a stream event", shortened(repr(exc))) from None
                if text:
                    yield text
            if into.usage is not None:
                self.usage.append(into.usage)
            if into.finish_reason == "refusal":
                raise SolutionError("the model refused (stop_reason='refusal')")
            yield calls.finish(into.finish_reason == "length")
        finally:
            await events.close()
