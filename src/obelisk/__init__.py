"""obelisk: a strict, fast data-flow interpreter for LLM tool-call plans.

Public API only; the implementation lives in private layers (docs/architecture.md)::

    import obelisk

    @obelisk.tool
    def get_user(user_id: str) -> dict[str, str]:
        "Fetch a user profile."
        ...

    plan = obelisk.parse_plan('[{"_tool": "get_user", "user_id": "†input.id", '
                              '"_outputPath": "†state.user"}]')
    result = obelisk.check(plan, [get_user], input={"id": "u1"})
    result.raise_for_errors()
"""

import importlib
import sys
from typing import TYPE_CHECKING, Any

from obelisk.diagnostics import Diagnostic as Diagnostic
from obelisk.diagnostics import DiagnosticCode as DiagnosticCode
from obelisk.errors import ApprovalError as ApprovalError
from obelisk.errors import ApprovalRejected as ApprovalRejected
from obelisk.errors import ArgumentValidationError as ArgumentValidationError
from obelisk.errors import CorrectionBudgetExceeded as CorrectionBudgetExceeded
from obelisk.errors import DelegateDepthExceeded as DelegateDepthExceeded
from obelisk.errors import DependencyCycleError as DependencyCycleError
from obelisk.errors import ExecutionError as ExecutionError
from obelisk.errors import JournalCorrupted as JournalCorrupted
from obelisk.errors import JournalError as JournalError
from obelisk.errors import LoopBudgetExceeded as LoopBudgetExceeded
from obelisk.errors import LoopError as LoopError
from obelisk.errors import LoopStopped as LoopStopped
from obelisk.errors import ModelError as ModelError
from obelisk.errors import ObeliskError as ObeliskError
from obelisk.errors import PlanError as PlanError
from obelisk.errors import PolicyViolation as PolicyViolation
from obelisk.errors import ReferenceSyntaxError as ReferenceSyntaxError
from obelisk.errors import RunLocked as RunLocked
from obelisk.errors import RunMismatch as RunMismatch
from obelisk.errors import ScriptExhausted as ScriptExhausted
from obelisk.errors import SolutionError as SolutionError
from obelisk.errors import ToolDefinitionError as ToolDefinitionError
from obelisk.errors import UnknownOutcome as UnknownOutcome
from obelisk.errors import UsageError as UsageError
from obelisk.limits import Limits as Limits
from obelisk.public_module import report_public_module as _report_public_module

