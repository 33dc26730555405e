"""``OpenAIChatModel``: any OpenAI-compatible chat API as a loop model (docs/loop.md).

Talks to the Chat Completions endpoint through the official ``openai`` SDK
(``pip install 'obelisk[openai]'``): OpenAI itself, or a local server that speaks
the same protocol (vLLM, llama.cpp, Ollama) when given ``base_url``.

Each :class:`~obelisk.interpreter.loop.messages.Request` becomes two chat messages: a
system message that explains the task and a user message with the request's
``config`` and ``context`` as JSON.  The solution schema goes into
``response_format`` (structured output, ``strict: false``).  A server that
rejects structured output is asked for plain JSON mode instead, and its answers
are checked against the schema here.

The adapter works from any number of event loops (each ``asyncio.run``, so each
``Loop.run_sync``, has its own): it keeps one SDK client per event loop and closes
it when that loop shuts down.  ``timeout`` bounds a whole model call, the SDK's
retries included.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator, Awaitable
from typing import Any, Literal, TypeVar

from obelisk.errors import MissingDependencyError, ModelError, SolutionError, UsageError

try:
    import openai
except ImportError:
    raise MissingDependencyError(
        "OpenAIChatModel needs the openai package, an optional extra: "
        "pip install 'obelisk[openai]' (from a clone: pip install '.[openai]')"
    ) from None
from obelisk.interpreter.loop.decoding import decoding_schema
from obelisk.interpreter.loop.messages import Request, Solution, parse_solution
from obelisk.interpreter.loop.schema_forms import calls_left_to_check, from_strict, strict_schema
from obelisk.models import openai_shapes, tool_calls
from obelisk.models.clients import PerLoop, check_settings, first_bytes

__all__ = ["ChatStream", "OpenAIChatModel", "SYSTEM_PROMPT"]

SYSTEM_PROMPT = """\
You are the planner of a data-flow interpreter. Each request is a JSON object with \
the loop's "config" and "context" messages: instructions ("text"), the tools you may \
call ("tool"), the read-only input ("input"), the current state ("state"), other data \
("data"), calls carried over from earlier turns ("plan") and errors ("error").

