"""Where the benchmarks' data lives: the corpora vendored in ``tests/data``.

``tests/data/nestful`` and ``tests/data/seal-tools`` each hold the upstream
LICENSE and a PROVENANCE.md.  Files over about 500 KB are stored gzip-compressed
(``*.jsonl.gz``); :func:`read_jsonl` reads both forms.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

__all__ = ["DATA_DIR", "NESTFUL_DIR", "read_jsonl"]

DATA_DIR = Path(__file__).resolve().parents[1] / "tests" / "data"
"""``<repository>/tests/data``."""
NESTFUL_DIR = DATA_DIR / "nestful"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file, gzip-compressed when its name ends in ``.gz``
    (blank lines skipped)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
