"""The carried calls go back as an assistant message without ``"content": null``
(issue 29, point 6): llama-cpp-python's server validates ``content`` as a string when
present and answered the benchmark's second ``tools`` turn with HTTP 500; OpenAI's
API takes an assistant message with ``tool_calls`` and no ``content``."""

from __future__ import annotations

import pytest

pytest.importorskip("openai")

from obelisk.models import openai_shapes, tool_calls


def test_the_assistant_message_of_carried_calls_has_no_content() -> None:
    call = tool_calls.ToolCall("call_0", "double", {"n": 1, "_outputPath": "†state.d"})
    talk = tool_calls.Conversation(
        system="s", opening="o", calls=(call,), results=("{}",), closing="c"
    )
    messages = openai_shapes.openai_messages(talk)
    assistant = next(m for m in messages if m["role"] == "assistant")
    assert "content" not in assistant
    assert assistant["tool_calls"][0]["function"]["name"] == "double"
