"""``python -m benchmarks.real_model.report OUT.json ...``: the Markdown table of
docs/performance.md ("A real model") from the ``--out`` files of
``python -m benchmarks.real_model``, one row per setting."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HEADER = (
    "| setting | tasks | correct | answers | parsed | first answer parsed | fitted "
    "| corrections by code | no answer | prompt / completion tokens | cached | s / turn |\n"
    "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"
)


def row(setting: dict[str, Any]) -> str:
    """One setting's row: counts, as ``runner.summarize`` gives them."""
    codes = ", ".join(f"{code} {n}" for code, n in setting["codes"].items()) or "none"
    cached = "n/a" if setting["cached_share"] is None else f"{setting['cached_share']:.0%}"
    cells = [
        setting["setting"],
        setting["tasks"],
        setting["correct"],
        setting["answers"],
        setting["parsed"],
        f"{setting['first_parsed']} of {setting['tasks']}",
        setting["fitted"],
        codes,
        setting.get("model_failures", 0),
        f"{setting['prompt_tokens']:,} / {setting['completion_tokens']:,}",
        cached,
        setting["seconds_per_turn"],
    ]
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def table(reports: list[dict[str, Any]]) -> str:
    """The table of every setting of every report."""
    rows = [row(setting) for report in reports for setting in report["settings"]]
    return "\n".join([HEADER, *rows])


if __name__ == "__main__":
    files = [json.loads(Path(name).read_text(encoding="utf-8")) for name in sys.argv[1:]]
    print(table(files))