Answer with one JSON object {"calls": [...], "output": ...} and nothing else.
Each call is an object with "_tool" (a tool's name) and the tool's arguments. An \
argument may be a reference: a string starting with †, such as "†state.x" or \
"†input.y", which is replaced by that value when the call runs. "_outputPath" (e.g. \
"†state.result") says where the call's result is written. Calls run as soon as the \
values they reference exist.
Set "output" to the final answer when the task is done, or to null to go on: the \
next request shows the new state. "output" may hold references too, at any depth \
(such as "†state.summary"), read once the answer's calls have run."""

_JSON_MODE_NOTE = '\nThe answer must fit the JSON schema given as "schema" in the request.'
_ONE_LINE_NOTE = "\nWrite the whole answer on one line, with no line breaks."
"""For llama.cpp's own form: its schema grammar allows no line break, and a model that
wants one after ``{"calls": [`` closes the list instead (the benchmark's answers were
``{"calls": [], "output": null}`` on every turn without this sentence)."""

T = TypeVar("T")


def _starts_in_json_mode(structured: Any) -> bool:
    """Whether ``structured=`` asks for JSON mode from the start (``False``, or
    llama.cpp's own form); raises :class:`UsageError` for a value it cannot take."""
    if structured not in (True, False, None, "json_object_schema"):
        raise UsageError(
            f"structured must be True, False, None or 'json_object_schema', got {structured!r}"
        )
    return structured is False or structured == "json_object_schema"


def _usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    names = ("prompt_tokens", "completion_tokens", "total_tokens")
    return {name: int(getattr(usage, name, 0) or 0) for name in names}


def _detail(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        text = str(body["message"])
    else:
        text = exc.message
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _one_of(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        listed = " or ".join(repr(option) for option in allowed)
        raise UsageError(f"{name} must be {listed}, got {value!r}")


class ChatStream:
    """One streamed answer: an async iterator of its text, one content delta at a
    time (what :meth:`OpenAIChatModel.stream` returns).

    Once the stream has ended, ``usage`` holds its token counts
    ``{"prompt_tokens", "completion_tokens", "total_tokens"}`` when the server
    reported them (else ``None``; the loop reads it for the turn's usage), and
    ``finish_reason`` the server's reason to stop (``"stop"``, ``"length"``, ...).
    """

    def __init__(self, model: OpenAIChatModel, request: Request) -> None:
        self.usage: dict[str, int] | None = None
        self.finish_reason: str | None = None
        self._chunks = model._stream(request, self)

    def __aiter__(self) -> ChatStream:
        return self

    def __anext__(self) -> Awaitable[str]:
        return self._chunks.__anext__()

    async def aclose(self) -> None:
        """Stop reading the stream and release its connection."""
        await self._chunks.aclose()


class OpenAIChatModel:
    """A :class:`~obelisk.interpreter.loop.model.StreamingModel` backed by a chat API.

    ``model``: the model name the server knows (``"gpt-4o-mini"``,
    ``"Qwen/Qwen2.5-7B-Instruct"``).  ``base_url``: the API root of an
    OpenAI-compatible server (``"http://localhost:8000/v1"``).  ``api_key``: by
    default ``$OPENAI_API_KEY``, or ``"not-needed"`` when ``base_url`` is given.
    ``client``: a ready ``openai.AsyncOpenAI`` instead of ``base_url``/``api_key``
    (used as it is, in every event loop: keep it to one).  ``structured``:
    ``True`` always sends the schema as structured output,
    ``False`` always uses JSON mode and checks answers here, ``None`` (default)
    tries structured output and falls back to JSON mode, for this and later
    requests, when the server rejects it (HTTP 400, 422, or a 5xx answer to a
    structured request, as llama.cpp's server gives); ``"json_object_schema"``
    sends the schema in llama.cpp's own form,
    ``response_format: {"type": "json_object", "schema": ...}``, which that server
    constrains decoding to (it answers ``json_schema`` with HTTP 500): the schema
    is left out of the request's text, as with structured output, the system
    prompt asks for the answer on one line (that grammar allows no line break), and
    each answer is still checked here, as in JSON mode.  In JSON mode the answer's
    ``calls`` are left to the loop's ``check``, whose diagnostics name the call
    (``#1 chargeCard``); the rest is checked against the schema here.
    ``schema``: ``"loose"`` (default) sends the solution schema as it is
    (``strict: false``); ``"strict"`` sends its OpenAI strict form
    (``strict: true``: every object closed, optional properties nullable) and reads
    each answer back from it, for providers that demand strict schemas (no
    :meth:`stream` then; docs/loop.md, "Schemas for constrained decoders").
    ``temperature``, ``max_tokens``
    (tokens) and ``extra_body`` (extra JSON fields, e.g. ``{"top_k": 20}`` for
    vLLM) are sent with every request.  ``timeout`` (seconds, default none) bounds
    each call of :meth:`complete` or :meth:`stream` as a whole, the SDK's retries
    and a whole stream included; ``max_retries`` (count, default the SDK's, 2) is
    how often the SDK sends a request again after a connection error, a timeout, 429
    or 5xx.
    ``protocol``: ``"json"`` (default) asks for a JSON solution; ``"tools"`` offers
    each tool as a function and takes the answer's tool calls as one plan
    (:mod:`obelisk.models.tool_calls`; docs/loop.md, "Protocols").

    Without ``client=``, one model serves any number of event loops: each gets its
    own SDK client, closed when that loop shuts down (so ``Loop.run_sync`` may be
    called again and again, as a sync web handler does).

    ``requests`` lists every :class:`Request` received; ``usage`` the token counts
    ``{"prompt_tokens", "completion_tokens", "total_tokens"}`` of every answer
    whose server reported them (streams ask for them with
    ``stream_options={"include_usage": true}``).

    :meth:`complete` raises :class:`~obelisk.errors.SolutionError`
    for an answer that is empty, a refusal, not JSON, or (JSON mode) off the
    schema; an answer cut off at ``max_tokens`` (``finish_reason="length"``) says
    so, and a JSON answer in a Markdown code fence (```` ```json ````) is
    accepted.  It raises :class:`~obelisk.errors.ModelError` when the server
    cannot be reached, answers with an error status, sends a body that is not a
    chat completion (the message quotes its first bytes) or does not answer within
    ``timeout`` (the message names each).  Bad settings (a missing API key, a
    ``timeout`` that is not a positive number, a negative ``max_retries``) raise
    :class:`~obelisk.errors.UsageError`.  docs/loop.md describes the adapter.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        structured: bool | Literal["json_object_schema"] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra_body: dict[str, Any] | None = None,
        protocol: Literal["json", "tools"] = "json",
        schema: Literal["loose", "strict"] = "loose",
    ) -> None:
        if client is not None and (base_url is not None or api_key is not None):
            raise UsageError("give OpenAIChatModel either client= or base_url=/api_key=, not both")
        check_settings(timeout, max_retries)
        tool_calls.check_protocol(protocol)
        _one_of("schema", schema, ("loose", "strict"))
        self._settings: dict[str, Any] | None = None  # how to make a client per event loop
        if client is None:
            key = api_key or os.environ.get("OPENAI_API_KEY")
            if not key and base_url is None:
                raise UsageError(
                    "OpenAIChatModel needs an API key: pass api_key= or set OPENAI_API_KEY "
                    "(a local server given as base_url= needs none)"
                )
            self._settings = {"api_key": key or "not-needed", "base_url": base_url}
            self._settings["timeout"] = timeout
            if max_retries is not None:
                self._settings["max_retries"] = max_retries
            client = openai.AsyncOpenAI(**self._settings)  # the settings; never sends
        elif max_retries is not None:
            client = client.with_options(max_retries=max_retries)
        self.model = model
        self.client = client
        self.structured = structured
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.extra_body = dict(extra_body) if extra_body else None
        self.protocol = protocol
        self.schema: Literal["loose", "strict"] = schema
        self.requests: list[Request] = []
        self.usage: list[dict[str, int]] = []
        self._json_mode = _starts_in_json_mode(structured)
        self._stream_usage = True
        settings = self._settings  # a client made per event loop, closed with it
        made = None if settings is None else (lambda: openai.AsyncOpenAI(**settings))
        self._clients: PerLoop[Any] = PerLoop(
            made or (lambda: client), given=None if made else client
        )

    @property
    def json_mode(self) -> bool:
        """Whether requests use JSON mode (``structured=False`` or after a fallback)."""
        return self._json_mode

    def _where(self) -> str:
        return f"model {self.model!r} at {self.client.base_url}"

    async def _client(self) -> openai.AsyncOpenAI:
        """The SDK client of the running event loop: the caller's ``client=``, or
        one made for this loop and closed when it shuts down."""
        return await self._clients.get()  # type: ignore[no-any-return]

    def _params(self, request: Request, *, stream: bool) -> dict[str, Any]:
        own_form = self.structured == "json_object_schema" and bool(request.schema)
        json_mode = (self._json_mode or not request.schema) and not own_form
        data = request.to_data()
        if not json_mode:
            del data["schema"]  # sent as response_format instead
        system = SYSTEM_PROMPT + (_JSON_MODE_NOTE if json_mode and request.schema else "")
        system += _ONE_LINE_NOTE if own_form else ""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": json.dumps(data, ensure_ascii=False)},
            ],
            "response_format": (
                {"type": "json_object", "schema": decoding_schema(request)}
                if own_form
                else {"type": "json_object"}
                if json_mode
                else {"type": "json_schema", "json_schema": self._json_schema(request)}
            ),
        }
        optional = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "extra_body": self.extra_body,
        }
        params.update({name: value for name, value in optional.items() if value is not None})
        if self.protocol == "tools":  # native tool calls instead (models/tool_calls.py)
            del params["response_format"]
            talk = tool_calls.conversation(request)
            params.update(messages=openai_shapes.openai_messages(talk))
            params.update(tools=openai_shapes.openai_tools(request))
        if stream:
            params["stream"] = True
            if self._stream_usage:
                params["stream_options"] = {"include_usage": True}
        return params

    def _json_schema(self, request: Request) -> dict[str, Any]:
        """The ``json_schema`` of ``response_format``: the request's schema, or its
        strict form with ``strict: true`` (``schema="strict"``, docs/loop.md)."""
        if self.schema == "strict":
            return {"name": "solution", "schema": strict_schema(request.schema), "strict": True}
        return {"name": "solution", "schema": decoding_schema(request), "strict": False}

    def _fallback(self, exc: openai.APIError, structured: bool = False) -> bool:
        """Drop a feature the server rejected (structured output, stream usage);
        ``True`` when the request is worth sending again.  ``structured``: the
        request asked for structured output, so a 5xx answer counts as a rejection
        too (llama.cpp's server answers HTTP 500 to ``json_schema``)."""
        server_error = isinstance(exc, openai.InternalServerError)
        if server_error and structured and not self._json_mode and self.structured is None:
            self._json_mode = True
            return True
        if not isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)):
            return False
        text = f"{exc.message} {exc.body} {exc.param or ''}".lower()
        rejected = "response_format" in text or "json_schema" in text
        if rejected and not self._json_mode and self.structured is None:
            self._json_mode = True
            return True
        if self._stream_usage and "stream_options" in text:
            self._stream_usage = False
            return True
        return False

    def _timed_out(self) -> ModelError:
        return ModelError(
            f"{self._where()} did not answer within timeout={self.timeout:g} s (retries included)"
        )

    def _malformed(self, what: str, detail: str) -> ModelError:
        return ModelError(f"{self._where()} sent a malformed response ({what}): {detail}")

    def _error(self, exc: openai.OpenAIError) -> ModelError:
        if isinstance(exc, openai.APIStatusError):
            name = type(exc).__name__
            return ModelError(
                f"{self._where()} answered HTTP {exc.status_code} ({name}): {_detail(exc)}"
            )
        if isinstance(exc, openai.APITimeoutError):
            if self.timeout is not None:
                return self._timed_out()
            return ModelError(f"{self._where()} did not answer in time (the SDK's timeout)")
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(f"cannot reach {self._where()}: {_detail(exc)}")
        detail = _detail(exc) if isinstance(exc, openai.APIError) else str(exc)
        return ModelError(f"{self._where()} failed: {type(exc).__name__}: {detail}")

    def _deadline(self) -> float | None:
        if self.timeout is None:
            return None
        return asyncio.get_running_loop().time() + self.timeout

    async def _within(self, deadline: float | None, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, or the timeout's ModelError at ``deadline``."""
        if deadline is None:
            return await awaitable
        left = deadline - asyncio.get_running_loop().time()
        try:
            return await asyncio.wait_for(awaitable, max(left, 0))
        except asyncio.TimeoutError:
            raise self._timed_out() from None

    async def _create(self, request: Request, *, stream: bool, deadline: float | None) -> Any:
        """The raw response (``with_raw_response``) to ``request``, after any fallback."""
        client = await self._client()
        while True:
            params = self._params(request, stream=stream)
            if deadline is not None:  # each attempt gets what is left, at least 1 ms
                left = deadline - asyncio.get_running_loop().time()
                params["timeout"] = max(left, 0.001)
            try:
                create = client.chat.completions.with_raw_response.create(**params)
                return await self._within(deadline, create)
            except openai.APIError as exc:
                sent = params.get("response_format") or {}
                if not self._fallback(exc, sent.get("type") == "json_schema"):
                    raise self._error(exc) from exc
            except openai.OpenAIError as exc:
                raise self._error(exc) from exc

    def _check(self, text: str, request: Request, finish_reason: Any) -> Solution:
        """The solution in an answer's ``text`` (a fenced block is unwrapped); a
        problem is a SolutionError, which names a cut-off answer as such."""
        text = tool_calls.unfenced(text)
        try:
            solution = parse_solution(text)
            if self._json_mode and request.schema:  # the calls are check's (located)
                problem = tool_calls.schema_problem(
                    json.loads(text), calls_left_to_check(request.schema)
                )
                if problem is not None:
                    raise SolutionError(f"the answer does not fit the schema at {problem}", text)
            elif self.schema == "strict" and request.schema:
                solution = parse_solution(from_strict(solution.to_data(), request.schema))
        except SolutionError as exc:
            if finish_reason != "length":
                raise
            limit = f"max_tokens={self.max_tokens}" if self.max_tokens else "the token limit"
            raise SolutionError(
                f"the answer was cut off at {limit} (finish_reason='length'), "
                f"write a shorter one: {exc.reason}",
                exc.text,
            ) from None
        return solution

    def _read(self, raw: Any) -> tuple[Any, Any, dict[str, int] | None]:
        """``(message, finish_reason, usage)`` of a raw chat completion; ``message``
        is ``None`` when it has no choices.  A body that is not a chat completion is
        the server's fault: a ModelError quoting its first bytes."""
        try:
            response = raw.parse()
            choices = response.choices
            if not isinstance(choices, list):
                raise TypeError(f"choices is {type(choices).__name__}, not a list")
            if not choices:
                return None, None, _usage(response.usage)
            message, finish_reason = choices[0].message, choices[0].finish_reason
            content, refusal = message.content, getattr(message, "refusal", None)
            if not isinstance(content, (str, type(None))) or not isinstance(
                refusal, (str, type(None))
            ):
                raise TypeError("message content is not text")
            return message, finish_reason, _usage(response.usage)
        except (ValueError, TypeError, AttributeError, LookupError) as exc:
            content = bytes(raw.http_response.content)
            detail = f"{type(exc).__name__}: {exc}"[:200]
            raise self._malformed(
                f"not a chat completion, {detail}", f"body starts {first_bytes(content)}"
            ) from None

    async def complete(self, request: Request) -> Solution:
        """The model's answer to ``request``, parsed (raises as described on the class)."""
        self.requests.append(request)
        deadline = self._deadline()
        raw = await self._create(request, stream=False, deadline=deadline)
        message, finish_reason, usage = self._read(raw)
        if message is None:
            raise SolutionError("the model gave no answer (no choices)")
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise SolutionError(f"the model refused: {refusal}")
        if self.protocol == "tools":
            if usage is not None:
                self.usage.append(usage)
            return self._tool_answer(message, request, finish_reason).with_usage(usage)
        if not message.content:
            raise SolutionError(
                f"the model's answer is empty (finish_reason={finish_reason!r})", ""
            )
        if usage is not None:
            self.usage.append(usage)
        return self._check(message.content, request, finish_reason).with_usage(usage)

    def _tool_answer(self, message: Any, request: Request, finish_reason: Any) -> Solution:
        """The solution of a ``tools`` protocol answer: its tool calls and text."""
        try:
            calls = [
                tool_calls.ToolCall(call.id, call.function.name, call.function.arguments)
                for call in message.tool_calls or []
            ]
        except AttributeError as exc:
            raise self._malformed("a tool call", f"{type(exc).__name__}: {exc}"[:300]) from None
        limit = f"max_tokens={self.max_tokens}" if self.max_tokens else "the token limit"
        cut = limit if finish_reason == "length" else None
        stop = ("finish_reason", finish_reason)
        return tool_calls.answer_of(request, calls, message.content, stop=stop, cut=cut)

    def stream(self, request: Request) -> ChatStream:
        """The answer's JSON text, one content delta at a time (a :class:`ChatStream`,
        whose ``usage`` holds the token counts once it has ended).  Not checked
        against the schema: the caller parses it.  Raises like :meth:`complete`
        for a refusal, an empty answer, a server error, a malformed chunk or the
        ``timeout`` (which bounds the whole stream).  Not with ``schema="strict"``
        (a :class:`~obelisk.errors.UsageError`): a strict answer is read back whole."""
        if self.schema == "strict":
            raise UsageError(
                "OpenAIChatModel(schema='strict') cannot stream: its answers are read back "
                "whole (use stream=False)"
            )
        return ChatStream(self, request)

    def _delta(self, chunk: Any, into: ChatStream) -> tuple[str, str]:
        """``(content, refusal)`` of one stream chunk; its usage and finish reason
        go to ``into``.  A chunk that is not a chat completion chunk is a ModelError."""
        try:
            usage = _usage(getattr(chunk, "usage", None))
            content, refusal = "", ""
            for choice in chunk.choices[:1]:
                refusal = getattr(choice.delta, "refusal", None) or ""
                content = choice.delta.content or ""
                into.finish_reason = choice.finish_reason or into.finish_reason
            if not isinstance(content, str) or not isinstance(refusal, str):
                raise TypeError("delta content is not text")
        except (ValueError, TypeError, AttributeError, LookupError) as exc:
            raise self._malformed("a stream chunk", f"{type(exc).__name__}: {exc}"[:300]) from None
        if usage is not None:
            into.usage = usage
            self.usage.append(usage)
        return content, refusal

    async def _stream(self, request: Request, into: ChatStream) -> AsyncGenerator[str, None]:
        self.requests.append(request)
        deadline = self._deadline()
        raw = await self._create(request, stream=True, deadline=deadline)
        try:
            chunks = raw.parse()
            iterator = chunks.__aiter__()
        except (ValueError, TypeError, AttributeError) as exc:
            raise self._malformed("not a stream", f"{type(exc).__name__}: {exc}") from None
        wrote, refusal = False, ""
        calls = tool_calls.StreamedCalls(request) if self.protocol == "tools" else None
        try:
            while True:
                try:
                    chunk = await self._within(deadline, iterator.__anext__())
                except StopAsyncIteration:
                    break
                except openai.OpenAIError as exc:
                    raise self._error(exc) from exc
                except (ValueError, TypeError, AttributeError) as exc:
                    detail = f"{type(exc).__name__}: {exc}"[:300]
                    raise self._malformed("a stream chunk", detail) from None
                content, refused = self._delta(chunk, into)
                refusal += refused
                if calls is not None:
                    content = openai_shapes.openai_stream_text(chunk, content, calls)
                if content:
                    wrote = True
                    yield content
            if calls is not None and not refusal:
                wrote = True
                yield calls.finish(into.finish_reason == "length")
        finally:
            await chunks.close()
        if refusal and not wrote:
            raise SolutionError(f"the model refused: {refusal}")
        if not wrote:
            raise SolutionError("the model's answer is empty", "")
