"""The limits on how complex a function may be (docs/architecture.md, "Simple functions").

``.ci/complexity.py`` measures radon's cyclomatic complexity of every function under
``src/`` once; CI prints its list.  Here the same limits fail the suite: no function
above complexity 25 or longer than 80 lines, at most 1.5% above 15.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _complexity() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_complexity", ROOT / ".ci" / "complexity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_no_function_is_too_complex_or_too_long() -> None:
    complexity = _complexity()
    functions = complexity.measure(ROOT / "src")
    assert len(functions) > 1000  # every function was found, methods and nested ones too
    assert complexity.problems(functions) == []


def test_the_limits_catch_what_they_are_about(tmp_path: Path) -> None:
    complexity = _complexity()
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(30))
    (tmp_path / "m.py").write_text(f"def tangled(x):\n{branches}\n    return -1\n")
    (tmp_path / "n.py").write_text("def plain(x):\n    return x\n")
    found = complexity.measure(tmp_path)
    assert sorted((f.name, f.complexity) for f in found) == [("plain", 1), ("tangled", 31)]
    assert complexity.problems(found) == [
        f"{tmp_path / 'm.py'}:1 tangled has complexity 31 (at most 25)",
        "1 of 2 functions (50.0%) are above complexity 15 (at most 1.5%)",
    ]


@pytest.mark.parametrize("lines", [80, 81])
def test_a_long_function_is_caught_past_80_lines(tmp_path: Path, lines: int) -> None:
    complexity = _complexity()
    body = "\n".join(f"    x += {i}" for i in range(lines - 2))
    (tmp_path / "m.py").write_text(f"def long(x):\n{body}\n    return x\n")
    problems = complexity.problems(complexity.measure(tmp_path))
    assert problems == (
        [] if lines == 80 else [f"{tmp_path / 'm.py'}:1 long is 81 lines long (at most 80)"]
    )
