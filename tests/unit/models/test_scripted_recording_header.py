"""A recording's header line is not an answer (issue 29, point 7; docs/loop.md).

The real-model benchmark writes ``{"header": {model, settings, task}}`` first in each
transcript; ``ScriptedModel.from_jsonl`` skips it and replays the answers after it.
"""

from __future__ import annotations

import json
from pathlib import Path

import obelisk


def test_from_jsonl_skips_the_header(tmp_path: Path) -> None:
    lines = [
        {"header": {"model": "qwen2.5-coder-1.5b", "protocol": "json", "mode": "eager"}},
        {"turn": 1, "solution": None, "raw": "not json", "errors": []},
        {"turn": 2, "solution": {"calls": [], "output": 3}, "raw": None, "errors": []},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    model = obelisk.ScriptedModel.from_jsonl(path)
    assert model.answers == ["not json", {"calls": [], "output": 3}]
    result = obelisk.Loop(model, []).run_sync()
    assert (result.output, len(result.turns)) == (3, 2)
