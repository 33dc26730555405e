"""The public surface: a sorted ``__all__`` pinned here, explicit re-exports, layers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import obelisk
import obelisk.grammar

SRC = Path(obelisk.__file__).resolve().parent

PUBLIC = [
    "Allow",
    "Approval",
    "ApprovalError",
    "ApprovalNeed",
    "ApprovalRejected",
    "ArgumentValidationError",
    "Ask",
    "BatchResult",
    "Call",
    "CallRecord",
    "CheckResult",
    "Context",
    "CorrectionBudgetExceeded",
    "Decision",
    "DelegateDepthExceeded",
    "Deny",
    "DependencyCycleError",
    "Diagnostic",
    "DiagnosticCode",
    "Event",
    "ExecutionError",
    "Journal",
    "JournalCorrupted",
    "JournalError",
    "Label",
    "Labeled",
    "Limits",
    "LocalExecutor",
    "Loop",
    "LoopBudgetExceeded",
    "LoopError",
    "LoopResult",
    "LoopStopped",
    "Model",
    "ModelError",
    "ObeliskError",
    "Origin",
    "Outcome",
    "PendingApproval",
    "Plan",
    "PlanDiff",
    "PlanError",
    "PlanGraph",
    "PolicyCall",
    "PolicyViolation",
    "RayExecutor",
    "ReferenceSyntaxError",
    "Registry",
    "Request",
    "Resolution",
    "RetryPolicy",
    "RunLocked",
    "RunMismatch",
    "RunResult",
    "ScenarioReport",
    "ScriptExhausted",
    "ScriptedModel",
    "SimulationReport",
    "Solution",
    "SolutionError",
    "StreamingModel",
    "Tool",
    "ToolDefinitionError",
    "ToolsLike",
    "Turn",
    "UnknownCall",
    "UnknownOutcome",
    "UnknownValue",
    "UsageError",
    "WriteEntry",
    "check",
    "instrument",
    "parse_expression",
    "parse_plan",
    "parse_solution",
    "ref",
    "resume",
    "resume_sync",
    "run",
    "run_many",
    "run_many_sync",
    "run_sync",
    "simulate",
    "solution_schema",
    "tool",
]


def test_all_is_pinned_and_sorted() -> None:
    assert obelisk.__all__ == PUBLIC
    assert sorted(obelisk.__all__) == obelisk.__all__


def test_every_public_name_resolves() -> None:
    for name in obelisk.__all__:
        assert getattr(obelisk, name) is not None


def test_grammar_all_is_sorted_and_resolves() -> None:
    assert sorted(obelisk.grammar.__all__) == obelisk.grammar.__all__
    for name in obelisk.grammar.__all__:
        assert hasattr(obelisk.grammar, name)


def test_every_error_derives_from_the_root_and_has_a_code() -> None:
    errors = [getattr(obelisk, name) for name in PUBLIC if name.endswith("Error")]
    codes = set()
    for error in errors:
        assert issubclass(error, obelisk.ObeliskError)
        assert isinstance(error.code, str) and error.code
        codes.add(error.code)
    assert len(codes) == len(errors), "error codes must be distinct"


def test_import_contracts_hold() -> None:
    """The layer contracts of pyproject.toml (import-linter; also run by CI)."""
    linter = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(linter), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "0 broken" in done.stdout


def test_modules_stay_small() -> None:
    sizes = {
        str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
        for path in SRC.rglob("*.py")
    }
    # A smell detector, not a rule: modules are split by concept (docs/architecture.md),
    # and no module has an allowance.
    too_big = {name: lines for name, lines in sizes.items() if lines > 550}
    assert too_big == {}


_LATER = ("obelisk.interpreter.loop", "obelisk.interpreter.simulate", "obelisk.models", "re2")


def test_the_loop_dry_runs_and_models_are_imported_when_first_used() -> None:
    code = (
        "import sys, obelisk\n"
        f"print(sorted(m for m in sys.modules if m.startswith({_LATER!r})))\n"
        "print(obelisk.Loop.__module__, 'simulate' in dir(obelisk), obelisk.simulate.__name__)\n"
        "from obelisk import ScriptedModel\n"
        "print(ScriptedModel is obelisk.ScriptedModel)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "[]",
        "obelisk True simulate",
        "True",
    ]
    missing = "import obelisk; obelisk.nope"
    done = subprocess.run([sys.executable, "-c", missing], capture_output=True, text=True)
    assert "AttributeError: module 'obelisk' has no attribute 'nope'" in done.stderr


def test_importing_obelisk_does_not_import_the_cli() -> None:
    code = "import sys, obelisk; print('obelisk.cli.app' in sys.modules, 'typer' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
