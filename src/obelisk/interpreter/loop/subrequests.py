"""Latent calls and delegates as sub-requests of the execution loop (docs/loop.md).

* In lazy mode every latent call runs as one sub-request: the tool's schema and
  the call's resolved arguments go to the model, whose ``output`` is validated
  against the tool's output schema and written to the chosen alternative.
* In both modes a *delegate* tool (declared with ``_delegate``) runs its call as
  an isolated execution loop of its own: its input is the call's arguments,
  ``_scopes`` chooses which parent context it also sees, the call's ``_tools``
  which tools it sees and may run (:func:`child_tools`), and its final output is
  the call's result (:func:`delegate_result`).  Nesting is bounded by ``max_depth``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from obelisk.errors import (
    DelegateDepthExceeded,
    LoopError,
    ModelError,
    SolutionError,
    SubRequestError,
)
from obelisk.interpreter.loop.context import LATENT_INSTRUCTIONS
from obelisk.interpreter.loop.messages import (
    ErrorMessage,
    InputMessage,
    Message,
    Request,
    TextMessage,
    ToolMessage,
    tool_description,
)
from obelisk.interpreter.loop.model import Model
from obelisk.interpreter.loop.records import LoopResult
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.delegation import DelegateRegistry, delegate_tools
from obelisk.interpreter.tools.labels import TRUSTED, Labeled, Trust
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Parent", "SubRequests", "child_tools", "delegate_result", "latent_output_schema"]


class Parent(Protocol):
    """What sub-requests need of the loop that makes them: its model and limits,
    and a way to run a delegate's child loop one level deeper."""

    @property
    def model(self) -> Model: ...
    @property
    def mode(self) -> str: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def depth(self) -> int: ...
    @property
    def max_depth(self) -> int: ...
    @property
    def max_corrections(self) -> int: ...
    @property
    def registry(self) -> Registry: ...
    @property
    def quarantine(self) -> bool: ...

    async def delegate(
        self,
        *,
        tools: Registry,
        output_schema: Mapping[str, Any] | None,
        instructions: str,
        input: Any,
        state: Mapping[str, Any] | None,
        data: Mapping[str, Any] | None,
    ) -> LoopResult: ...


def _alternative_texts(call: Call) -> list[str]:
    """Each output alternative of ``call`` as written: ``†state.a && †state.b``."""
    return [" && ".join(str(ref) for ref in option) for option in call.alternatives]


def latent_output_schema(tool: Tool, call: Call) -> dict[str, Any]:
    """The schema of a latent sub-request's ``output``: the tool's output schema,
    or ``{"outputPath": <one of the alternatives>, "value": ...}`` when the call's
    ``_outputPath`` has two or more alternatives.  Its ``$defs`` are left out:
    they go at the top of the sub-request's schema."""
    value: dict[str, Any] = dict(tool.output_schema) if tool.output_schema is not None else {}
    value.pop("$defs", None)  # hoisted to the top of the sub-request's schema
    texts = _alternative_texts(call)
    if len(texts) < 2:
        return value
    return {
        "type": "object",
        "properties": {"outputPath": {"enum": texts}, "value": value},
        "required": ["outputPath", "value"],
        "additionalProperties": False,
    }


def child_tools(call: Call, registry: Registry) -> DelegateRegistry:
    """The tools the child loop of delegate ``call`` sees and may run: those of its
    ``_tools`` (default: the tools of ``registry`` that do not write the world;
    docs/loop.md, "Delegates").  A child answer that calls another of ``registry``'s
    tools gets an ``unknown_tool`` error record saying so, and it never runs.
    Raises :class:`SubRequestError` for a bad ``_tools`` (which the check reports
    first, as ``invalid_tools``)."""
    try:
        allowed = delegate_tools(call.delegate_tools, registry)
    except ValueError as exc:
        raise SubRequestError(f"{call.label}: {exc}") from None
    return DelegateRegistry(registry, allowed, f"the delegate {call.label} does not allow it")


def delegate_result(call: Call, arguments: dict[str, Any], child: LoopResult) -> Any:
    """What delegate ``call``, run with the resolved ``arguments``, commits as its
    result: the final output of its child loop ``child``.

    The one place a delegate's result leaves its child loop, with its labels
    (docs/security.md, docs/loop.md "Quarantine"): the child's model read every value of
    its state, so the result carries the join of every label the child kept (a
    :class:`~obelisk.interpreter.tools.labels.Labeled` result when that is untrusted or
    restricted); the run joins the labels of ``arguments`` (and of the state or data
    its ``_scopes`` handed over) and its tool's own, as for any call."""
    del call, arguments  # their labels are the run's (flows.RunLabels.result)
    read = child.labels.everything() if child.labels is not None else TRUSTED
    if read.bottom or (not read.untrusted and read.readers is None):
        return child.output
    trust: Trust | None = "untrusted" if read.untrusted else None  # None: its tool's own
    return Labeled(child.output, trust=trust, readers=read.readers)


def _read_untrusted(child: LoopResult) -> bool:
    """Whether a delegate's child loop held untrusted data in its state."""
    return child.labels is not None and child.labels.everything().untrusted


