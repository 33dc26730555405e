"""Valid plans over a registry, as a model could write them (docs/testing.md).

:func:`plans` draws :class:`GeneratedPlan` objects: every argument fits its
parameter's schema, every reference reads a path that the input has or another
call writes with a value that fits, and no call waits for itself.  Each call's
decisions are read from one drawn byte string (a few Hypothesis choices per plan,
not one per decision), which keeps 20-call plans fast to draw.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st

from obelisk.errors import UsageError
from obelisk.grammar import Field, Index, Reference
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.interpreter.tools.tool import Tool
from obelisk.testing.schemas import accepts, inline_refs, sub_schemas
from obelisk.testing.tapes import Tape, draw_tapes, plan_positions
from obelisk.testing.values import strategy_for, strategy_parts

__all__ = ["ERROR_ARM_SCHEMA", "GeneratedPlan", "plans"]

#: What the error arm of a call holds (docs/language.md), with every field required.
ERROR_ARM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["type", "message", "tool", "call"],
            "properties": {
                "type": {"type": "string"},
                "message": {"type": "string"},
                "tool": {"type": "string"},
                "call": {"type": "integer"},
            },
        }
    },
}


def _escape(value: Any) -> Any:
    """A literal as a plan writes it: strings that start with ``†`` get one more."""
    if isinstance(value, str):
        return "†" + value if value.startswith("†") else value
    if isinstance(value, list):
        return [_escape(item) for item in value]
    if isinstance(value, dict):
        return {key: _escape(item) for key, item in value.items()}
    return value


def _both(first: Any, second: Any) -> Any:
    return lambda value: first(value) and second(value)


@dataclass(frozen=True)
class _Parameter:
    name: str
    required: bool
    schema: Any  # refs inlined
    values: st.SearchStrategy[Any]  # mostly fitting values ...
    fits: Any  # ... and the test that tells those that fit (schema and tool)

    def value(self, draw: st.DrawFn) -> Any:
        """A fitting value; like ``.filter``, three tries, then the example is given
        up, but without a filter's strategy layers."""
        for _ in range(3):
            value = draw(self.values)
            if self.fits(value):
                return value
        reject()

    def literal(self, draw: st.DrawFn) -> Any:
        """A fitting value as a plan writes it (a leading ``†`` doubled)."""
        return _escape(self.value(draw))


@dataclass(frozen=True)
class _ToolInfo:
    tool: Tool
    parameters: tuple[_Parameter, ...]
    outputs: tuple[tuple[str, Any, int], ...]  # (path text, schema, schema id) to read
    latent_outputs: _Parameter | None  # what a latent call's _output is drawn from


@dataclass(frozen=True)
class _Source:
    """A path a call may read, with what is known of its value."""

    text: str
    schema: Any  # None: unknown
    schema_id: int
    instance: str | None
    tags: tuple[tuple[int, int], ...]  # (producer, alternative) this path depends on


