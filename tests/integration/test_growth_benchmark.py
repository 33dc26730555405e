"""``python -m benchmarks.growth --quick`` runs and prints every shape's exponents
(no timing asserts: the figures depend on the machine)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import growth

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(
    r"^\| (\w+) \| (check|run) \| ([\d,]+) → ([\d,]+) \| .* ms \| .* ms \| "
    r"(-?\d+\.\d\d|–) \| (-?\d+\.\d\d|–) \| .* MiB \| (-?\d+\.\d\d|–) \|$"
)


def test_quick_run_prints_every_shape_and_stage_with_exponents() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), *filter(None, [env.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.growth", "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rows = [ROW.match(line) for line in done.stdout.splitlines() if line.startswith("| ")]
    found = [row.groups() for row in rows if row is not None]
    assert {(shape, stage) for shape, stage, *_ in found} == {
        (shape, stage) for shape in growth.SHAPES for stage in growth.STAGES
    }
    for _, _, small, large, *exponents in found:
        assert int(large.replace(",", "")) == 4 * int(small.replace(",", ""))
        assert all(e == "–" or -5 < float(e) < 5 for e in exponents)
    assert "exponent = log(t(4n)/t(n))/log(4)" in done.stdout


def test_exponent_of_linear_and_quadratic_growth() -> None:
    assert growth.exponent(1.0, 4.0) == 1.0
    assert growth.exponent(1.0, 16.0) == 2.0
    assert growth.exponent(0.0, 1.0) is None
    assert growth.base_size("wildcard", 40) == 10
    assert growth.plan_for("wildcard", 10).count("[*]") == 5
