"""Detect language -> translate, schema-guided.

The detector's output schema says ``language`` is one of the supported codes, and
``translate`` takes exactly those codes, so the checker can prove that the
reference ``†state.detected.language`` fits the ``source`` parameter.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from obelisk import tool

Language = Literal["en", "fr", "de"]
WORDS: dict[str, dict[str, str]] = {
    "fr": {"bonjour": "hello", "le": "the", "monde": "world"},
    "de": {"hallo": "hello", "die": "the", "welt": "world"},
}


class Detection(TypedDict):
    language: Language
    confidence: float


@tool(pure=True)
def detect_language(text: str) -> Detection:
    """Guess the language of text from known words; confidence is a fraction in [0, 1]."""
    words = text.lower().split()
    scores = {lang: sum(w in vocab for w in words) / len(words) for lang, vocab in WORDS.items()}
    best = max(scores, key=lambda lang: scores[lang])
    if scores[best] == 0:
        return {"language": "en", "confidence": 0.5}
    return {"language": best, "confidence": scores[best]}  # type: ignore[typeddict-item]


@tool(pure=True)
def translate(text: str, source: Language, target: Language) -> str:
    """Word-by-word translation from source to target (only into English here)."""
    if source == target:
        return text
    if target != "en":
        raise ValueError(f"cannot translate into {target!r}")
    return " ".join(WORDS[source].get(word, word) for word in text.lower().split())
