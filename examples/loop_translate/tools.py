"""Tools of the loop_translate example: a latent tool guided by its schema.

``translate`` has no Python function: it is a JSON tool description
(:meth:`Tool.from_schema`), so in eager mode the model writes its result inline
in ``_output``, and the checker validates that against the tool's output schema
before anything runs.  ``glossary`` is an ordinary tool.

Turn 1 of ``transcript.jsonl`` looks the glossary up.  Turn 2 translates with
the glossary terms it now sees in the state, but names the source language
``"French"``, which the output schema does not allow; the plan is sent back with
an ``invalid_output`` error.  Turn 3 writes ``"fr"`` and answers with an object
that fits ``output_schema.json``::

    obelisk loop --model scripted:examples/loop_translate/transcript.jsonl \\
        --tools examples/loop_translate/tools.py --input examples/loop_translate/input.json \\
        --output-schema examples/loop_translate/output_schema.json
"""

from __future__ import annotations

from obelisk import Tool, tool

LANGUAGES = ["en", "fr", "de", "pt"]

GLOSSARIES: dict[str, dict[str, str]] = {
    "support": {"remboursement": "refund", "commande": "order", "colis": "parcel"},
    "travel": {"réservation": "booking", "séjour": "stay"},
}


@tool(pure=True)
def glossary(domain: str) -> dict[str, str]:
    """Fixed translations of a domain's terms (source word -> English)."""
    return GLOSSARIES.get(domain, {})


translate = Tool.from_schema(
    {
        "name": "translate",
        "description": (
            "Translate text into the target language, using the glossary's terms where "
            "they occur. Latent: the model writes the result."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "target": {"enum": LANGUAGES},
                "glossary": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["text", "target"],
            "additionalProperties": False,
        },
        "output": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1},
                "source": {"enum": LANGUAGES},
                "target": {"enum": LANGUAGES},
            },
            "required": ["text", "source", "target"],
            "additionalProperties": False,
        },
        "pure": True,
    }
)