class _Catalog:
    """What plans() needs to know about a registry, worked out once."""

    def __init__(self, registry: Registry, latent_outputs: bool) -> None:
        self.registry = registry
        self.tools: list[_ToolInfo] = []
        self._schema_ids: dict[str, int] = {}
        self._verdicts: dict[int, dict[int, bool]] = {}
        self._fitting: dict[int, list[int]] = {}
        self.parameter_ids: dict[tuple[str, str], int] = {}
        self.parameters: dict[int, _Parameter] = {}  # one per distinct parameter schema
        skipped = []
        for tool in registry:
            info = self._info(tool, latent_outputs)
            if info is None:
                skipped.append(tool.name)
            else:
                self.tools.append(info)
        if not self.tools:
            why = f" (left out: {', '.join(skipped)})" if skipped else ""
            raise UsageError(f"plans() needs at least one tool it can call{why}")
        self.error_outputs = self.readable(ERROR_ARM_SCHEMA)
        most = max(len(info.parameters) for info in self.tools)
        # tool, instance; per parameter: include, read, choice (2), shape, second (2);
        # output: 3; the sort key
        self.tape_size = 2 + 7 * most + 3 + 1

    def readable(self, schema: Any) -> tuple[tuple[str, Any, int], ...]:
        """``(path text, schema, schema id)`` of every path a reader may use in a
        value of ``schema`` (see :func:`sub_schemas`)."""
        return tuple(
            ("".join(str(Field(p)) for p in path), sub, self.schema_id(sub))
            for path, sub in sub_schemas(schema)
        )

    def schema_id(self, schema: Any) -> int:
        key = "?" if schema is None else json.dumps(schema, sort_keys=True, default=repr)
        return self._schema_ids.setdefault(key, len(self._schema_ids))

    def _info(self, tool: Tool, latent_outputs: bool) -> _ToolInfo | None:
        parameters = []
        root = tool.parameters
        for name in tool.parameter_names:
            required = name in tool.required
            if name.startswith("_"):  # a plan cannot pass it: '_' keys are meta-properties
                if required:
                    return None
                continue
            schema = inline_refs(tool.parameter_schema(name), root)

            def fits(value: Any, tool: Tool = tool, name: str = name) -> bool:
                return not tool.validate_argument(name, value)

            values, valid = strategy_parts(schema)
            parameters.append(_Parameter(name, required, schema, values, _both(valid, fits)))
            pid = self.parameter_ids[(tool.name, name)] = self.schema_id(schema)
            self.parameters.setdefault(pid, parameters[-1])
        output = tool.output_schema
        outputs: tuple[tuple[str, Any, int], ...] = ()
        if output is not None and not tool.outcomes:
            outputs = self.readable(inline_refs(output))
        latent = None
        if tool.latent and latent_outputs:
            # a latent tool's output validation is its schema's: no second test
            schema = tool.output_schema if tool.output_schema is not None else True
            latent = _Parameter("_output", True, schema, *strategy_parts(schema))
        return _ToolInfo(tool, tuple(parameters), outputs, latent)

    def fitting_parameters(self, source: _Source) -> list[int]:
        """The parameter ids (schema ids) that a value at ``source`` may feed."""
        found = self._fitting.get(source.schema_id)
        if found is None:
            found = self._fitting[source.schema_id] = [
                pid
                for pid, parameter in self.parameters.items()
                if self.verdict(parameter, pid, source)
            ]
        return found

    def verdict(self, parameter: _Parameter, parameter_id: int, source: _Source) -> bool:
        """May the value at ``source`` feed ``parameter``?  (Cached by schema.)"""
        known = self._verdicts.setdefault(parameter_id, {})
        found = known.get(source.schema_id)
        if found is None:
            found = known[source.schema_id] = accepts(parameter.schema, source.schema)
        return found


def _path_text(kind: str, path: Iterable[str | int]) -> str:
    segments = tuple(Index(p) if isinstance(p, int) else Field(p) for p in path)
    return str(Reference(kind, segments))


@dataclass(frozen=True)
class GeneratedPlan:
    """A plan drawn by :func:`plans` (docs/testing.md).

    ``plan``: the calls as decoded JSON (a list of dicts), what a model writes;
    ``input``: the input document drawn from ``input_schema``, or None when
    :func:`plans` got no schema; ``tools``: the registry the plan was drawn for.
    ``check()`` checks it (it has no errors), and ``str()`` prints one call a line.
    """

    plan: list[dict[str, Any]]
    input: Any
    tools: Registry = field(repr=False)

    def check(self) -> CheckResult:
        """``obelisk.check(self.plan, self.tools, input=self.input)``."""
        return check(self.plan, self.tools, input=self.input)

    def to_json(self) -> str:
        """The plan as JSON text (``ensure_ascii=False``)."""
        return json.dumps(self.plan, ensure_ascii=False)

    def __str__(self) -> str:
        lines = ",\n ".join(json.dumps(call, ensure_ascii=False) for call in self.plan)
        text = f"[{lines}]"
        return text if self.input is None else f"{text}\ninput: {json.dumps(self.input)}"

    def __repr__(self) -> str:
        return f"GeneratedPlan(plan={self.plan!r}, input={self.input!r})"


