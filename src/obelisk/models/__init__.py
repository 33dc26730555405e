"""Model adapters for the execution loop (docs/loop.md, docs/architecture.md).

* :class:`ScriptedModel`: replays solutions (tests, demos, recorded transcripts);
* :class:`OpenAIChatModel`: any OpenAI-compatible chat API, through the official
  ``openai`` SDK (``pip install 'obelisk[openai]'``); imported lazily;
* :class:`AnthropicModel`: Anthropic's Messages API with native tool use, through the
  official ``anthropic`` SDK (``pip install 'obelisk[anthropic]'``); imported lazily;
* :class:`LiteLLMModel`: the providers LiteLLM reaches, through ``litellm``
  (``pip install 'obelisk[litellm]'``); imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from obelisk.models.scripted import ScriptedModel as ScriptedModel

if TYPE_CHECKING:
    from obelisk.models.anthropic_messages import AnthropicModel as AnthropicModel
    from obelisk.models.litellm_chat import LiteLLMModel as LiteLLMModel
    from obelisk.models.openai_chat import OpenAIChatModel as OpenAIChatModel

__all__ = ["AnthropicModel", "LiteLLMModel", "OpenAIChatModel", "ScriptedModel"]

_LAZY = {  # each keeps its SDK an optional extra
    "AnthropicModel": "obelisk.models.anthropic_messages",
    "LiteLLMModel": "obelisk.models.litellm_chat",
    "OpenAIChatModel": "obelisk.models.openai_chat",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'obelisk.models' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
