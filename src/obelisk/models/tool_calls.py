"""The ``tools`` protocol: a request as native tool calls, the answer's tool calls as a
plan (docs/loop.md, "Protocols").  Provider-neutral and SDK-free: the adapters
(:mod:`obelisk.models.openai_chat`, :mod:`obelisk.models.anthropic_messages`,
:mod:`obelisk.models.litellm_chat`) put these pieces in their own wire shapes
(:mod:`obelisk.models.openai_shapes` for the OpenAI chat format).

* :func:`functions`: each tool of the request's solution schema as a function
  ``{"name", "description", "parameters"}`` whose parameters are the tool's (each may
  be a ``†`` reference) plus the meta-properties (``_outputPath``, ``_id``, ...), optional,
  each described in one sentence; then ``final_output``, whose ``output`` parameter is
  the request's output schema.
* :func:`conversation`: the request as a :class:`Conversation`: the system prompt,
  an opening with what stays the same from turn to turn (instructions, tools' outputs,
  input, data), the calls carried from the last answer (replayed as the assistant's
  tool calls, each answered by a tool result), and a closing with what changes (config,
  state, plan, errors), as the ``json`` protocol sends them.
* :func:`solution_of`: the tool calls of one answer (all its parallel calls) as one
  :class:`~obelisk.interpreter.loop.messages.Solution`; the output comes from a
  ``final_output`` call, or from the message text when the answer has no tool call and
  the text fits the output schema.  Arguments are not checked here: the loop's check
  reports a wrong one with its located diagnostic (``#1 lookup, id: ...``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from obelisk.errors import SolutionError, UsageError
from obelisk.interpreter.loop.messages import Request, Solution, parse_solution
from obelisk.interpreter.tools.patterns import linear_validator_class
from obelisk.json_values import loads_strict

__all__ = [
    "Conversation",
    "FINAL_OUTPUT",
    "META_DESCRIPTIONS",
    "StreamedCalls",
    "TOOLS_SYSTEM_PROMPT",
    "ToolCall",
    "answer_of",
    "check_protocol",
    "conversation",
    "cut_off",
    "functions",
    "schema_problem",
    "solution_of",
    "unfenced",
]

FINAL_OUTPUT = "final_output"

TOOLS_SYSTEM_PROMPT = """\
You are the planner of a data-flow interpreter. You reach the goal by calling the \
tools offered as functions; the user messages hold the instructions ("text"), the \
read-only input ("input"), the current state ("state"), other data ("data"), the calls \
carried over from earlier turns ("plan") and errors ("error").

