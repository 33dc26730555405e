"""How complex obelisk's functions are (radon's cyclomatic complexity), and the limits.

Every function, method and nested function under ``src/`` is counted once.  The
limits (docs/architecture.md, "Simple functions"): no function above complexity
25 or longer than 80 lines, and at most 1.5% of them above complexity 15.

``python .ci/complexity.py [FOLDER]`` prints every function above 15 or 80 lines,
worst first, and the share, and exits 1 when a limit is broken.  The test
``tests/unit/api/test_complexity.py`` applies the same limits to ``src/``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

MAX_COMPLEXITY = 25
MAX_LINES = 80
OVER = 15
MAX_SHARE_OVER = 0.015


@dataclass(frozen=True)
class Measured:
    path: str
    line: int
    name: str
    complexity: int
    lines: int

    def __str__(self) -> str:
        return f"{self.complexity:>3} {self.lines:>4} lines  {self.path}:{self.line} {self.name}"


def measure(root: Path) -> list[Measured]:
    """Every function under ``root`` once (radon lists a method under its class and
    again on its own)."""
    found: dict[tuple[str, int, str], Measured] = {}

    def walk(blocks: list[object], path: str) -> None:
        for block in blocks:
            if isinstance(block, Function):
                key = (path, block.lineno, block.name)
                found[key] = Measured(
                    path,
                    block.lineno,
                    block.fullname,
                    block.complexity,
                    block.endline - block.lineno + 1,
                )
                walk(list(block.closures), path)
            elif isinstance(block, Class):
                walk(list(block.methods), path)
                walk(list(block.inner_classes), path)

    for file in sorted(root.rglob("*.py")):
        walk(list(cc_visit(file.read_text(encoding="utf-8"))), str(file))
    return list(found.values())


def problems(functions: list[Measured]) -> list[str]:
    """The limits ``functions`` break, one sentence each (empty: none)."""
    found = [
        f"{f.path}:{f.line} {f.name} has complexity {f.complexity} (at most {MAX_COMPLEXITY})"
        for f in functions
        if f.complexity > MAX_COMPLEXITY
    ]
    found += [
        f"{f.path}:{f.line} {f.name} is {f.lines} lines long (at most {MAX_LINES})"
        for f in functions
        if f.lines > MAX_LINES
    ]
    over = [f for f in functions if f.complexity > OVER]
    if functions and len(over) > MAX_SHARE_OVER * len(functions):
        found.append(
            f"{len(over)} of {len(functions)} functions ({len(over) / len(functions):.1%}) "
            f"are above complexity {OVER} (at most {MAX_SHARE_OVER:.1%})"
        )
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "src")
    functions = measure(root)
    shown = sorted(
        (f for f in functions if f.complexity > OVER or f.lines > MAX_LINES),
        key=lambda f: (-f.complexity, -f.lines),
    )
    over = sum(f.complexity > OVER for f in functions)
    print(
        f"{len(functions)} functions under {root}; {over} above complexity {OVER} "
        f"({over / max(len(functions), 1):.2%}; the limit is {MAX_SHARE_OVER:.1%})"
    )
    for f in shown:
        print(f"  {f}")
    broken = problems(functions)
    for sentence in broken:
        print(f"limit broken: {sentence}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
