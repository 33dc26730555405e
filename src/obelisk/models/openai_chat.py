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
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from obelisk.errors import MissingDependencyError, ModelError, SolutionError, UsageError

try:
    import openai
except ImportError:
    raise MissingDependencyError(
        "OpenAIChatModel needs the openai package, an optional extra: "
        "pip install 'obelisk[openai]' (from a clone: pip install '.[openai]')"
    ) from None
from obelisk.interpreter.loop.messages import Request, Solution, parse_solution
from obelisk.interpreter.tools.patterns import linear_validator_class

__all__ = ["OpenAIChatModel", "SYSTEM_PROMPT"]

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
next request shows the new state."""

_JSON_MODE_NOTE = '\nThe answer must fit the JSON schema given as "schema" in the request.'


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


class OpenAIChatModel:
    """A :class:`~obelisk.interpreter.loop.model.StreamingModel` backed by a chat API.

    ``model``: the model name the server knows (``"gpt-4o-mini"``,
    ``"Qwen/Qwen2.5-7B-Instruct"``).  ``base_url``: the API root of an
    OpenAI-compatible server (``"http://localhost:8000/v1"``).  ``api_key``: by
    default ``$OPENAI_API_KEY``, or ``"not-needed"`` when ``base_url`` is given.
    ``client``: a ready ``openai.AsyncOpenAI`` instead of ``base_url``/``api_key``.
    ``structured``: ``True`` always sends the schema as structured output,
    ``False`` always uses JSON mode and checks answers here, ``None`` (default)
    tries structured output and falls back to JSON mode, for this and later
    requests, when the server rejects it.  ``temperature``, ``max_tokens``
    (tokens), ``timeout`` (seconds per request) and ``extra_body`` (extra JSON
    fields, e.g. ``{"top_k": 20}`` for vLLM) are sent with every request.

    ``requests`` lists every :class:`Request` received; ``usage`` the token counts
    ``{"prompt_tokens", "completion_tokens", "total_tokens"}`` of every answer
    whose server reported them.

    :meth:`complete` raises :class:`~obelisk.errors.SolutionError`
    for an answer that is empty, a refusal, not JSON, or (JSON mode) off the
    schema, and :class:`~obelisk.errors.ModelError` when the server
    cannot be reached or answers with an error status (the message names it).
    A missing API key raises :class:`~obelisk.errors.UsageError`.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        structured: bool | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        if client is not None and (base_url is not None or api_key is not None):
            raise UsageError("give OpenAIChatModel either client= or base_url=/api_key=, not both")
        if client is None:
            key = api_key or os.environ.get("OPENAI_API_KEY")
            if not key and base_url is None:
                raise UsageError(
                    "OpenAIChatModel needs an API key: pass api_key= or set OPENAI_API_KEY "
                    "(a local server given as base_url= needs none)"
                )
            client = openai.AsyncOpenAI(
                api_key=key or "not-needed", base_url=base_url, timeout=timeout
            )
        self.model = model
        self.client = client
        self.structured = structured
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.extra_body = dict(extra_body) if extra_body else None
        self.requests: list[Request] = []
        self.usage: list[dict[str, int]] = []
        self._json_mode = structured is False
        self._stream_usage = True

    @property
    def json_mode(self) -> bool:
        """Whether requests use JSON mode (``structured=False`` or after a fallback)."""
        return self._json_mode

    def _where(self) -> str:
        return f"model {self.model!r} at {self.client.base_url}"

    def _params(self, request: Request, *, stream: bool) -> dict[str, Any]:
        json_mode = self._json_mode or not request.schema
        data = request.to_data()
        if not json_mode:
            del data["schema"]  # sent as response_format instead
        system = SYSTEM_PROMPT + (_JSON_MODE_NOTE if json_mode and request.schema else "")
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": json.dumps(data, ensure_ascii=False)},
            ],
            "response_format": (
                {"type": "json_object"}
                if json_mode
                else {
                    "type": "json_schema",
                    "json_schema": {"name": "solution", "schema": request.schema, "strict": False},
                }
            ),
        }
        optional = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": self.timeout,
            "extra_body": self.extra_body,
        }
        params.update({name: value for name, value in optional.items() if value is not None})
        if stream:
            params["stream"] = True
            if self._stream_usage:
                params["stream_options"] = {"include_usage": True}
        return params

    def _fallback(self, exc: openai.APIError) -> bool:
        """Drop a feature the server rejected (structured output, stream usage);
        ``True`` when the request is worth sending again."""
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

    def _error(self, exc: openai.OpenAIError) -> ModelError:
        if isinstance(exc, openai.APIStatusError):
            name = type(exc).__name__
            return ModelError(
                f"{self._where()} answered HTTP {exc.status_code} ({name}): {_detail(exc)}"
            )
        if isinstance(exc, openai.APITimeoutError):
            return ModelError(f"{self._where()} did not answer in time (timeout={self.timeout}s)")
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(f"cannot reach {self._where()}: {_detail(exc)}")
        detail = _detail(exc) if isinstance(exc, openai.APIError) else str(exc)
        return ModelError(f"{self._where()} failed: {type(exc).__name__}: {detail}")

    async def _create(self, request: Request, *, stream: bool) -> Any:
        while True:
            try:
                return await self.client.chat.completions.create(
                    **self._params(request, stream=stream)
                )
            except openai.APIError as exc:
                if not self._fallback(exc):
                    raise self._error(exc) from exc
            except openai.OpenAIError as exc:
                raise self._error(exc) from exc

    def _check(self, text: str, request: Request) -> Solution:
        solution = parse_solution(text)
        if self._json_mode and request.schema:
            error = best_match(
                linear_validator_class(Draft202012Validator)(request.schema).iter_errors(
                    json.loads(text)
                )
            )
            if error is not None:
                where = ".".join(str(part) for part in error.absolute_path) or "the top level"
                message = (
                    error.message if len(error.message) <= 200 else error.message[:197] + "..."
                )
                raise SolutionError(
                    f"the answer does not fit the schema at {where}: {message}", text
                )
        return solution

    async def complete(self, request: Request) -> Solution:
        """The model's answer to ``request``, parsed (raises as described on the class)."""
        self.requests.append(request)
        response = await self._create(request, stream=False)
        if not response.choices:
            raise SolutionError("the model gave no answer (no choices)")
        choice = response.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise SolutionError(f"the model refused: {refusal}")
        if not message.content:
            raise SolutionError(
                f"the model's answer is empty (finish_reason={choice.finish_reason!r})", ""
            )
        usage = _usage(response.usage)
        if usage is not None:
            self.usage.append(usage)
        return self._check(message.content, request).with_usage(usage)

    async def stream(self, request: Request) -> AsyncIterator[str]:
        """The answer's JSON text, one content delta at a time.  Not checked
        against the schema: the caller parses it.  Raises like :meth:`complete`
        for a refusal, an empty answer or a server error."""
        self.requests.append(request)
        chunks = await self._create(request, stream=True)
        wrote, refusal = False, ""
        try:
            async for chunk in chunks:
                usage = _usage(getattr(chunk, "usage", None))
                if usage is not None:
                    self.usage.append(usage)
                for choice in chunk.choices[:1]:
                    refusal += getattr(choice.delta, "refusal", None) or ""
                    if choice.delta.content:
                        wrote = True
                        yield choice.delta.content
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        finally:
            await chunks.close()
        if refusal and not wrote:
            raise SolutionError(f"the model refused: {refusal}")
        if not wrote:
            raise SolutionError("the model's answer is empty", "")
