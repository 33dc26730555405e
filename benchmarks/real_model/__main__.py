"""``python -m benchmarks.real_model --base-url URL --model NAME [options]``.

Runs the tasks of :mod:`benchmarks.real_model.tasks` with a model behind an
OpenAI-compatible server, in each setting asked for (``--protocol`` and ``--mode``
may be given more than once; ``--no-primer`` leaves the primer out), prints one
line per run and a table per setting, and writes the records as JSON (``--out``)
and the model's answers as ``ScriptedModel`` transcripts (``--record DIR``: one
JSONL file per setting and task).  ``--structured`` picks how the answer schema
is sent (``json_object_schema``, llama.cpp's own form, by default; docs/loop.md).
``--server-log`` reads the cached prompt tokens from llama-cpp-python's server
log.  ``--budget`` starts no new task in a setting after that many seconds.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from .runner import Setting, as_dict, recording, run_task, summarize
from .tasks import all_tasks

STRUCTURED = {
    "json_object_schema": "json_object_schema",
    "json_schema": True,
    "json": False,
    "auto": None,
}


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.real_model", description=__doc__)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key", default="not-needed")
    parser.add_argument("--protocol", action="append", choices=["json", "tools"])
    parser.add_argument("--mode", action="append", choices=["eager", "lazy"])
    parser.add_argument("--primer", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--structured", choices=sorted(STRUCTURED), default="json_object_schema")
    parser.add_argument("--tasks", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--only", default="", help="comma-separated task names")
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per model call")
    parser.add_argument(
        "--budget", type=float, default=None, help="seconds per setting: no new task after that"
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--record", type=Path, default=None)
    parser.add_argument(
        "--server-log", type=Path, default=None, help="llama.cpp server's log: cached prompt tokens"
    )
    return parser.parse_args(argv)


def _model(options: argparse.Namespace, protocol: str) -> Any:
    from obelisk.models import OpenAIChatModel

    return OpenAIChatModel(
        options.model,
        base_url=options.base_url,
        api_key=options.api_key,
        structured=STRUCTURED[options.structured],
        temperature=0.0,
        max_tokens=options.max_tokens,
        timeout=options.timeout,
        max_retries=0,
        protocol=protocol,  # type: ignore[arg-type]
    )


PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens")


def cached_tokens(log: str) -> int:
    """Prompt tokens llama-cpp-python's server took from its cache, summed over the
    ``Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`` lines
    of ``log`` (it reports no ``cached_tokens`` in its usage)."""
    return sum(int(hit) for hit, _ in PREFIX_HIT.findall(log))


def _log_size(path: Path | None) -> int:
    return path.stat().st_size if path is not None and path.exists() else 0


def _log_since(path: Path, mark: int) -> str:
    with path.open("rb") as log:
        log.seek(mark)
        return log.read().decode("utf-8", "replace")


def main(argv: list[str] | None = None) -> int:
    options = _arguments(argv)
    tasks = all_tasks()
    if options.only:
        wanted = options.only.split(",")
        tasks = [task for task in tasks if task.name in wanted]
    tasks = tasks[: options.tasks]
    settings = [
        Setting(protocol, mode, options.primer)
        for protocol in options.protocol or ["json"]
        for mode in options.mode or ["eager"]
    ]
    report: dict[str, Any] = {
        "model": options.model,
        "structured": options.structured,
        "settings": [],
    }
    for setting in settings:
        model = _model(options, setting.protocol)
        records = []
        start = time.monotonic()
        for task in tasks:
            if options.budget is not None and time.monotonic() - start > options.budget:
                break
            mark = _log_size(options.server_log)
            record, result = run_task(model, task, setting, max_turns=options.max_turns)
            if options.server_log is not None:
                record.cached_tokens = cached_tokens(_log_since(options.server_log, mark))
            records.append(record)
            print(
                f"{setting.label()} {task.name}: {'ok' if record.correct else 'WRONG'} "
                f"{record.answers} turns, {record.seconds:.0f} s, codes {record.codes} "
                f"{record.error} {record.problems}",
                flush=True,
            )
            if "cannot reach" in record.error:
                print("the server cannot be reached: this setting stops here", flush=True)
                break
            if options.record and result is not None:
                header = {
                    "model": options.model,
                    "structured": options.structured,
                    "protocol": setting.protocol,
                    "mode": setting.mode,
                    "primer": setting.primer,
                    "task": task.name,
                    "max_turns": options.max_turns,
                    "max_tokens": options.max_tokens,
                    "correct": record.correct,
                    "status": record.status,
                }
                folder = (
                    options.record
                    / f"{setting.protocol}-{setting.mode}{'' if setting.primer else '-noprimer'}"
                )
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{task.name}.jsonl").write_text(
                    recording(header, result), encoding="utf-8"
                )
        row = {"setting": setting.label(), **summarize(records)}
        report["settings"].append({**row, "runs": [as_dict(r) for r in records]})
        print(json.dumps(row), flush=True)
        if options.out:
            options.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
