"""The ``tools`` protocol in the OpenAI chat-completions format, SDK-free: what
:class:`~obelisk.models.OpenAIChatModel` and :class:`~obelisk.models.LiteLLMModel`
send and read (docs/loop.md, "Protocols")."""

from __future__ import annotations

import json
from typing import Any

from obelisk.interpreter.loop.messages import Request
from obelisk.models.tool_calls import Conversation, StreamedCalls, functions

__all__ = ["openai_messages", "openai_stream_text", "openai_tools"]


def openai_tools(request: Request) -> list[dict[str, Any]]:
    """:func:`functions` in the OpenAI chat-completions ``tools`` shape."""
    return [{"type": "function", "function": function} for function in functions(request)]


def openai_messages(talk: Conversation) -> list[dict[str, Any]]:
    """A :class:`Conversation` as OpenAI chat messages: system, user (opening), the
    carried calls as an assistant message with ``tool_calls`` (and no ``content``,
    which llama-cpp-python's server refuses as ``null``) answered by ``tool``
    messages, then user (closing)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": talk.system},
        {"role": "user", "content": talk.opening},
    ]
    if talk.calls:
        messages.append(
            {
                "role": "assistant",  # no "content": llama.cpp's server refuses null
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": json.dumps(call.arguments, ensure_ascii=False),
                        },
                    }
                    for call in talk.calls
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": call.id, "content": result}
            for call, result in zip(talk.calls, talk.results, strict=True)
        ]
    messages.append({"role": "user", "content": talk.closing})
    return messages


def openai_stream_text(chunk: Any, content: str, calls: StreamedCalls) -> str:
    """The text an OpenAI chat-completion stream ``chunk`` adds to the solution: the calls it
    completes (its tool-call deltas go to ``calls``, its ``content`` is kept)."""
    calls.content(content)
    text = ""
    for choice in chunk.choices[:1]:
        for delta in getattr(choice.delta, "tool_calls", None) or []:
            function = getattr(delta, "function", None)
            name = getattr(function, "name", None)
            if not calls.is_open(delta.index):
                text += calls.start(delta.index, getattr(delta, "id", None), None)
            if name:
                calls.name(delta.index, name)
            calls.piece(delta.index, getattr(function, "arguments", None) or "")
    return text