if TYPE_CHECKING:
    from obelisk.grammar import parse_expression as parse_expression
    from obelisk.grammar import ref as ref
    from obelisk.interpreter.analysis.check import check as check
    from obelisk.interpreter.analysis.graph import PlanGraph as PlanGraph
    from obelisk.interpreter.analysis.result import CheckResult as CheckResult
    from obelisk.interpreter.analysis.trust import ApprovalNeed as ApprovalNeed
    from obelisk.interpreter.fixed_plan import resume as resume
    from obelisk.interpreter.fixed_plan import resume_sync as resume_sync
    from obelisk.interpreter.fixed_plan import run as run
    from obelisk.interpreter.fixed_plan import run_sync as run_sync
    from obelisk.interpreter.loop.loop import Loop as Loop
    from obelisk.interpreter.loop.messages import Request as Request
    from obelisk.interpreter.loop.messages import Solution as Solution
    from obelisk.interpreter.loop.messages import parse_solution as parse_solution
    from obelisk.interpreter.loop.messages import solution_schema as solution_schema
    from obelisk.interpreter.loop.model import Model as Model
    from obelisk.interpreter.loop.model import StreamingModel as StreamingModel
    from obelisk.interpreter.loop.records import LoopResult as LoopResult
    from obelisk.interpreter.loop.records import Turn as Turn
    from obelisk.interpreter.many.batch import BatchResult as BatchResult
    from obelisk.interpreter.many.batch import LocalExecutor as LocalExecutor
    from obelisk.interpreter.many.batch import run_many as run_many
    from obelisk.interpreter.many.batch import run_many_sync as run_many_sync
    from obelisk.interpreter.many.ray_executor import RayExecutor as RayExecutor
    from obelisk.interpreter.plan.model import Call as Call
    from obelisk.interpreter.plan.model import Plan as Plan
    from obelisk.interpreter.plan.parse import parse_plan as parse_plan
    from obelisk.interpreter.runtime.approvals import Decision as Decision
    from obelisk.interpreter.runtime.approvals import PendingApproval as PendingApproval
    from obelisk.interpreter.runtime.approvals import Resolution as Resolution
    from obelisk.interpreter.runtime.durable.journal import Journal as Journal
    from obelisk.interpreter.runtime.events import Event as Event
    from obelisk.interpreter.runtime.records import CallRecord as CallRecord
    from obelisk.interpreter.runtime.records import RunResult as RunResult
    from obelisk.interpreter.runtime.records import UnknownCall as UnknownCall
    from obelisk.interpreter.runtime.write_log import WriteEntry as WriteEntry
    from obelisk.interpreter.simulate.approval import Approval as Approval
    from obelisk.interpreter.simulate.approval import PlanDiff as PlanDiff
    from obelisk.interpreter.simulate.report import ScenarioReport as ScenarioReport
    from obelisk.interpreter.simulate.report import SimulationReport as SimulationReport
    from obelisk.interpreter.simulate.simulate import simulate as simulate
    from obelisk.interpreter.simulate.unknown import UnknownValue as UnknownValue
    from obelisk.interpreter.tools.labels import Label as Label
    from obelisk.interpreter.tools.labels import Labeled as Labeled
    from obelisk.interpreter.tools.options import Outcome as Outcome
    from obelisk.interpreter.tools.options import RetryPolicy as RetryPolicy
    from obelisk.interpreter.tools.policies import Allow as Allow
    from obelisk.interpreter.tools.policies import Ask as Ask
    from obelisk.interpreter.tools.policies import Deny as Deny
    from obelisk.interpreter.tools.policies import PolicyCall as PolicyCall
    from obelisk.interpreter.tools.provenance import Origin as Origin
    from obelisk.interpreter.tools.registry import Registry as Registry
    from obelisk.interpreter.tools.registry import ToolsLike as ToolsLike
    from obelisk.interpreter.tools.run_context import Context as Context
    from obelisk.interpreter.tools.tool import Tool as Tool
    from obelisk.interpreter.tools.tool import tool as tool
    from obelisk.interpreter.tracing import instrument as instrument
    from obelisk.models.scripted import ScriptedModel as ScriptedModel

_CORE = {
    "Allow": "obelisk.interpreter.tools.policies",
    "ApprovalNeed": "obelisk.interpreter.analysis.trust",
    "Ask": "obelisk.interpreter.tools.policies",
    "Call": "obelisk.interpreter.plan.model",
    "CallRecord": "obelisk.interpreter.runtime.records",
    "CheckResult": "obelisk.interpreter.analysis.result",
    "Context": "obelisk.interpreter.tools.run_context",
    "Decision": "obelisk.interpreter.runtime.approvals",
    "Deny": "obelisk.interpreter.tools.policies",
    "Event": "obelisk.interpreter.runtime.events",
    "Journal": "obelisk.interpreter.runtime.durable.journal",
    "Label": "obelisk.interpreter.tools.labels",
    "Labeled": "obelisk.interpreter.tools.labels",
    "Origin": "obelisk.interpreter.tools.provenance",
    "Outcome": "obelisk.interpreter.tools.options",
    "PendingApproval": "obelisk.interpreter.runtime.approvals",
    "Plan": "obelisk.interpreter.plan.model",
    "PlanGraph": "obelisk.interpreter.analysis.graph",
    "PolicyCall": "obelisk.interpreter.tools.policies",
    "Registry": "obelisk.interpreter.tools.registry",
    "Resolution": "obelisk.interpreter.runtime.approvals",
    "RetryPolicy": "obelisk.interpreter.tools.options",
    "RunResult": "obelisk.interpreter.runtime.records",
    "Tool": "obelisk.interpreter.tools.tool",
    "ToolsLike": "obelisk.interpreter.tools.registry",
    "UnknownCall": "obelisk.interpreter.runtime.records",
    "WriteEntry": "obelisk.interpreter.runtime.write_log",
    "check": "obelisk.interpreter.analysis.check",
    "parse_expression": "obelisk.grammar",
    "parse_plan": "obelisk.interpreter.plan.parse",
    "ref": "obelisk.grammar",
    "resume": "obelisk.interpreter.fixed_plan",
    "resume_sync": "obelisk.interpreter.fixed_plan",
    "run": "obelisk.interpreter.fixed_plan",
    "run_sync": "obelisk.interpreter.fixed_plan",
    "tool": "obelisk.interpreter.tools.tool",
}
"""Public names of checking and running plans, imported on first use too, so that
``import obelisk`` and ``obelisk --version`` load only the errors, diagnostics and limits
(tests/unit/api/test_cold_start.py).  When one is first used, every name of this table
whose module is loaded by then reports ``"obelisk"`` as its module, as if imported here."""