def _merge_tags(mine: dict[int, int], tags: Iterable[tuple[int, int]]) -> dict[int, int] | None:
    merged = None
    for producer, alternative in tags:
        chosen = mine.get(producer) if merged is None else merged.get(producer)
        if chosen is None:
            if merged is None:
                merged = dict(mine)
            merged[producer] = alternative
        elif chosen != alternative:
            return None
    return mine if merged is None else merged


def _consistent(mine: dict[int, int], tags: tuple[tuple[int, int], ...]) -> bool:
    return all(mine.get(producer, alternative) == alternative for producer, alternative in tags)


class _Sources:
    """The paths calls may read so far, and for each parameter those that fit it."""

    def __init__(self, catalog: _Catalog) -> None:
        self.catalog = catalog
        self.all: list[_Source] = []
        self.fitting: dict[int, list[_Source]] = {pid: [] for pid in catalog.parameters}
        self.instanced = False  # some source is an instance's
        self.tagged = False  # some source depends on an alternative

    def add(self, source: _Source) -> None:
        self.all.append(source)
        self.instanced = self.instanced or source.instance is not None
        self.tagged = self.tagged or bool(source.tags)
        for pid in self.catalog.fitting_parameters(source):
            self.fitting[pid].append(source)

    def readable(
        self, found: list[_Source], instance: str | None, tags: dict[int, int]
    ) -> list[_Source]:
        """The sources of ``found`` a call of ``instance`` that depends on ``tags`` may read."""
        check_tags = self.tagged and bool(tags)
        if not self.instanced and not check_tags:
            return found
        if not check_tags:
            return [s for s in found if s.instance is None or s.instance == instance]
        return [
            s
            for s in found
            if (s.instance is None or s.instance == instance)
            and (not s.tags or _consistent(tags, s.tags))
        ]


@st.composite
def _plans(
    draw: st.DrawFn,
    catalog: _Catalog,
    input_schema: Any,
    min_calls: int,
    max_calls: int,
    branching: bool,
    instances: bool,
    dependency_order: bool,
) -> GeneratedPlan:
    document = draw(strategy_for(input_schema)) if input_schema is not None else None
    sources = _Sources(catalog)
    if input_schema is not None:
        for path, schema in sub_schemas(inline_refs(input_schema), depth=3):
            sources.add(
                _Source(_path_text("input", path), schema, catalog.schema_id(schema), None, ())
            )
    tapes = draw_tapes(draw, catalog.tape_size, min_calls, max_calls)
    positions = plan_positions(tapes, dependency_order)
    drawer = _CallDrawer(draw, catalog, sources, branching, instances)
    calls: list[dict[str, Any]] = [{} for _ in tapes]
    for k, tape in enumerate(tapes):
        calls[positions[k]] = drawer.call(k, Tape(tape), positions[k])
    return GeneratedPlan(calls, document, catalog.registry)


