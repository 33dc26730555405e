"""``LiteLLMModel``: the providers LiteLLM reaches (Bedrock, Vertex, Groq, Mistral,
Ollama, ...) as a loop model (docs/loop.md, "Providers").

Talks through ``litellm.acompletion`` (``pip install 'obelisk[litellm]'``), which takes
and gives OpenAI-shaped chat messages whatever the provider: ``protocol="tools"`` (the
default) offers each tool as a function (:mod:`obelisk.models.tool_calls`),
``protocol="json"`` asks for a JSON solution (``response_format={"type":
"json_object"}``, the schema in the request) and checks it against the schema here.
LiteLLM's exceptions derive from the ``openai`` SDK's, which LiteLLM installs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable
from typing import Any, Literal

from obelisk.errors import MissingDependencyError, ModelError, SolutionError, UsageError

try:
    import litellm
    import openai
except ImportError:
    raise MissingDependencyError(
        "LiteLLMModel needs the litellm package, an optional extra: "
        "pip install 'obelisk[litellm]' (from a clone: pip install '.[litellm]')"
    ) from None
from obelisk.interpreter.loop.messages import Request, Solution, parse_solution
from obelisk.models import openai_shapes, tool_calls
from obelisk.models.clients import Deadline, check_settings, shortened
from obelisk.models.openai_chat import SYSTEM_PROMPT

__all__ = ["LiteLLMModel", "LiteLLMStream"]

_JSON_NOTE = '\nThe answer must fit the JSON schema given as "schema" in the request.'
_MALFORMED = (ValueError, TypeError, AttributeError, LookupError)


def _usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    names = ("prompt_tokens", "completion_tokens", "total_tokens")
    return {name: int(getattr(usage, name, 0) or 0) for name in names}


class LiteLLMStream:
    """One streamed answer of :meth:`LiteLLMModel.stream`: an async iterator of the
    solution's JSON text (``tools``: each call's object once the call is complete).
    Once ended, ``usage`` holds the token counts (when the provider reports them) and
    ``finish_reason`` the reason to stop (``"length"``: cut off)."""

    def __init__(self, model: LiteLLMModel, request: Request) -> None:
        self.usage: dict[str, int] | None = None
        self.finish_reason: str | None = None
        self._chunks = model._stream(request, self)

    def __aiter__(self) -> LiteLLMStream:
        return self

    def __anext__(self) -> Awaitable[str]:
        return self._chunks.__anext__()

    async def aclose(self) -> None:
        """Stop reading the stream and release its connection."""
        await self._chunks.aclose()


class LiteLLMModel:
    """A :class:`~obelisk.interpreter.loop.model.StreamingModel` backed by LiteLLM.

    ``model``: LiteLLM's model name, with its provider (``"groq/llama-3.1-8b-instant"``,
    ``"bedrock/anthropic.claude-3-haiku..."``, ``"openai/NAME"`` for an
    OpenAI-compatible server given as ``base_url``).  ``api_key``: passed to LiteLLM
    (else LiteLLM reads the provider's environment variable).  ``protocol``:
    ``"tools"`` (default) or ``"json"``.  ``temperature``, ``max_tokens`` (tokens) and
    ``extra`` (more keyword arguments for ``litellm.acompletion``, e.g.
    ``{"drop_params": True}``) go with every request.  ``timeout`` (seconds, default
    none) bounds each call of :meth:`complete` or :meth:`stream` as a whole, retries and
    a whole stream included; ``max_retries`` (count, default LiteLLM's) is LiteLLM's
    ``num_retries``.

    ``requests`` lists every request received, ``usage`` the token counts
    ``{"prompt_tokens", "completion_tokens", "total_tokens"}`` of every answer whose
    provider reported them.  Raises like :class:`~obelisk.models.OpenAIChatModel`:
    :class:`~obelisk.errors.SolutionError` for an empty answer, a refusal, an answer
    that is not a solution (cut off at ``max_tokens``: it says so);
    :class:`~obelisk.errors.ModelError` when the provider cannot be reached, answers
    with an error status or does not answer within ``timeout``;
    :class:`~obelisk.errors.UsageError` for bad settings.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        protocol: Literal["json", "tools"] = "tools",
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        check_settings(timeout, max_retries)
        tool_calls.check_protocol(protocol)
        if not isinstance(model, str) or not model:
            raise UsageError(f"LiteLLMModel needs a model name, got {model!r}")
        self.model, self.base_url, self.api_key = model, base_url, api_key
        self.protocol, self.temperature, self.max_tokens = protocol, temperature, max_tokens
        self.timeout, self.max_retries = timeout, max_retries
        self.extra = dict(extra) if extra else {}
        self.requests: list[Request] = []
        self.usage: list[dict[str, int]] = []

    def _where(self) -> str:
        return f"model {self.model!r}" + (f" at {self.base_url}" if self.base_url else "")

    def _timed_out(self) -> ModelError:
        return ModelError(
            f"{self._where()} did not answer within timeout={self.timeout:g} s (retries included)"
        )

    def _error(self, exc: Exception) -> ModelError:
        status = getattr(exc, "status_code", None)
        detail = shortened(getattr(exc, "message", None) or str(exc))
        if isinstance(exc, openai.APITimeoutError):
            if self.timeout is not None:
                return self._timed_out()
            return ModelError(f"{self._where()} did not answer in time ({detail})")
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(f"cannot reach {self._where()}: {detail}")
        if isinstance(status, int) and status >= 400:
            name = type(exc).__name__
            return ModelError(f"{self._where()} answered HTTP {status} ({name}): {detail}")
        return ModelError(f"{self._where()} failed: {type(exc).__name__}: {detail}")

    def _messages(self, request: Request) -> dict[str, Any]:
        """The messages, and the tools or response format, of ``request``."""
        if self.protocol == "tools":
            talk = tool_calls.conversation(request)
            return {
                "messages": openai_shapes.openai_messages(talk),
                "tools": openai_shapes.openai_tools(request),
            }
        system = SYSTEM_PROMPT + (_JSON_NOTE if request.schema else "")
        return {
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": json.dumps(request.to_data(), ensure_ascii=False)},
            ],
            "response_format": {"type": "json_object"},
        }

    async def _send(self, request: Request, deadline: Deadline, stream: bool) -> Any:
        params: dict[str, Any] = {"model": self.model, **self._messages(request)}
        optional = {
            "base_url": self.base_url,
            "api_key": self.api_key,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": deadline.left(),
            "num_retries": self.max_retries,
        }
        params.update({name: value for name, value in optional.items() if value is not None})
        if stream:
            params.update(stream=True, stream_options={"include_usage": True})
        params.update(self.extra)
        try:
            return await deadline.within(litellm.acompletion(**params))
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc

    def _json_answer(self, request: Request, text: str, cut: str | None) -> Solution:
        """A ``json`` protocol answer's solution, checked against the request's schema."""
        try:
            solution = parse_solution(tool_calls.unfenced(text))
            problem = tool_calls.schema_problem(solution.to_data(), request.schema)
            if problem is not None:
                raise SolutionError(f"the answer does not fit the schema at {problem}", text)
            return solution
        except SolutionError as exc:
            if cut is None:
                raise
            raise tool_calls.cut_off(exc, cut, "finish_reason='length'") from None

    def _limit(self, finish_reason: Any) -> str | None:
        if finish_reason != "length":
            return None
        return f"max_tokens={self.max_tokens}" if self.max_tokens else "the token limit"

    async def complete(self, request: Request) -> Solution:
        """The model's answer to ``request``, parsed (raises as described on the class)."""
        self.requests.append(request)
        response = await self._send(request, Deadline(self.timeout, self._timed_out), False)
        try:
            choice = response.choices[0]
            message, finish_reason = choice.message, choice.finish_reason
            calls = [
                tool_calls.ToolCall(call.id, call.function.name, call.function.arguments)
                for call in getattr(message, "tool_calls", None) or []
            ]
            usage = _usage(getattr(response, "usage", None))
        except _MALFORMED as exc:
            raise ModelError(f"{self._where()} sent a malformed response: {exc!r}") from None
        if usage is not None:
            self.usage.append(usage)
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise SolutionError(f"the model refused: {refusal}")
        cut, text = self._limit(finish_reason), message.content
        if self.protocol == "tools":
            stop = ("finish_reason", finish_reason)
            solution = tool_calls.answer_of(request, calls, text, stop=stop, cut=cut)
        elif not text:
            raise SolutionError(f"the model's answer is empty (finish_reason={finish_reason!r})")
        else:
            solution = self._json_answer(request, text, cut)
        return solution.with_usage(usage)

    def stream(self, request: Request) -> LiteLLMStream:
        """The solution's JSON text as the answer streams (a :class:`LiteLLMStream`);
        ``json`` protocol: not checked against the schema, the loop parses it."""
        return LiteLLMStream(self, request)

    def _chunk(self, chunk: Any, into: LiteLLMStream, calls: Any) -> str:
        """The text one stream chunk adds; its usage and finish reason go to ``into``."""
        usage = _usage(getattr(chunk, "usage", None))
        if usage is not None and usage["total_tokens"]:
            into.usage = usage
        content = ""
        for choice in chunk.choices[:1]:
            content = choice.delta.content or ""
            into.finish_reason = choice.finish_reason or into.finish_reason
        if calls is None:
            return str(content)
        return openai_shapes.openai_stream_text(chunk, content, calls)

    async def _stream(self, request: Request, into: LiteLLMStream) -> AsyncGenerator[str, None]:
        self.requests.append(request)
        deadline = Deadline(self.timeout, self._timed_out)
        chunks = await self._send(request, deadline, True)
        calls = tool_calls.StreamedCalls(request) if self.protocol == "tools" else None
        iterator, wrote = chunks.__aiter__(), False
        while True:
            try:
                chunk = await deadline.within(iterator.__anext__())
            except StopAsyncIteration:
                break
            except openai.OpenAIError as exc:
                raise self._error(exc) from exc
            try:
                text = self._chunk(chunk, into, calls)
            except _MALFORMED as exc:
                raise ModelError(
                    f"{self._where()} sent a malformed stream chunk: {exc!r}"
                ) from None
            if text:
                wrote = True
                yield text
        if into.usage is not None:
            self.usage.append(into.usage)
        if calls is not None:
            yield calls.finish(into.finish_reason == "length")
        elif not wrote:
            raise SolutionError("the model's answer is empty", "")