_LAZY = {
    "Approval": "obelisk.interpreter.simulate.approval",
    "BatchResult": "obelisk.interpreter.many.batch",
    "LocalExecutor": "obelisk.interpreter.many.batch",
    "Loop": "obelisk.interpreter.loop.loop",
    "LoopResult": "obelisk.interpreter.loop.records",
    "Model": "obelisk.interpreter.loop.model",
    "PlanDiff": "obelisk.interpreter.simulate.approval",
    "RayExecutor": "obelisk.interpreter.many.ray_executor",
    "Request": "obelisk.interpreter.loop.messages",
    "ScenarioReport": "obelisk.interpreter.simulate.report",
    "ScriptedModel": "obelisk.models.scripted",
    "SimulationReport": "obelisk.interpreter.simulate.report",
    "Solution": "obelisk.interpreter.loop.messages",
    "StreamingModel": "obelisk.interpreter.loop.model",
    "Turn": "obelisk.interpreter.loop.records",
    "UnknownValue": "obelisk.interpreter.simulate.unknown",
    "instrument": "obelisk.interpreter.tracing",
    "parse_solution": "obelisk.interpreter.loop.messages",
    "run_many": "obelisk.interpreter.many.batch",
    "run_many_sync": "obelisk.interpreter.many.batch",
    "simulate": "obelisk.interpreter.simulate.simulate",
    "solution_schema": "obelisk.interpreter.loop.messages",
}
"""Public names imported on first use: the execution loop, dry runs, tracing and the
scripted model are not needed to check or run a plan (``obelisk run`` never loads them)."""

if not TYPE_CHECKING:  # mypy keeps checking every attribute of the module

    def __getattr__(name: str) -> Any:
        module = _CORE.get(name) or _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'obelisk' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        _report_public_module({name: value}, [name], __name__)
        globals()[name] = value
        _report_loaded_core()
        return value

    def _report_loaded_core() -> None:
        """Import into this module, and rehome, every name of ``_CORE`` whose module
        is loaded: what ``import obelisk`` did for all of them before they were lazy."""
        namespace = globals()
        loaded = {
            name: getattr(sys.modules[module], name)
            for name, module in _CORE.items()
            if name not in namespace and module in sys.modules
        }
        namespace.update(loaded)
        _report_public_module(loaded, list(loaded), __name__)


def __dir__() -> list[str]:
    return sorted({*globals(), *_CORE, *_LAZY})


__version__ = "0.1.0"

__all__ = [
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

# every public class and function reports "obelisk" as its module (the lazy ones
# when first used): docs/architecture.md, src/obelisk/public_module.py
_report_public_module(
    globals(), [name for name in __all__ if name not in _LAZY and name not in _CORE], __name__
)
