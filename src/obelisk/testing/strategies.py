"""Hypothesis strategies for the reference language and for plans (docs/testing.md).

Expressions
    :func:`references`, :func:`expressions` draw valid expression texts, in every
    spelling the grammar allows; :func:`spellings` rewrites one text in those
    spellings.

Plans over a registry
    :func:`plans` draws valid, acyclic plans whose arguments fit the tools'
    schemas and whose references read what earlier calls write (a
    :class:`GeneratedPlan`); :func:`invalid_plans` draws near misses, each tagged
    with the diagnostic code it must produce (an :class:`InvalidPlan`);
    :func:`inputs` and :func:`tool_outputs` draw documents that fit a schema;
    :func:`outcome_assignments` draws which alternative of its output path each
    call writes (an :class:`OutcomeAssignment`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from obelisk.errors import UsageError
from obelisk.grammar import (
    Alternatives,
    Conjunction,
    Expression,
    Field,
    Index,
    Reference,
    Segment,
    Wildcard,
    parse_expression,
)
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.testing.schemas import (
    accepts,
    inline_refs,
    known_types,
    strategy_for,
    sub_schemas,
)

__all__ = [
    "ERROR_ARM_SCHEMA",
    "INVALID_CODES",
    "GeneratedPlan",
    "InvalidPlan",
    "OutcomeAssignment",
    "expressions",
    "inputs",
    "invalid_plans",
    "outcome_assignments",
    "plans",
    "references",
    "spellings",
    "tool_outputs",
]

_NAME = re.compile(r"[^\W\d][\w\-]*")
_KINDS = ("state", "input", "data", "search-results", "doc_2")

# -- expressions ---------------------------------------------------------------------

_name_head = st.one_of(
    st.sampled_from("abcxyzABC_"),
    st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "No"), codec="utf-8"),
)
_name_tail = st.one_of(
    st.sampled_from("abz_-019"),
    st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No"), codec="utf-8"),
)
_names = st.one_of(
    st.sampled_from(["a", "user", "items", "x_1", "first-name", "é", "ñandú", "_", "a-", "²"]),
    st.builds(
        lambda head, tail: head + "".join(tail), _name_head, st.lists(_name_tail, max_size=6)
    ),
).filter(_NAME.fullmatch)
_keys = st.one_of(
    _names,
    st.text(
        alphabet=st.one_of(
            st.sampled_from(list(" \"'\\.[]*|&†\t\n\r-_09")), st.characters(codec="utf-8")
        ),
        max_size=10,
    ),
)


def _segment_nodes(*, wildcards: bool, quoted: bool) -> st.SearchStrategy[Segment]:
    options: list[st.SearchStrategy[Segment]] = [
        (_keys if quoted else _names).map(Field),
        st.one_of(st.integers(-3, 12), st.integers(-(10**12), 10**12)).map(Index),
    ]
    if wildcards:
        options.append(st.just(Wildcard()))
    return st.one_of(*options)


def _kind_names(kinds: Sequence[str] | None) -> st.SearchStrategy[str]:
    if kinds is None:
        return st.one_of(st.sampled_from(_KINDS), _names)
    for kind in kinds:
        if not isinstance(kind, str) or not _NAME.fullmatch(kind):
            raise UsageError(f"a document kind must be a name such as 'state', not {kind!r}")
    if not kinds:
        raise UsageError("kinds must name at least one document kind")
    return st.sampled_from(list(kinds))


def _base_references(paths: Iterable[str]) -> list[Reference]:
    found = []
    for text in paths:
        node = parse_expression(text)
        if not isinstance(node, Reference):
            raise UsageError(f"paths must be plain references such as '†state.user', not {text!r}")
        found.append(node)
    if not found:
        raise UsageError("paths must hold at least one reference")
    return found


def _reference_nodes(
    kinds: Sequence[str] | None,
    paths: Iterable[str] | None,
    wildcards: bool,
    quoted: bool,
    max_segments: int,
) -> st.SearchStrategy[Reference]:
    segment = _segment_nodes(wildcards=wildcards, quoted=quoted)
    if paths is not None:
        bases = _base_references(paths)
        return st.builds(
            lambda base, more: Reference(base.kind, base.segments + tuple(more)),
            st.sampled_from(bases),
            st.lists(segment, max_size=max_segments).map(tuple) if max_segments else st.just(()),
        )
    return st.builds(
        Reference, _kind_names(kinds), st.lists(segment, max_size=max_segments).map(tuple)
    )


def _expression_nodes(
    refs: st.SearchStrategy[Reference], max_parts: int
) -> st.SearchStrategy[Expression]:
    if max_parts < 2:
        return refs
    conjunctions = st.lists(refs, min_size=2, max_size=max_parts).map(
        lambda parts: Conjunction(tuple(parts))
    )
    alternatives = st.lists(st.one_of(refs, conjunctions), min_size=2, max_size=max_parts).map(
        lambda options: Alternatives(tuple(options))
    )
    return st.one_of(refs, conjunctions, alternatives)


def _single_quoted(name: str, ensure_ascii: bool, raw_double_quotes: bool) -> str:
    body = json.dumps(name, ensure_ascii=ensure_ascii)[1:-1]
    if raw_double_quotes:
        body = body.replace('\\"', '"')
    return "['" + body.replace("'", "\\'") + "']"


@st.composite
def _spell_segment(draw: st.DrawFn, segment: Segment, plain: bool) -> str:
    if isinstance(segment, Wildcard):
        return "[*]"
    if isinstance(segment, Index):
        return draw(st.sampled_from([f".{segment.index}", f"[{segment.index}]"]))
    name = segment.name
    choices = []
    if _NAME.fullmatch(name):
        choices.append("." + name)
    if not plain or not choices:
        ascii_ = draw(st.booleans())
        choices.append("[" + json.dumps(name, ensure_ascii=ascii_) + "]")
        choices.append(_single_quoted(name, ascii_, draw(st.booleans())))
    return draw(st.sampled_from(choices))


_space = st.sampled_from(["", "", " ", "\t", "  ", " \t"])


@st.composite
def _spell(draw: st.DrawFn, node: Expression, plain: bool) -> str:
    if isinstance(node, Reference):
        return "†" + node.kind + "".join(draw(_spell_segment(s, plain)) for s in node.segments)
    parts: tuple[Any, ...]
    if isinstance(node, Conjunction):
        parts, operator = node.parts, "&&"
    else:
        parts, operator = node.options, "||"
    text = draw(_spell(parts[0], plain))
    for part in parts[1:]:
        text += draw(_space) + operator + draw(_space) + draw(_spell(part, plain))
    return text


def spellings(expression: str | Expression, *, plain: bool = False) -> st.SearchStrategy[str]:
    """Every text that parses to the same expression as ``expression``.

    ``.2`` or ``[2]``; ``.name``, ``["name"]`` or ``['name']`` with or without
    ``\\u`` escapes; spaces and tabs around ``||`` and ``&&`` (docs/language.md).
    ``plain=True`` keeps to dotted names where the name allows one.  Raises
    :class:`~obelisk.errors.ReferenceSyntaxError` for a text that does not parse.
    """
    node = parse_expression(expression) if isinstance(expression, str) else expression
    if not isinstance(node, (Reference, Conjunction, Alternatives)):
        raise UsageError(f"{expression!r} is an escaped literal, not an expression")
    return _spell(node, plain)


def references(
    *,
    kinds: Sequence[str] | None = None,
    paths: Iterable[str] | None = None,
    wildcards: bool = True,
    quoted: bool = True,
    max_segments: int = 4,
) -> st.SearchStrategy[str]:
    """Texts of single references such as ``†state.items[0]["a b"]`` (docs/language.md).

    ``kinds``: the document kinds to draw (default: ``state``, ``input``, data
    kinds and random names).  ``paths``: references to start from (``["†state.user",
    "†input.id"]``); up to ``max_segments`` more segments are added to them
    (``max_segments=0``: exactly these paths).  ``wildcards``: allow ``[*]``
    (input position only).  ``quoted``: allow keys that are not names, quoted.
    Every text parses with :func:`obelisk.parse_expression`.
    """
    nodes = _reference_nodes(kinds, paths, wildcards, quoted, max_segments)
    return nodes.flatmap(lambda node: _spell(node, not quoted))


def expressions(
    *,
    kinds: Sequence[str] | None = None,
    paths: Iterable[str] | None = None,
    wildcards: bool = True,
    quoted: bool = True,
    max_segments: int = 4,
    max_parts: int = 3,
) -> st.SearchStrategy[str]:
    """Texts of expressions: a reference, a ``&&`` gate or fan-out, or ``||``
    alternatives of references and gates, with up to ``max_parts`` parts each.

    Arguments as for :func:`references`; ``wildcards=False`` gives texts valid in
    output position too.  Every text parses with :func:`obelisk.parse_expression`.
    """
    refs = _reference_nodes(kinds, paths, wildcards, quoted, max_segments)
    return _expression_nodes(refs, max_parts).flatmap(lambda node: _spell(node, not quoted))


# -- documents ----------------------------------------------------------------------


def inputs(input_schema: Mapping[str, Any] | bool) -> st.SearchStrategy[Any]:
    """Input documents that fit ``input_schema`` (a JSON schema; local ``$ref`` allowed).

    Raises :class:`~obelisk.errors.UsageError` for an invalid, remote-``$ref`` or
    recursive schema.
    """
    return strategy_for(input_schema)


def tool_outputs(tool: Tool) -> st.SearchStrategy[Any]:
    """Results that fit ``tool``'s output schema (any JSON when it has none).

    Values are also checked with ``tool.validate_output`` (pydantic for function
    tools), so each one is a result the tool may return.
    """
    if not isinstance(tool, Tool):
        raise UsageError(f"tool_outputs takes an obelisk.Tool, not {tool!r}")
    schema = tool.output_schema if tool.output_schema is not None else True
    return strategy_for(schema, lambda value: not tool.validate_output(value))


# -- plans ------------------------------------------------------------------------------

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


@dataclass(frozen=True)
class _Parameter:
    name: str
    required: bool
    schema: Any  # refs inlined
    literals: st.SearchStrategy[Any]


@dataclass(frozen=True)
class _ToolInfo:
    tool: Tool
    parameters: tuple[_Parameter, ...]
    outputs: tuple[tuple[str, Any, int], ...]  # (path text, schema, schema id) to read
    latent_outputs: st.SearchStrategy[Any] | None


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

            literals = strategy_for(schema, fits)
            parameters.append(_Parameter(name, required, schema, literals))
            pid = self.parameter_ids[(tool.name, name)] = self.schema_id(schema)
            self.parameters.setdefault(pid, parameters[-1])
        output = tool.output_schema
        outputs: tuple[tuple[str, Any, int], ...] = ()
        if output is not None and not tool.outcomes:
            outputs = self.readable(inline_refs(output))
        latent = None
        if tool.latent and latent_outputs:
            latent = tool_outputs(tool)
        return _ToolInfo(tool, tuple(parameters), outputs, latent)

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
        self.simple = True  # no instance and no alternative yet: every source is readable

    def add(self, source: _Source) -> None:
        self.all.append(source)
        if source.instance is not None or source.tags:
            self.simple = False
        for pid, parameter in self.catalog.parameters.items():
            if self.catalog.verdict(parameter, pid, source):
                self.fitting[pid].append(source)

    def readable(
        self, found: list[_Source], instance: str | None, tags: dict[int, int]
    ) -> list[_Source]:
        if self.simple:
            return found
        return [
            s
            for s in found
            if (s.instance is None or s.instance == instance)
            and (not s.tags or _consistent(tags, s.tags))
        ]


class _Tape:
    """Decisions read from one drawn byte string: ``pick(n)`` is a byte modulo
    ``n``.  One Hypothesis choice per call instead of one per decision, and zero
    bytes, where the shrinker heads, mean the first option of every decision."""

    __slots__ = ("at", "data")

    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data = data
        self.at = at

    def pick(self, n: int) -> int:
        if n <= 1:
            return 0
        at = self.at
        self.at += 2 if n > 256 else 1
        value = int.from_bytes(self.data[at : self.at], "big") if at < len(self.data) else 0
        return value % n


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
    size = catalog.tape_size
    # One byte string per call holds its decisions: a list of them, so that the
    # shrinker can delete calls one by one (and zero bytes are the simplest choices).
    if min_calls == max_calls:  # no call can be dropped: one byte string, one choice
        whole = draw(st.binary(min_size=size * max_calls, max_size=size * max_calls))
        tapes = [whole[k * size : (k + 1) * size] for k in range(max_calls)]
    else:
        tapes = draw(
            st.lists(
                st.binary(min_size=size, max_size=size), min_size=min_calls, max_size=max_calls
            )
        )
    count = len(tapes)
    if dependency_order or count < 2:
        positions = list(range(count))
    else:  # sort keys (the last byte of each tape); all zero keeps the drawing order
        order = sorted(range(count), key=lambda k: (tapes[k][-1], k))
        positions = [0] * count
        for position, k in enumerate(order):
            positions[k] = position
    calls: list[dict[str, Any]] = [{} for _ in range(count)]
    tools = catalog.tools
    unknown_id = catalog.schema_id(None)
    for k in range(count):
        tape = _Tape(tapes[k])
        info = tools[tape.pick(len(tools))]
        tool = info.tool
        instance = (None, "a", "b")[tape.pick(3)] if instances else None
        tags: dict[int, int] = {}
        call: dict[str, Any] = {"_tool": tool.name}
        for parameter in info.parameters:
            include, read, choice, shape, second = (
                tape.pick(2),
                tape.pick(4),
                tape.pick(65536),
                tape.pick(8),
                tape.pick(65536),
            )
            if not parameter.required and not include:
                continue
            parameter_id = catalog.parameter_ids[(tool.name, parameter.name)]
            candidates = sources.readable(sources.fitting[parameter_id], instance, tags)
            if not candidates or read == 0:  # a literal: the simplest, where shrinking heads
                call[parameter.name] = _escape(draw(parameter.literals))
                continue
            chosen = candidates[choice % len(candidates)]
            text = chosen.text
            if not branching:
                shape = 0
            if shape == 1 and len(candidates) > 1:  # a fallback: either option may be missing
                other = candidates[second % len(candidates)]
                if other.text != text:
                    call[parameter.name] = f"{text} || {other.text}"
                    continue
            if shape == 2:  # a gate: every part must exist; the value is the last part
                gates = sources.readable(sources.all, instance, tags)
                gate = gates[second % len(gates)]
                merged = _merge_tags(tags, gate.tags + chosen.tags)
                if merged is not None and gate.text != text:
                    tags = merged
                    call[parameter.name] = f"{gate.text} && {text}"
                    continue
            merged = _merge_tags(tags, chosen.tags)
            assert merged is not None  # candidates agree with the call's tags
            tags = merged
            call[parameter.name] = text
        written, fan_out, error_arm = tape.pick(10), tape.pick(8), tape.pick(3)
        position = positions[k]
        base = f"†state.r{position}"
        if written == 9:
            pass  # no output path: the result stays in the call's record
        elif tool.outcomes:
            arms = [f"{base}_{j}" for j in range(len(tool.outcomes))]
            call["_outputPath"] = " || ".join(arms)
            for j, arm in enumerate(arms):
                arm_tags = tuple(sorted({**tags, k: j}.items()))
                sources.add(_Source(arm, None, unknown_id, instance, arm_tags))
        else:
            targets = [base, f"{base}_copy"] if fan_out == 7 else [base]
            with_arm = branching and error_arm == 2
            main_tags = tuple(sorted({**tags, k: 0}.items() if with_arm else tags.items()))
            for target in targets:
                if tool.output_schema is None:
                    sources.add(_Source(target, None, unknown_id, instance, main_tags))
                    continue
                for suffix, schema, schema_id in info.outputs:
                    sources.add(_Source(target + suffix, schema, schema_id, instance, main_tags))
            path_text = " && ".join(targets)
            if with_arm:
                arm = f"{base}_error"
                path_text += f" || {arm}"
                arm_tags = tuple(sorted({**tags, k: 1}.items()))
                for suffix, schema, schema_id in catalog.error_outputs:
                    sources.add(_Source(arm + suffix, schema, schema_id, instance, arm_tags))
            call["_outputPath"] = path_text
        if instance is not None:
            call["_instance"] = instance
        if info.latent_outputs is not None:
            call["_output"] = draw(info.latent_outputs)
        calls[position] = call
    return GeneratedPlan(calls, document, catalog.registry)


def _check_counts(min_calls: int, max_calls: int) -> None:
    for name, value in (("min_calls", min_calls), ("max_calls", max_calls)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"{name} must be an integer >= 0, got {value!r}")
    if min_calls > max_calls:
        raise UsageError(f"min_calls ({min_calls}) must not exceed max_calls ({max_calls})")


def plans(
    tools: Any,
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


# -- invalid plans ----------------------------------------------------------------------

#: The diagnostic codes :func:`invalid_plans` can produce.
INVALID_CODES = (
    "json_syntax",
    "plan_shape",
    "reference_syntax",
    "unknown_tool",
    "invalid_argument",
    "missing_argument",
    "invalid_output",
    "outcome_mismatch",
    "unresolved_reference",
    "readonly_target",
    "dependency_cycle",
    "type_mismatch",
)


@dataclass(frozen=True)
class InvalidPlan:
    """A near-miss plan drawn by :func:`invalid_plans` (docs/testing.md).

    ``plan``: decoded JSON (a list of calls, or a plan object for some
    ``plan_shape`` cases), or JSON text for ``json_syntax``; ``input``: as for
    :class:`GeneratedPlan`; ``code``: the one diagnostic code ``check`` reports as
    an error; ``tools``: the registry.
    """

    plan: Any
    input: Any
    code: str
    tools: Registry = field(repr=False)

    def check(self) -> CheckResult:
        """``obelisk.check(self.plan, self.tools, input=self.input)``."""
        return check(self.plan, self.tools, input=self.input)


_WRONG_VALUES: dict[str, Any] = {
    "null": None,
    "boolean": True,
    "integer": 7,
    "number": 0.5,
    "string": "not this",
    "array": [1, "x"],
    "object": {"not": "this"},
}
_BAD_EXPRESSIONS = ("†state..x", "†state.a | †state.b", "†state[]", "†state.*", "†state.a b")


def _fresh_call(draw: st.DrawFn, info: _ToolInfo, path: str | None) -> dict[str, Any]:
    call: dict[str, Any] = {"_tool": info.tool.name}
    for parameter in info.parameters:
        if parameter.required:
            call[parameter.name] = _escape(draw(parameter.literals))
    if path is not None:
        if info.tool.outcomes:
            path = " || ".join(f"{path}_{j}" for j in range(len(info.tool.outcomes)))
        call["_outputPath"] = path
    if info.latent_outputs is not None:
        call["_output"] = draw(info.latent_outputs)
    return call


def _wrong_value(parameter: _Parameter, tool: Tool) -> Any:
    for value in _WRONG_VALUES.values():
        if tool.validate_argument(parameter.name, value):
            return _escape(value)
    return None


class _Mutator:
    """Which codes a registry allows, and how to make each one."""

    def __init__(self, catalog: _Catalog) -> None:
        self.catalog = catalog
        tools = catalog.tools
        self.closed = [i for i in tools if not i.tool.accepts_extra]
        self.with_required = [i for i in tools if any(p.required for p in i.parameters)]
        self.wrong: list[tuple[_ToolInfo, _Parameter, Any]] = []
        for info in tools:
            for parameter in info.parameters:
                value = _wrong_value(parameter, info.tool)
                if value is not None:
                    self.wrong.append((info, parameter, value))
        self.with_parameter = [i for i in tools if i.parameters]
        self.plain = [i for i in tools if not i.tool.outcomes]
        self.latent_typed = [i for i in tools if i.tool.latent and i.tool.output_schema is not None]
        self.with_outcomes = [i for i in tools if i.tool.outcomes]
        self.object_free = [
            (i, p)
            for i in tools
            for p in i.parameters
            if (types := known_types(p.schema)) is not None and "object" not in types
        ]

    def available(self) -> list[str]:
        possible = {
            "json_syntax": True,
            "plan_shape": True,
            "reference_syntax": True,
            "unknown_tool": True,
            "invalid_argument": bool(self.closed or self.wrong),
            "missing_argument": bool(self.with_required),
            "invalid_output": bool(self.latent_typed),
            "outcome_mismatch": bool(self.with_outcomes),
            "unresolved_reference": bool(self.with_parameter),
            "readonly_target": True,
            "dependency_cycle": bool(self.with_parameter),
            "type_mismatch": bool(self.object_free and self.plain),
        }
        return [code for code in INVALID_CODES if possible[code]]

    def mutate(self, draw: st.DrawFn, code: str, calls: list[Any]) -> Any:
        def pick(items: Sequence[Any]) -> Any:
            return items[draw(st.integers(0, len(items) - 1))]

        at = draw(st.integers(0, len(calls)))  # where a new call goes
        if code == "json_syntax":
            text = json.dumps(calls, ensure_ascii=False)
            return pick([text[:-1], text[:-1] + ",]", text.replace("[", "[,", 1)])
        if code == "plan_shape":
            choice = draw(st.integers(0, 2))
            if choice == 0:
                return {"calls": calls, "version": 2}
            if choice == 1:
                return {"calls": calls, "mode": "fast"}
            calls.insert(at, pick([42, "call", None, []]))
            return calls
        if code == "reference_syntax":
            info = pick(self.catalog.tools)
            call = _fresh_call(draw, info, None)
            call["_outputPath"] = pick(["state.out", "†state.out[*]", "††state.out", "†state..x"])
            calls.insert(at, call)
            return calls
        if code == "unknown_tool":
            info = pick(self.catalog.tools)
            call = _fresh_call(draw, info, None)
            names = self.catalog.registry
            name = info.tool.name + "_v2"
            while name in names:
                name += "_"
            call["_tool"] = name
            calls.insert(at, call)
            return calls
        if code == "invalid_argument":
            if self.wrong and (not self.closed or draw(st.booleans())):
                info, parameter, value = pick(self.wrong)
                call = _fresh_call(draw, info, None)
                call[parameter.name] = value
            else:
                info = pick(self.closed)
                call = _fresh_call(draw, info, None)
                name = "unexpected"
                while name in info.tool.parameter_names:
                    name += "_"
                call[name] = 1
            calls.insert(at, call)
            return calls
        if code == "missing_argument":
            info = pick(self.with_required)
            call = _fresh_call(draw, info, None)
            del call[pick([p.name for p in info.parameters if p.required])]
            calls.insert(at, call)
            return calls
        if code == "invalid_output":
            info = pick(self.latent_typed)
            call = _fresh_call(draw, info, None)
            types = known_types(inline_refs(info.tool.output_schema))
            value = next((v for v in _WRONG_VALUES.values() if info.tool.validate_output(v)), None)
            if value is None or types is None:
                value = _WRONG_VALUES["string"] if "string" not in (types or ()) else 7
            call["_output"] = value
            calls.insert(at, call)
            return calls
        if code == "outcome_mismatch":
            info = pick(self.with_outcomes)
            call = _fresh_call(draw, info, None)
            count = len(info.tool.outcomes)
            wrong = pick([n for n in (1, count + 1) if n != count])
            call["_outputPath"] = " || ".join(f"†state.mismatch_{j}" for j in range(wrong))
            calls.insert(at, call)
            return calls
        if code == "unresolved_reference":
            info = pick(self.with_parameter)
            call = _fresh_call(draw, info, None)
            call[pick(info.parameters).name] = pick(
                ["†state.never_written", "†state.never_written.x", "†data.nowhere"]
            )
            calls.insert(at, call)
            return calls
        if code == "readonly_target":
            info = pick(self.catalog.tools)
            call = _fresh_call(draw, info, "†input.written")
            calls.insert(at, call)
            return calls
        if code == "dependency_cycle":
            first, second = pick(self.with_parameter), pick(self.with_parameter)
            one = _fresh_call(draw, first, "†state.cycle_a")
            two = _fresh_call(draw, second, "†state.cycle_b")
            # nested in a list, a reference is neither validated nor type-checked
            one[pick(first.parameters).name] = ["†state.cycle_b" + self._arm(second)]
            two[pick(second.parameters).name] = ["†state.cycle_a" + self._arm(first)]
            calls.insert(at, one)
            calls.insert(draw(st.integers(0, len(calls))), two)
            return calls
        if code == "type_mismatch":
            producer = pick(self.plain)
            info, parameter = pick(self.object_free)
            made = _fresh_call(draw, producer, "†state.made || †state.made_error")
            reader = _fresh_call(draw, info, None)
            reader[parameter.name] = "†state.made_error"  # the error arm is an object
            calls.insert(at, made)
            calls.insert(draw(st.integers(0, len(calls))), reader)
            return calls
        raise UsageError(f"invalid_plans cannot produce {code!r}")  # pragma: no cover

    @staticmethod
    def _arm(info: _ToolInfo) -> str:
        return "_0" if info.tool.outcomes else ""


@st.composite
def _invalid_plans(
    draw: st.DrawFn,
    catalog: _Catalog,
    mutator: _Mutator,
    codes: list[str],
    input_schema: Any,
    max_calls: int,
) -> InvalidPlan:
    base = draw(_plans(catalog, input_schema, 0, max_calls, True, False, False))
    code = draw(st.sampled_from(codes))
    plan = mutator.mutate(draw, code, list(base.plan))
    return InvalidPlan(plan, base.input, code, catalog.registry)


def invalid_plans(
    tools: Any,
    input_schema: Mapping[str, Any] | None = None,
    max_calls: int = 5,
    *,
    codes: Iterable[str] | None = None,
) -> st.SearchStrategy[InvalidPlan]:
    """Near-miss plans, each an :class:`InvalidPlan` tagged with the one error code
    ``obelisk.check`` reports for it (docs/testing.md, docs/diagnostics.md).

    Each is a valid plan from :func:`plans` (up to ``max_calls`` calls) with one
    mistake added, where the registry allows it: broken JSON text
    (``json_syntax``), a plan object with a bad key or a call that is not an object
    (``plan_shape``), a bad output path (``reference_syntax``), a misspelt tool
    (``unknown_tool``), a wrong-typed or unexpected argument (``invalid_argument``),
    a dropped required argument (``missing_argument``), a latent ``_output`` of
    the wrong type (``invalid_output``), the wrong number of alternatives for a
    tool with outcomes (``outcome_mismatch``), a read of a path nothing writes
    (``unresolved_reference``), a write to ``†input`` (``readonly_target``), two
    calls reading each other (``dependency_cycle``), an error arm (an object) fed
    to a parameter that takes no object (``type_mismatch``).

    ``codes`` restricts the codes drawn (default: every one in
    :data:`INVALID_CODES` that the registry allows).  Raises
    :class:`~obelisk.errors.UsageError` for a code it cannot produce with these tools.
    """
    _check_counts(0, max_calls)
    registry = Registry.coerce(tools)
    catalog = _Catalog(registry, True)
    mutator = _Mutator(catalog)
    possible = mutator.available()
    chosen = list(possible if codes is None else codes)
    for code in chosen:
        if code not in INVALID_CODES:
            raise UsageError(f"invalid_plans knows no code {code!r}; it makes {INVALID_CODES}")
        if code not in possible:
            raise UsageError(
                f"invalid_plans cannot make {code!r} with the tools {registry.names()}"
            )
    if not chosen:
        raise UsageError("codes must name at least one diagnostic code")
    return _invalid_plans(catalog, mutator, chosen, input_schema, max_calls)


# -- outcome assignments ----------------------------------------------------------------


class OutcomeAssignment(dict[int, int]):
    """Which alternative each branching call writes: ``{call index: alternative}``.

    A call is in it when its ``_outputPath`` has two or more alternatives and it
    carries no ``_output`` (which always goes to the first).  The value counts
    from 0 in the order of the path (``†state.ok || †state.error``: 0 writes
    ``†state.ok``, 1 writes ``†state.error``).  For a tool that declares no
    ``outcomes``, the last alternative is its error arm: the tool raised.
    ``alternatives`` maps the same calls to how many alternatives they have.
    """

    alternatives: dict[int, int]

    def __init__(self, choices: Mapping[int, int], alternatives: Mapping[int, int]) -> None:
        super().__init__(choices)
        self.alternatives = dict(alternatives)


def outcome_assignments(plan: Any) -> st.SearchStrategy[OutcomeAssignment]:
    """Branch choices for ``plan`` (a :class:`GeneratedPlan`, a ``Plan``, JSON text
    or decoded JSON), as an :class:`OutcomeAssignment` (docs/testing.md).

    Hand one to :class:`~obelisk.testing.FakeTools` (``choices=``) to make each
    call write the alternative drawn.  Shrinks toward the first alternative of
    every call.  Raises :class:`~obelisk.errors.PlanError` for a plan that does not
    parse.
    """
    if isinstance(plan, (GeneratedPlan, InvalidPlan)):
        plan = plan.plan
    parsed = plan if isinstance(plan, Plan) else parse_plan(plan)
    counts = {
        call.index: len(call.alternatives)
        for call in parsed.calls
        if len(call.alternatives) > 1 and not call.has_output
    }
    drawn = st.fixed_dictionaries({index: st.integers(0, n - 1) for index, n in counts.items()})
    return drawn.map(lambda choices: OutcomeAssignment(choices, counts))
