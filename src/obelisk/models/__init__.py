"""Model adapters for the execution loop (docs/loop.md, docs/architecture.md).

* :class:`ScriptedModel`: replays solutions (tests, demos, recorded transcripts);
* :class:`OpenAIChatModel`: any OpenAI-compatible chat API, through the official
  ``openai`` SDK (``pip install 'obelisk[openai]'``); imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from obelisk.models.scripted import ScriptedModel as ScriptedModel

if TYPE_CHECKING:
    from obelisk.models.openai_chat import OpenAIChatModel as OpenAIChatModel

__all__ = ["OpenAIChatModel", "ScriptedModel"]


def __getattr__(name: str) -> Any:
    if name == "OpenAIChatModel":  # keeps the openai SDK an optional extra
        from obelisk.models.openai_chat import OpenAIChatModel

        return OpenAIChatModel
    raise AttributeError(f"module 'obelisk.models' has no attribute {name!r}")