class SubRequests:
    """The :class:`~obelisk.interpreter.runtime.engine.LatentRunner` of one turn of a
    loop, or of one ``obelisk.run(..., model=...)`` (docs/loop.md).

    ``state`` is the run's state (for the ``state`` scope); ``notes`` collects a
    summary of every sub-request (a turn's ``delegated``).
    """

    def __init__(self, loop: Parent, state: State, notes: list[dict[str, Any]]) -> None:
        self.loop, self.state, self.notes = loop, state, notes

    def accepts(self, tool: Tool) -> bool:
        """Delegates always; latent calls in lazy mode, and in quarantine (the planner
        cannot write the result of what it cannot see; docs/loop.md, "Quarantine")."""
        return tool.delegate or self.loop.mode == "lazy" or self.loop.quarantine

    async def run(self, call: Call, tool: Tool, arguments: dict[str, Any]) -> Any:
        if tool.delegate:
            return await self._delegate(call, tool, arguments)
        return await self._latent(call, tool, arguments)

    async def _latent(self, call: Call, tool: Tool, arguments: dict[str, Any]) -> Any:
        schema = latent_output_schema(tool, call)
        solution_schema = {
            "type": "object",
            "properties": {"calls": {"type": "array", "maxItems": 0}, "output": schema},
            "required": ["calls", "output"],
        }
        if tool.output_schema is not None and "$defs" in tool.output_schema:
            solution_schema["$defs"] = tool.output_schema["$defs"]  # refs are #/$defs/...
        errors: list[Message] = []
        answers: list[dict[str, Any]] = []
        for _attempt in range(self.loop.max_corrections + 1):
            context: list[Message] = [
                TextMessage(text=LATENT_INSTRUCTIONS),
                ToolMessage(tools=[tool_description(tool)]),
                InputMessage(input=arguments),
                *errors,
            ]
            config = {"mode": "latent", "call": call.label, "depth": self.loop.depth}
            request = Request(config=config, schema=solution_schema, context=context)
            try:
                solution = await self.loop.model.complete(request)
            except SolutionError as exc:
                problem = exc.reason
                answers.append({"raw": exc.text} if exc.text is not None else {"solution": None})
            except ModelError as exc:
                raise SubRequestError(f"the model failed on {call.label}: {exc}") from exc
            else:
                answers.append({"solution": solution.to_data()})
                try:
                    result = self._latent_result(call, tool, solution.output)
                except SubRequestError as exc:
                    problem = str(exc)
                else:
                    self._note(call, "latent", answers, solution.output)
                    return result
            error = {"type": "invalid_output", "message": problem}
            errors = [ErrorMessage(call=call.label, error=error)]
        self._note(call, "latent", answers, None)
        raise SubRequestError(
            f"no usable result for latent {call.label} after "
            f"{self.loop.max_corrections + 1} answers: {problem}"
        )

    def _latent_result(self, call: Call, tool: Tool, output: Any) -> Any:
        texts = _alternative_texts(call)
        value: Any = output
        chosen = 0
        if len(texts) >= 2:
            if not isinstance(output, dict) or output.get("outputPath") not in texts:
                raise SubRequestError(
                    f'output must be {{"outputPath": one of {texts}, "value": ...}}'
                )
            chosen, value = texts.index(output["outputPath"]), output.get("value")
        problems = tool.validate_output(value)
        if problems:
            where = f" at {problems[0].path}" if problems[0].path else ""
            raise SubRequestError(
                f"the output does not fit the schema of {tool.name}{where}: {problems[0].message}"
            )
        return Outcome(chosen, value) if len(texts) >= 2 else value

    async def _delegate(self, call: Call, tool: Tool, arguments: dict[str, Any]) -> Any:
        loop = self.loop
        if loop.depth + 1 > loop.max_depth:
            raise DelegateDepthExceeded(
                f"{call.label} would nest sub-requests {loop.depth + 1} deep; "
                f"the limit is max_depth={loop.max_depth}"
            )
        scopes = tool.scopes
        instructions = f"You are carrying out {call.label}: {tool.description}".rstrip(": ")
        if "text" in scopes and loop.instructions:
            instructions += f"\n{loop.instructions}"
        state = self.state.document("state") if "state" in scopes else None
        data = (
            {kind: self.state.document(kind) for kind in self.state.kinds if kind != "state"}
            if "data" in scopes
            else None
        )
        try:
            result = await loop.delegate(
                tools=child_tools(call, loop.registry),
                output_schema=tool.output_schema,
                instructions=instructions,
                input=arguments,
                state=state,
                data=data,
            )
        except LoopError as exc:
            self._note(call, "delegate", exc.result.answers(), None)
            reason = str(exc)
            if loop.quarantine and _read_untrusted(exc.result):  # it may quote what it read
                reason = "its reason is withheld in quarantine: its loop read untrusted data"
            raise SubRequestError(f"delegate {call.label} stopped: {reason}") from exc
        self._note(call, "delegate", result.answers(), result.output)
        return delegate_result(call, arguments, result)

    def _note(self, call: Call, kind: str, answers: list[dict[str, Any]], output: Any) -> None:
        """Summarize a sub-request in ``notes``: ``{"call", "kind", "answers", "output"}``."""
        self.notes.append({"call": call.label, "kind": kind, "answers": answers, "output": output})