class _CallDrawer:
    """Draws the calls of one plan in drawing order, each from its tape: the tool,
    the instance, the arguments (literals or reads of what earlier calls write), the
    output path (with its alternatives), and the sources that path adds."""

    def __init__(
        self,
        draw: st.DrawFn,
        catalog: _Catalog,
        sources: _Sources,
        branching: bool,
        instances: bool,
    ) -> None:
        self.draw, self.catalog, self.sources = draw, catalog, sources
        self.branching, self.instances = branching, instances
        self.unknown_id = catalog.schema_id(None)

    def call(self, k: int, tape: Tape, position: int) -> dict[str, Any]:
        """Call ``k`` of the drawing order, which stands at ``position``."""
        tools = self.catalog.tools
        info = tools[tape.pick(len(tools))]
        instance = (None, "a", "b")[tape.pick(3)] if self.instances else None
        tags: dict[int, int] = {}
        call: dict[str, Any] = {"_tool": info.tool.name}
        for parameter in info.parameters:
            argument = self._argument(info.tool.name, parameter, tape, instance, tags)
            if argument is not None:
                call[parameter.name], tags = argument
        path = self._output_path(info, tape, k, f"†state.r{position}", instance, tags)
        if path is not None:
            call["_outputPath"] = path
        if instance is not None:
            call["_instance"] = instance
        if info.latent_outputs is not None:
            call["_output"] = info.latent_outputs.value(self.draw)
        return call

    def _argument(
        self,
        tool: str,
        parameter: _Parameter,
        tape: Tape,
        instance: str | None,
        tags: dict[int, int],
    ) -> tuple[Any, dict[int, int]] | None:
        """``(argument, the call's tags with what it reads)``, or ``None`` when an
        optional parameter is left out."""
        sources = self.sources
        include, read, choice, shape, second = (
            tape.pick(2),
            tape.pick(4),
            tape.pick(65536),
            tape.pick(8),
            tape.pick(65536),
        )
        if not parameter.required and not include:
            return None
        parameter_id = self.catalog.parameter_ids[(tool, parameter.name)]
        candidates = sources.readable(sources.fitting[parameter_id], instance, tags)
        if not candidates or read == 0:  # a literal: the simplest, where shrinking heads
            return parameter.literal(self.draw), tags
        chosen = candidates[choice % len(candidates)]
        if self.branching:
            combined = self._combined(chosen, candidates, shape, second, instance, tags)
            if combined is not None:
                return combined
        merged = _merge_tags(tags, chosen.tags)
        assert merged is not None  # candidates agree with the call's tags
        return chosen.text, merged

    def _combined(
        self,
        chosen: _Source,
        candidates: list[_Source],
        shape: int,
        second: int,
        instance: str | None,
        tags: dict[int, int],
    ) -> tuple[str, dict[int, int]] | None:
        """A fallback (``a || b``, either option may be missing) or a gate (``g && a``:
        every part must exist; the value is the last part), when ``shape`` draws one
        that can be written; else ``None``."""
        text = chosen.text
        if shape == 1 and len(candidates) > 1:
            other = candidates[second % len(candidates)]
            if other.text != text:
                return f"{text} || {other.text}", tags
        if shape == 2:
            gates = self.sources.readable(self.sources.all, instance, tags)
            gate = gates[second % len(gates)]
            merged = _merge_tags(tags, gate.tags + chosen.tags)
            if merged is not None and gate.text != text:
                return f"{gate.text} && {text}", merged
        return None

    def _output_path(
        self,
        info: _ToolInfo,
        tape: Tape,
        k: int,
        base: str,
        instance: str | None,
        tags: dict[int, int],
    ) -> str | None:
        """The ``_outputPath`` of call ``k`` (``None``: the result stays in the call's
        record), its paths added to the sources."""
        written, fan_out, error_arm = tape.pick(10), tape.pick(8), tape.pick(3)
        tool = info.tool
        if written == 9:
            return None
        if tool.outcomes and info.latent_outputs is not None:
            # _output is known: the path names the one outcome it is (ambiguous_output)
            arm = f"{base}_{error_arm % len(tool.outcomes)}"
            self._add(arm, None, self.unknown_id, instance, tags)
            return arm
        if tool.outcomes:
            arms = [f"{base}_{j}" for j in range(len(tool.outcomes))]
            for j, arm in enumerate(arms):
                self._add(arm, None, self.unknown_id, instance, {**tags, k: j})
            return " || ".join(arms)
        targets = [base, f"{base}_copy"] if fan_out == 7 else [base]
        # a latent call carrying _output writes one path (ambiguous_output)
        with_arm = self.branching and error_arm == 2 and info.latent_outputs is None
        for target in targets:
            self._add_outputs(info, target, instance, {**tags, k: 0} if with_arm else tags)
        path_text = " && ".join(targets)
        if not with_arm:
            return path_text
        arm = f"{base}_error"
        for suffix, schema, schema_id in self.catalog.error_outputs:
            self._add(arm + suffix, schema, schema_id, instance, {**tags, k: 1})
        return f"{path_text} || {arm}"

    def _add_outputs(
        self, info: _ToolInfo, target: str, instance: str | None, tags: dict[int, int]
    ) -> None:
        """The paths a call of ``info`` writing ``target`` lets later calls read."""
        if info.tool.output_schema is None:
            self._add(target, None, self.unknown_id, instance, tags)
            return
        for suffix, schema, schema_id in info.outputs:
            self._add(target + suffix, schema, schema_id, instance, tags)

    def _add(
        self, text: str, schema: Any, schema_id: int, instance: str | None, tags: dict[int, int]
    ) -> None:
        self.sources.add(_Source(text, schema, schema_id, instance, tuple(sorted(tags.items()))))


