"""A fixed pipeline of two model steps: classify a support message, then draft a reply.

Both tools are latent (``Tool.from_schema`` with no function): run the pipeline with a
model to answer them (docs/loop.md, "A fixed plan with model steps")::

    obelisk run examples/model_steps/pipeline.json --tools examples/model_steps/tools.py \\
        --input examples/model_steps/input.json --model scripted:examples/model_steps/answers.jsonl
"""

from __future__ import annotations

from obelisk import Tool

classify = Tool.from_schema(
    {
        "name": "classify",
        "description": "The topic of a support message.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "output": {"enum": ["billing", "shipping", "other"]},
    }
)

draft_reply = Tool.from_schema(
    {
        "name": "draft_reply",
        "description": "A one-line reply to a support message on a topic.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "topic": {"type": "string"}},
            "required": ["text", "topic"],
        },
        "output": {"type": "string"},
    }
)
