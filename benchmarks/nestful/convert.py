"""NESTFUL v2 math records as obelisk plans.

The call labelled ``$var_N`` becomes ``{"_tool": name, <arguments>,
"_outputPath": "†state.var_N"}``; an argument whose whole value is
``"$var_N.result$"`` becomes ``"†state.var_N.result"``.  Arguments keep their
names (``arg_0``, ``arg_1``), which is upstream's positional passing in dict
order.  Any other value is a literal (a string beginning with ``†`` is escaped
as ``††…``); v2 has no references inside strings, lists or dicts, and
upstream resolves none there, so none are looked for.

This is the rule of ``tests/conformance/corpus.py`` (whose converter also
handles v1's deeper paths); the conformance test checks that both agree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import obelisk

from ..data import NESTFUL_DIR, read_jsonl
from .math_tools import MATH_TOOL_NAMES

__all__ = [
    "DAGGER",
    "NESTFUL_DIR",
    "NestfulCase",
    "convert_calls",
    "convert_record",
    "load_math_cases",
    "load_math_records",
]

DAGGER = "†"

_REFERENCE = re.compile(r"\$(?P<label>[A-Za-z_]\w*)\.(?P<field>[A-Za-z_]\w*)\$")


@dataclass(frozen=True)
class NestfulCase:
    """One converted record: its plan, the gold answer and the label of the last call."""

    sample_id: str
    plan: list[dict[str, Any]]
    gold: Any
    answer_label: str


def _argument(value: Any) -> Any:
    if isinstance(value, str):
        match = _REFERENCE.fullmatch(value)
        if match is not None:
            return obelisk.ref("state", match["label"], match["field"])
    return _literal(value)


def _literal(value: Any) -> Any:
    if isinstance(value, str):
        return DAGGER + value if value.startswith(DAGGER) else value
    if isinstance(value, list):
        return [_literal(item) for item in value]
    if isinstance(value, dict):
        return {key: _literal(item) for key, item in value.items()}
    return value


def convert_calls(calls: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A record's ``output`` (its gold call sequence) as an obelisk plan."""
    plan: list[dict[str, Any]] = []
    for call in calls:
        converted: dict[str, Any] = {"_tool": call["name"]}
        for key, value in (call.get("arguments") or {}).items():
            converted[key] = _argument(value)
        label = call.get("label")
        if isinstance(label, str) and label:
            converted["_outputPath"] = obelisk.ref("state", label.removeprefix("$"))
        plan.append(converted)
    return plan


def convert_record(record: Mapping[str, Any]) -> NestfulCase:
    """One v2 record as a :class:`NestfulCase`; raises ``ValueError`` for a record
    without calls or whose last call has no label."""
    calls = record["output"]
    if not calls or not isinstance(calls[-1].get("label"), str):
        raise ValueError(f"{record['sample_id']}: no labelled last call")
    return NestfulCase(
        record["sample_id"],
        convert_calls(calls),
        record["gold_answer"],
        calls[-1]["label"].removeprefix("$"),
    )


def _subset(directory: Path) -> Path:
    """``v2_subset.jsonl.gz`` (the vendored copy), else ``v2_subset.jsonl`` (an
    uncompressed NESTFUL folder given with ``--data``)."""
    compressed = directory / "v2_subset.jsonl.gz"
    return compressed if compressed.is_file() else directory / "v2_subset.jsonl"


def load_math_records(directory: Path = NESTFUL_DIR) -> list[dict[str, Any]]:
    """The v2 records ``v2_index.jsonl`` marks as ``kind == "math"``, in file order.

    Raises ``ValueError`` if such a record calls a tool that is not one of the
    40 math tools (the index and the data disagree).
    """
    kinds = {
        entry["sample_id"]: entry["kind"] for entry in read_jsonl(directory / "v2_index.jsonl")
    }
    records = [
        record
        for record in read_jsonl(_subset(directory))
        if kinds.get(record["sample_id"]) == "math"
    ]
    for record in records:
        unknown = {call["name"] for call in record["output"]} - MATH_TOOL_NAMES
        if unknown:
            raise ValueError(f"{record['sample_id']}: not math tools: {sorted(unknown)}")
    return records


def load_math_cases(directory: Path = NESTFUL_DIR) -> list[NestfulCase]:
    """:func:`load_math_records`, converted."""
    return [convert_record(record) for record in load_math_records(directory)]