def _check_counts(min_calls: int, max_calls: int) -> None:
    for name, value in (("min_calls", min_calls), ("max_calls", max_calls)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"{name} must be an integer >= 0, got {value!r}")
    if min_calls > max_calls:
        raise UsageError(f"min_calls ({min_calls}) must not exceed max_calls ({max_calls})")


def plans(
    tools: ToolsLike,
    input_schema: Mapping[str, Any] | None = None,
    max_calls: int = 20,
    branching: bool = True,
    instances: bool = False,
    *,
    min_calls: int = 1,
    dependency_order: bool = False,
    latent_outputs: bool = True,
) -> st.SearchStrategy[GeneratedPlan]:
    """Valid, acyclic plans over ``tools``, as :class:`GeneratedPlan` (docs/testing.md).

    ``tools``: anything :meth:`obelisk.Registry.coerce` takes.  ``input_schema``:
    a JSON schema of the input; each plan then comes with an ``input`` drawn from it
    and may read the paths every such input has (its ``required`` properties).
    Each plan has ``min_calls`` to ``max_calls`` calls.

    Every argument fits its parameter's schema: a literal is drawn from that schema
    (and accepted by the tool's own validation), and a reference reads a path that
    another call writes, or the input holds, whose schema says every value there
    fits the parameter (``{"type": "integer"}`` feeds ``{"type": "number"}``; a
    parameter with further constraints takes only the very same schema; a producer
    with no output schema feeds only parameters that take anything).  Call ``k`` in
    drawing order writes ``†state.r<position>`` and reads only what calls drawn
    before it write, so there is no cycle; the calls are then put in a random order
    unless ``dependency_order`` (what streaming needs).

    ``branching``: draw error arms (``†state.r1 || †state.r1_error``), ``||``
    fallbacks and ``&&`` gates; a call never depends on two alternatives of one
    output, so no call is unreachable.  ``instances``: draw ``_instance`` ("a" or
    "b"); a call reads only what its instance sees.  ``latent_outputs``: latent
    tools' calls carry an ``_output`` drawn from their output schema.  Tools that
    declare ``outcomes`` get one alternative per outcome.

    Every plan passes ``obelisk.check(plan.plan, tools, input=plan.input)`` without
    errors (warnings such as ``write_conflict`` cannot arise either: every call
    writes paths of its own).  Raises :class:`~obelisk.errors.UsageError` for bad
    counts, a schema it cannot draw from, or a registry without a callable tool.
    """
    _check_counts(min_calls, max_calls)
    registry = Registry.coerce(tools)
    if input_schema is not None and not isinstance(input_schema, (Mapping, bool)):
        raise UsageError(f"input_schema must be a JSON schema (an object), not {input_schema!r}")
    catalog = _Catalog(registry, latent_outputs)
    return _plans(
        catalog, input_schema, min_calls, max_calls, branching, instances, dependency_order
    )