Make every call the turn needs at once: parallel tool calls run as one plan, each as \
soon as the values it references exist. An argument may be a reference: a string \
starting with †, such as "†state.x" or "†input.y", replaced by that value when the \
call runs. Give "_outputPath" (e.g. "†state.result") to keep a call's result in the \
state, where later calls and turns read it.
When the task is done, call final_output with the final answer as "output" (it may \
hold references such as "†state.summary", read once the turn's calls have run).
The instructions in the user messages describe an answer as JSON, {"calls": [...], \
"output": ...}: here, each call {"_tool": name, ...} is a call of the function of that \
name with the other keys as its arguments, and the output is final_output's. Do not \
write that JSON as text."""

META_DESCRIPTIONS = {
    "_outputPath": (
        "Where the call's result is written, a reference such as †state.result: without "
        "it the result is kept nowhere later calls and turns can read."
    ),
    "_outputMethod": (
        "How the result is written at _outputPath: set (the default) replaces the value, "
        "merge and assign combine objects, push and concat append to a list, erase removes it."
    ),
    "_instance": "The instance whose input and state the call reads and writes.",
    "_id": "A name for the call, which _after can name; a new _id runs an identical call again.",
    "_reasoningForCall": "Why you make this call, in one sentence (the interpreter ignores it).",
    "_output": "The result of this tool, written by you: it has no function to run.",
    "_after": "The _id values of calls this call waits for without reading their results.",
}
"""The one-sentence description of each meta-property a function offers."""

_STATIC = ("text", "tool", "input", "data")  # the opening: what stays from turn to turn
_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


@dataclass(frozen=True)
class ToolCall:
    """One call of an answer, as a provider reported it: ``id``, the function's
    ``name`` and its ``arguments`` (JSON text, or an already decoded object)."""

    id: str
    name: str
    arguments: str | dict[str, Any]


@dataclass(frozen=True)
class Conversation:
    """A request in the ``tools`` protocol's order: ``system`` (the prompt),
    ``opening`` (JSON text of what stays the same from turn to turn), ``calls`` (the
    carried calls, replayed as the assistant's tool calls), ``results`` (one tool
    result text per call) and ``closing`` (JSON text of what changes)."""

    system: str
    opening: str
    calls: tuple[ToolCall, ...]
    results: tuple[str, ...]
    closing: str


def function_name(tool: str) -> str:
    """``tool`` as a function name the providers accept (``^[a-zA-Z0-9_-]{1,64}$``):
    other characters become ``_``; ``final_output`` is kept for the answer."""
    name = "".join(char if char in _NAME_OK else "_" for char in tool)[:64] or "_"
    return f"{name}_" if name == FINAL_OUTPUT else name


def _items(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-tool item schemas of a solution schema's ``calls``."""
    items = (schema.get("properties") or {}).get("calls", {}).get("items")
    if not isinstance(items, dict):
        return []
    found = items.get("anyOf", [items])
    return [item for item in found if isinstance(item, dict) and _tool_of(item) is not None]


def _tool_of(item: dict[str, Any]) -> str | None:
    tool = (item.get("properties") or {}).get("_tool")
    if isinstance(tool, dict) and isinstance(tool.get("const"), str):
        return str(tool["const"])
    return None


def _with_defs(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the ``$defs`` its ``#/$defs/...`` references need, transitively."""
    needed: dict[str, Any] = {}
    stack: list[Any] = [schema]
    while stack:
        part = stack.pop()
        if isinstance(part, list):
            stack.extend(part)
        elif isinstance(part, dict):
            ref = part.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/") :]
                if name in defs and name not in needed:
                    needed[name] = defs[name]
                    stack.append(defs[name])
            stack.extend(value for key, value in part.items() if key != "$ref")
    return {**schema, "$defs": needed} if needed else schema


def _parameters(item: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A call item's schema as a function's parameters: no ``_tool``, and each
    meta-property described."""
    properties = {}
    for name, schema in (item.get("properties") or {}).items():
        if name == "_tool":
            continue
        if name in META_DESCRIPTIONS and isinstance(schema, dict):
            schema = {**schema, "description": META_DESCRIPTIONS[name]}
        properties[name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in item.get("required") or [] if name != "_tool"]
    if required:
        parameters["required"] = required
    if item.get("additionalProperties") is False:
        parameters["additionalProperties"] = False
    return _with_defs(parameters, defs)


def output_schema(request: Request) -> dict[str, Any]:
    """The schema of the request's ``output`` (``{}``: any value), with its ``$defs``."""
    schema = request.schema
    output = (schema.get("properties") or {}).get("output", {})
    return _with_defs(output if isinstance(output, dict) else {}, schema.get("$defs") or {})


def functions(request: Request) -> list[dict[str, Any]]:
    """The functions offered for ``request``: one per tool of its solution schema,
    then ``final_output``; each ``{"name", "description", "parameters"}``."""
    defs = request.schema.get("$defs") or {}
    offered = []
    for item in _items(request.schema):
        tool = _tool_of(item)
        assert tool is not None
        description = item.get("description") or f"The tool {tool}."
        offered.append(
            {
                "name": function_name(tool),
                "description": description,
                "parameters": _parameters(item, defs),
            }
        )
    output = output_schema(request)
    offered.append(
        {
            "name": FINAL_OUTPUT,
            "description": (
                "Give the final answer when the task is done; call it alone or after the "
                "turn's other calls. Its output may hold references such as †state.summary."
            ),
            "parameters": {
                "type": "object",
                "properties": {"output": {k: v for k, v in output.items() if k != "$defs"}},
                "required": ["output"],
                **({"$defs": output["$defs"]} if "$defs" in output else {}),
            },
        }
    )
    return offered


def _opening(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The context messages that stay the same from turn to turn; a ``tool``
    message keeps each tool's output schema and latency, its parameters being in
    the functions."""
    opening = []
    for message in data["context"]:
        if message["type"] == "tool":
            tools = [{k: v for k, v in t.items() if k != "parameters"} for t in message["tools"]]
            message = {**message, "tools": tools}
        opening.append(message)
    return opening


def _label_index(label: Any) -> int | None:
    """The call index of an error record's label (``#3 issueRefund`` → 3)."""
    if not isinstance(label, str) or not label.startswith("#"):
        return None
    number = label[1:].split(" ", 1)[0]
    return int(number) if number.isdigit() else None


def _carried(data: dict[str, Any]) -> list[dict[str, Any]]:
    for message in data["context"]:
        if message["type"] == "plan":
            return [call for call in message["plan"] if isinstance(call, dict)]
    return []


def _results(calls: list[dict[str, Any]], errors: list[dict[str, Any]]) -> list[str]:
    """One tool result per carried call: its ``_status`` (``succeeded``, ``failed``,
    ``skipped``, ``planned``, ...) and its error records, if any."""
    results = []
    for index, call in enumerate(calls):
        found = [e for e in errors if _label_index(e.get("call")) == index]
        status = call.get("_status", "carried")
        head = {"call": f"#{index} {call.get('_tool')}", "status": status}
        if found:
            head["errors"] = found
        else:
            head["note"] = "the state and plan that follow show what it did"
        results.append(json.dumps(head, ensure_ascii=False))
    return results


def conversation(request: Request, system: str = TOOLS_SYSTEM_PROMPT) -> Conversation:
    """``request`` in the ``tools`` protocol's order (see :class:`Conversation`)."""
    data = request.to_data()
    opening = [m for m in _opening(data) if m["type"] in _STATIC]
    closing = [m for m in data["context"] if m["type"] not in _STATIC]
    carried = _carried(data)
    calls = tuple(
        ToolCall(
            f"call_{index}",
            function_name(str(call.get("_tool"))),
            {k: v for k, v in call.items() if k not in ("_tool", "_status")},
        )
        for index, call in enumerate(carried)
    )
    errors = [m for m in closing if m["type"] == "error"]
    return Conversation(
        system=system,
        opening=json.dumps({"context": opening}, ensure_ascii=False),
        calls=calls,
        results=tuple(_results(carried, errors)),
        closing=json.dumps({"config": data["config"], "context": closing}, ensure_ascii=False),
    )


def unfenced(text: str) -> str:
    """The JSON inside a Markdown code fence (```` ```json ... ``` ````), or ``text``."""
    stripped = text.strip()
    newline = stripped.find("\n")
    if not (stripped.startswith("```") and stripped.endswith("```")) or newline < 0:
        return text
    if stripped[3:newline].strip().lower() not in ("", "json"):
        return text
    return stripped[newline + 1 : -3]


def _arguments(call: ToolCall, index: int) -> dict[str, Any]:
    """A call's arguments as an object; a SolutionError names the call otherwise."""
    arguments: Any = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = loads_strict(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise SolutionError(
                f"tool call #{index} {call.name}: its arguments are not JSON: {exc.msg} at "
                f"line {exc.lineno} column {exc.colno}",
                call.arguments if isinstance(call.arguments, str) else None,
            ) from None
    if not isinstance(arguments, dict):
        raise SolutionError(
            f"tool call #{index} {call.name}: its arguments must be a JSON object, "
            f"got {type(arguments).__name__}"
        )
    return arguments


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """Where and how ``value`` misses ``schema`` (``"output: 'x' is not of type
    'integer'"``), or ``None`` when it fits; patterns are matched by RE2."""
    validator = linear_validator_class(Draft202012Validator)(schema)
    error = best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path) or "the top level"
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return f"{where}: {message}"


def _written_solution(value: Any) -> bool:
    """Whether a decoded text is a solution written out, ``{"calls": [...], "output"?}``."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("calls"), list)
        and set(value) <= {"calls", "output"}
    )


def _text_answer(text: str, request: Request) -> Solution | Any:
    """What an answer's text without a tool call gives: a solution written out as
    JSON (as the ``json`` protocol's answer), or the output when the text fits the
    output schema (JSON, or the text itself as a string); a SolutionError otherwise."""
    try:
        value: Any = loads_strict(unfenced(text))
    except json.JSONDecodeError:
        value = text
    if _written_solution(value):
        return parse_solution(value)
    problem = schema_problem(value, output_schema(request))
    if problem is not None:
        raise SolutionError(
            "the answer has no tool call, and its text does not fit the output schema at "
            f"{problem}; call the tools, or {FINAL_OUTPUT} with the final answer",
            text,
        )
    return value


def _names(request: Request) -> dict[str, str]:
    """Each offered function's name → the tool it stands for."""
    return {function_name(tool): tool for tool in map(_tool_of, _items(request.schema)) if tool}


def _plan_entry(names: dict[str, str], call: ToolCall, index: int) -> dict[str, Any] | None:
    """The plan call of one tool call (``None`` for ``final_output``)."""
    arguments = _arguments(call, index)
    if call.name == FINAL_OUTPUT:
        if "output" not in arguments:
            raise SolutionError(f'{FINAL_OUTPUT} takes {{"output": ...}}, got {arguments}')
        return None
    body = {k: v for k, v in arguments.items() if k != "_tool"}
    return {"_tool": names.get(call.name, call.name), **body}


def solution_of(request: Request, calls: list[ToolCall], text: str | None) -> Solution:
    """The :class:`Solution` of one answer: its tool ``calls`` (all of them one plan,
    in order) and its message ``text``.  ``final_output``'s ``output`` is the output;
    without any call, the text is a solution written out as JSON (``{"calls": [...],
    "output": ...}``), or else the output, when it fits the output schema.  Raises
    :class:`~obelisk.errors.SolutionError` for arguments that are not a JSON object,
    ``final_output`` called twice or without ``output``, or (no call) a text that does
    not fit."""
    names = _names(request)
    plan: list[dict[str, Any]] = []
    outputs: list[Any] = []
    for index, call in enumerate(calls):
        entry = _plan_entry(names, call, index)
        if entry is None:
            outputs.append(_arguments(call, index)["output"])
        else:
            plan.append(entry)
    if len(outputs) > 1:
        raise SolutionError(f"{FINAL_OUTPUT} was called {len(outputs)} times: call it once")
    output = outputs[0] if outputs else None
    if not calls and text and text.strip():
        answer = _text_answer(text, request)
        if isinstance(answer, Solution):
            return answer
        output = answer
    return parse_solution({"calls": plan, "output": output})


def cut_off(exc: SolutionError, limit: str, reason: str) -> SolutionError:
    """``exc`` for an answer cut off at the token ``limit`` (``"max_tokens=64"``), the
    provider's ``reason`` quoted (``"finish_reason='length'"``)."""
    return SolutionError(
        f"the answer was cut off at {limit} ({reason}), write a shorter one: {exc.reason}",
        exc.text,
    )


def answer_of(
    request: Request,
    calls: list[ToolCall],
    text: str | None,
    *,
    stop: tuple[str, Any],
    cut: str | None,
) -> Solution:
    """:func:`solution_of` for a whole answer that stopped for ``stop`` (``("finish_reason",
    "length")``); ``cut`` names the token limit it was cut off at (``"max_tokens=64"``),
    or is ``None`` when it was not cut off.  An answer with neither a call nor text, or
    (cut off) no call, is a :class:`SolutionError`; a cut-off answer's error says so."""
    name, reason = stop
    if not calls and not (text or "").strip():
        raise SolutionError(f"the model's answer is empty ({name}={reason!r})", "")
    try:
        if cut is not None and not calls:
            raise SolutionError("the answer has no tool call", text)
        return solution_of(request, calls, text)
    except SolutionError as exc:
        if cut is None:
            raise
        raise cut_off(exc, cut, f"{name}={reason!r}") from None


class StreamedCalls:
    """Builds a solution's JSON text from an answer's streamed tool calls, one
    call's object as soon as the call is complete, so the loop can run it while the
    model still writes (docs/loop.md, "Streaming").

    ``start(key, id, name)`` opens a call, ``piece(key, text)`` adds to its arguments'
    JSON text, ``done(key)`` closes it and returns the text to stream (the opening
    ``{"calls": [`` before the first call); ``content(text)`` keeps the message text;
    ``finish()`` closes the open calls and returns the rest, up to the output.
    A call whose arguments are not a JSON object raises
    :class:`~obelisk.errors.SolutionError` as it closes."""

    def __init__(self, request: Request) -> None:
        self._request = request
        self._names = _names(request)
        self._open: dict[Any, tuple[str, str, list[str]]] = {}
        self._calls: list[ToolCall] = []
        self._written = 0
        self._text: list[str] = []

    def start(self, key: Any, call_id: str | None, name: str | None) -> str:
        """Open the call ``key``; a call still open under another key is done first."""
        before = "".join(self.done(other) for other in list(self._open) if other != key)
        self._open[key] = (call_id or f"call_{len(self._calls)}", name or "", [])
        return before

    def piece(self, key: Any, text: str) -> None:
        if key not in self._open:
            self.start(key, None, None)
        self._open[key][2].append(text)

    def name(self, key: Any, text: str) -> None:
        """More of the call's function name (OpenAI streams it in pieces too)."""
        call_id, name, pieces = self._open[key]
        self._open[key] = (call_id, name + text, pieces)

    def is_open(self, key: Any) -> bool:
        return key in self._open

    def done(self, key: Any) -> str:
        call_id, name, pieces = self._open.pop(key)
        call = ToolCall(call_id, name, "".join(pieces))
        self._calls.append(call)
        entry = _plan_entry(self._names, call, len(self._calls) - 1)
        if entry is None:
            return ""
        prefix = '{"calls": [' if self._written == 0 else ", "
        self._written += 1
        return prefix + json.dumps(entry, ensure_ascii=False)

    def content(self, text: str) -> None:
        self._text.append(text)

    def finish(self, cut: bool = False) -> str:
        """The rest of the solution's text; raises :class:`SolutionError` for an
        answer with neither a call nor text, one ``cut`` off at the token limit with no
        call, or as :func:`solution_of` does."""
        tail = "".join(self.done(key) for key in list(self._open))
        text = "".join(self._text)
        if not self._calls and not text.strip():
            raise SolutionError("the model's answer is empty", "")
        if cut and not self._calls:
            raise SolutionError("the answer has no tool call", text)
        solution = solution_of(self._request, self._calls, text)
        if not self._calls:  # nothing streamed yet: the text's solution, whole
            return json.dumps(solution.to_data(), ensure_ascii=False)
        head = "" if self._written else '{"calls": ['
        return f'{tail}{head}], "output": {json.dumps(solution.output, ensure_ascii=False)}}}'


def check_protocol(protocol: Any) -> None:
    """A :class:`~obelisk.errors.UsageError` unless ``protocol`` is ``"json"`` or ``"tools"``."""
    if protocol not in ("json", "tools"):
        raise UsageError(f"protocol must be 'json' or 'tools', got {protocol!r}")
