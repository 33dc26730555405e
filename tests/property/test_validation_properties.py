"""A tool's compiled arguments validator agrees with one parameter at a time.

``Tool.validate_arguments`` validates a function tool's whole arguments object with one
compiled pydantic-core validator, and ``Tool.validate_literals`` the given arguments of
many calls in one go (docs/tools.md, "How arguments are validated").  For random
argument dicts over tools with mixed annotations, defaults, ``**kwargs``, a run context,
names bound by ``functools.partial``, recursive models and JSON-schema tools, both must
give what the oracle below gives: each parameter validated by its own ``TypeAdapter``
(or its own jsonschema validator), problems in the documented order, the same values
(the same objects where a value passes through as is).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from obelisk import Context, Tool
from obelisk.errors import ArgumentProblem, ArgumentValidationError
from obelisk.interpreter.tools.validation import pydantic_problems, schema_problems


class Address(BaseModel):
    street: str
    zip: int | None = None


class Tree(BaseModel):
    value: int
    kids: list[Tree] = []


class Box(TypedDict, total=False):
    width: float
    label: str


def basic(a: int, b: str = "x") -> int:
    return a


def mixed(
    name: str,
    count: int,
    ratio: float,
    tags: list[str],
    address: Address,
    box: Box,
    note: str | None = None,
    anything: Any = None,
    small: Annotated[int, Field(ge=0, le=10)] = 0,
) -> int:
    return 0


def loose(a: int, b, **rest):  # type: ignore[no-untyped-def]
    return a


async def typed_rest(a: float = 1.0, **rest: int) -> int:
    return 0


def hidden(ctx: Context[int], a: int, b: int, items: list[Any] | None = None, **rest: Any) -> int:
    return a


def trees(
    tree: Tree,
    forest: list[Tree] | None = None,
    pair: tuple[Address, Address] | None = None,
    home: Address | None = None,
) -> int:
    return 0


SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1},
        "where": {"$ref": "#/$defs/Place"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["query"],
    "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


@dataclass
class Oracle:
    """One parameter at a time, each with its own validator."""

    tool_name: str
    names: tuple[str, ...]
    required: tuple[str, ...]
    check: dict[str, Callable[[Any], tuple[list[ArgumentProblem], Any]]]
    extra: Callable[[Any], tuple[list[ArgumentProblem], Any]] | None  # None: extras refused
    hidden: frozenset[str] = field(default=frozenset())

    def one(self, name: str, value: Any) -> tuple[list[ArgumentProblem], Any]:
        check = self.check.get(name) or (None if name in self.hidden else self.extra)
        if check is None:
            close = difflib.get_close_matches(name, self.names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            message = f"tool {self.tool_name!r} takes no argument {name!r}{hint}"
            return [ArgumentProblem((), message)], value
        return check(value)

    def arguments(self, args: dict[str, Any]) -> tuple[list[ArgumentProblem], dict[str, Any]]:
        order = [n for n in self.names if n in args] + [n for n in args if n not in self.names]
        problems: list[ArgumentProblem] = []
        values: dict[str, Any] = {}
        for name in order:
            found, values[name] = self.one(name, args[name])
            problems += [ArgumentProblem((name, *p.loc), p.message) for p in found]
        problems += [
            ArgumentProblem((n,), "missing required argument")
            for n in self.required
            if n not in args
        ]
        return problems, values

    def literals(self, given: dict[str, Any]) -> list[ArgumentProblem]:
        return [
            ArgumentProblem((name, *p.loc), p.message)
            for name, value in given.items()
            for p in self.one(name, value)[0]
        ]


def by_adapter(annotation: Any) -> Callable[[Any], tuple[list[ArgumentProblem], Any]]:
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)

    def check(value: Any) -> tuple[list[ArgumentProblem], Any]:
        try:
            return [], adapter.validate_python(value)
        except ValidationError as exc:
            return pydantic_problems(exc), value

    return check


def passes(value: Any) -> tuple[list[ArgumentProblem], Any]:
    return [], value


def function_oracle(fn: Callable[..., Any], name: str) -> Oracle:
    bound = frozenset(fn.keywords) if isinstance(fn, functools.partial) else frozenset()
    target = fn.func if isinstance(fn, functools.partial) else fn
    hints = typing.get_type_hints(target, include_extras=True)
    names, required, checks = [], [], {}
    extra = None
    hidden = set(bound)
    for param in inspect.signature(target).parameters.values():
        annotation = hints.get(param.name, Any)
        if typing.get_origin(annotation) is Context:
            hidden.add(param.name)
        elif param.kind is param.VAR_KEYWORD:
            extra = passes if annotation is Any else by_adapter(annotation)
        elif param.name not in bound:
            names.append(param.name)
            checks[param.name] = by_adapter(annotation)
            if param.default is param.empty:
                required.append(param.name)
    return Oracle(name, tuple(names), tuple(required), checks, extra, frozenset(hidden))


def schema_oracle(name: str, parameters: dict[str, Any]) -> Oracle:
    root = jsonschema.Draft202012Validator(parameters)

    def by_schema(sub: Any) -> Callable[[Any], tuple[list[ArgumentProblem], Any]]:
        validator = root.evolve(schema=sub)
        return lambda value: (schema_problems(validator, value), value)

    properties = parameters["properties"]
    extra_schema = parameters.get("additionalProperties")
    extra = None if extra_schema is False else passes if extra_schema is None else None
    if isinstance(extra_schema, dict):
        extra = by_schema(extra_schema)
    checks = {n: by_schema(sub) for n, sub in properties.items()}
    return Oracle(name, tuple(properties), tuple(parameters.get("required", ())), checks, extra)


def _cases() -> list[tuple[Tool, Oracle]]:
    cases = []
    for fn in (basic, mixed, loose, typed_rest, functools.partial(hidden, b=2), trees):
        name = getattr(fn, "__name__", "hidden")
        cases.append((Tool.from_function(fn, name=name), function_oracle(fn, name)))
        cases.append((Tool.from_function(fn, name=name, _deferred=True), function_oracle(fn, name)))
    closed = dict(SCHEMA, additionalProperties=False)
    typed_extras = dict(SCHEMA, additionalProperties={"type": "number"})
    for name, parameters in (("open", SCHEMA), ("closed", closed), ("numbers", typed_extras)):
        spec = {"name": name, "parameters": parameters}
        cases.append((Tool.from_schema(spec), schema_oracle(name, parameters)))
    return cases


CASES = _cases()

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "x", "3", "2.5", "true", "abc"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["street", "zip", "value", "kids", "width", "label", "city", "q"]),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=6,
)
EXTRA_NAMES = ["nme", "limt", "zzz", "ctx", "b", "rest"]
_ADDRESS = {"street": "Main 1", "zip": "1000"}
_TREE = {"value": "1", "kids": [{"value": 2, "kids": []}]}
PLAUSIBLE: dict[str, list[Any]] = {  # values some parameter takes, so that calls often pass
    "a": [1, "2", 2.0],
    "b": ["y", 3],
    "name": ["n"],
    "count": [3, "4"],
    "ratio": [0.5, 1, "2.5"],
    "tags": [[], ["t"]],
    "address": [_ADDRESS, {"street": "s"}],
    "box": [{}, {"width": 1, "label": "l"}],
    "note": [None, "n"],
    "anything": [[1, {"k": []}], {"k": [1]}],
    "small": [0, 10, "5"],
    "items": [None, [{"x": 1}], []],
    "tree": [_TREE],
    "forest": [[_TREE], None],
    "pair": [[_ADDRESS, _ADDRESS]],
    "home": [_ADDRESS],
    "query": ["q"],
    "limit": [1, 5],
    "where": [{"city": "Lisbon"}],
    "rest": [1, 2.5, [1]],
}


@st.composite
def arguments(draw: st.DrawFn, oracle: Oracle) -> dict[str, Any]:
    """Half the time a call that likely passes: every required parameter and some
    optional ones, with plausible values; else any names, mostly plausible values."""
    if draw(st.booleans()):
        chosen = [n for n in oracle.names if n in oracle.required or draw(st.booleans())]
        return {name: draw(st.sampled_from(PLAUSIBLE[name])) for name in chosen}
    names = list(oracle.names) + EXTRA_NAMES
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    return {
        name: draw(st.sampled_from(PLAUSIBLE[name]))
        if name in PLAUSIBLE and draw(st.integers(0, 3))
        else draw(values)
        for name in chosen
    }


def _unique(value: Any) -> Any:
    """A fresh copy: containers of the arguments are then distinct objects."""
    if isinstance(value, dict):
        return {k: _unique(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unique(v) for v in value]
    return value


@given(st.data())
def test_validate_arguments_agrees_with_one_parameter_at_a_time(data: st.DataObject) -> None:
    tool, oracle = data.draw(st.sampled_from(CASES))
    args = _unique(data.draw(arguments(oracle)))
    expected_problems, expected_values = oracle.arguments(args)
    try:
        result = tool.validate_arguments(args)
    except ArgumentValidationError as exc:
        assert exc.tool_name == tool.name
        assert list(exc.problems) == expected_problems
    else:
        assert expected_problems == []
        assert result == expected_values
        assert list(result) == list(expected_values)  # declaration order, then extras
        for name, value in expected_values.items():  # passed through as is: the same object
            assert (result[name] is args[name]) == (value is args[name]), name


@given(st.data())
def test_validate_literals_agrees_with_validate_argument_by_name(data: st.DataObject) -> None:
    tool, oracle = data.draw(st.sampled_from(CASES))
    calls = [_unique(c) for c in data.draw(st.lists(arguments(oracle), max_size=5))]
    expected = [oracle.literals(given) for given in calls]
    assert tool.validate_literals(calls) == expected
    assert tool.validate_literals(tuple(calls)) == expected
    by_argument = [
        [
            ArgumentProblem((name, *p.loc), p.message)
            for name, value in given.items()
            for p in tool.validate_argument(name, value)
        ]
        for given in calls
    ]
    assert by_argument == expected
