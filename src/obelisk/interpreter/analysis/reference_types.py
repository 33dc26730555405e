"""The types of references, judged against what their writers produce (docs/diagnostics.md).

A reference some call writes is judged against that call's output schema (or its
error arm's, :data:`ERROR_ARM_SCHEMA`): a path no value of the schema holds (a field a
closed object does not have) is ``unresolved_reference`` when no other writer or
document can make it; a whole argument of a known tool whose value never fits the
parameter is ``type_mismatch``.  The judging is conservative (schema_types.py):
what cannot be worked out is never reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from obelisk.diagnostics import Collector
from obelisk.grammar import ANY_INDEX, WILDCARD, Segment
from obelisk.interpreter.analysis.accesses import Read, Write
from obelisk.interpreter.analysis.schema_types import (
    MissingField,
    admitted_types,
    describe_types,
    schema_at,
    types_compatible,
)
from obelisk.interpreter.plan.model import Call
from obelisk.interpreter.tools.tool import Tool

__all__ = ["ERROR_ARM_SCHEMA", "ReferenceTypes"]

ERROR_ARM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "type": {"type": "string"},
                "message": {"type": "string"},
                "tool": {"type": "string"},
                "call": {"type": "integer"},
            },
        }
    },
}


class ReferenceTypes:
    """The type checks of one plan's reads: :meth:`check` each read with sources
    (:meth:`judge` one with a single source, the common case); it reports into
    ``out``.  ``tools`` are the calls' tools (None when unknown);
    ``resolvable(read, sources)`` tells whether a read can exist otherwise."""

    def __init__(
        self,
        out: Collector,
        calls: Sequence[Call],
        tools: Sequence[Tool | None],
        resolvable: Callable[[Read, tuple[Write, ...]], bool],
    ) -> None:
        self.out = out
        self.fail = out.fail
        self.calls = calls
        self.tools = tools
        self.resolvable = resolvable
        self._accepted: dict[tuple[str, str], frozenset[str] | None] = {}
        self._fitting: set[tuple[str, str, int, tuple[object, ...]]] = set()
        self._produced: dict[tuple[int, Any], tuple[str | None, frozenset[str] | None]] = {}
        # (id(sources), reference, tool, parameter) judged without a diagnostic
        self._clean: set[tuple[int, str, str, str]] = set()

    def check(self, call: Call, tool: Tool | None, read: Read, sources: tuple[Write, ...]) -> None:
        """Judge ``read`` against the output schemas of the calls that write it
        (``sources``): a path none of them can hold (a field a closed object does not
        have) is ``unresolved_reference``; with ``tool`` (a whole argument of a known
        tool, no ``[*]``), a value that never fits the parameter is ``type_mismatch``.
        Reads sharing many sources (N readers of ``†state.items[-1]`` after N writers)
        are judged once per parameter: a judgment that found nothing finds nothing again."""
        if len(sources) < 2:
            self.judge(call, tool, read, sources)
            return
        parameter = str(read.argument.path[0]) if tool is not None else ""
        clean = (id(sources), str(read.reference), tool.name if tool else "", parameter)
        if clean in self._clean:
            return
        before = len(self.out.diagnostics)
        self.judge(call, tool, read, sources)
        if len(self.out.diagnostics) == before:
            self._clean.add(clean)

    def judge(self, call: Call, tool: Tool | None, read: Read, sources: tuple[Write, ...]) -> None:
        """:meth:`check` without its memory of clean judgments: what a read with one
        source (or none) goes through, and a read with many the first time."""
        if WILDCARD in read.key:  # a list of values: not typed here
            tool = None
        missing: str | None = None  # why the first writer judged cannot make the path
        possible = False  # some writer may make the path
        for write in sources:
            judged = self.written_schema(read, write)
            if judged is None:
                possible = True  # not judged here: it may make the path
                continue
            schema, tail_key = judged
            verdict_key = None
            if tool is not None:
                verdict_key = (tool.name, str(read.argument.path[0]), id(schema), tail_key)
                if verdict_key in self._fitting:
                    possible = True
                    continue  # this parameter already met this schema at this path
            tail = read.reference.segments[len(write.key) - 1 :]
            reason, produced = self.produced_types(schema, tail, tail_key)
            if type(reason) is MissingField:
                if missing is None:
                    writer = self.writer(write)
                    missing = f"{read.reference} cannot exist when {writer} writes it: {reason}"
                continue
            possible = True
            if tool is not None and verdict_key is not None:
                self.compare_types(call, tool, read, write, reason, produced, verdict_key)
        if missing is not None and not possible and not self.resolvable(read, ()):
            arg = read.argument
            self.fail(
                "unresolved_reference",
                missing,
                call,
                arg.argument_path,
                read.reference.span,
                arg.text,
            )

    def written_schema(
        self, read: Read, write: Write
    ) -> tuple[dict[str, Any], tuple[object, ...]] | None:
        """The output schema of what ``write`` puts at a prefix of ``read``'s path, and
        the rest of the path below it (the key); None when it cannot be judged here: an
        unknown tool, one with outcomes, a method other than ``set``, a write not at a
        prefix of the read, negative indexes, or an alternative between the first and
        the error arm."""
        producer = self.tools[write.call]
        if producer is None or producer.outcomes or self.calls[write.call].output_method != "set":
            return None
        key, written = read.key, write.key  # the rest of key below written, if a prefix
        depth = len(written)
        if depth == len(key):  # the whole output: no slice to build
            if key != written:
                return None
            tail_key: tuple[object, ...] = ()
        elif depth > len(key) or key[:depth] != written:
            return None
        else:
            tail_key = key[depth:]
        if (
            ANY_INDEX in write.key
            and (  # negative indexes: compare the real positions
                read.reference.segments[: len(write.key) - 1] != write.reference.segments
            )
        ):
            return None
        if write.alternative == 0:
            schema = producer.closed_output_schema
        elif write.alternative == write.alternatives - 1:
            schema = ERROR_ARM_SCHEMA
        else:
            schema = None
        return None if schema is None else (schema, tail_key)

    def writer(self, write: Write) -> str:
        """``#0 getUser``, or ``the error arm of #0 getUser`` for a write of its error arm."""
        label = self.calls[write.call].label
        if write.alternative and write.alternative == write.alternatives - 1:
            return f"the error arm of {label}"
        return label

    def compare_types(
        self,
        call: Call,
        tool: Tool,
        read: Read,
        write: Write,
        reason: str | None,
        produced: frozenset[str] | None,
        verdict_key: tuple[str, str, int, tuple[object, ...]],
    ) -> None:
        """Report ``type_mismatch`` when what ``write`` puts at ``read`` never fits the
        parameter the read fills: a path its type rules out (``reason``), or types the
        parameter does not accept."""
        arg = read.argument
        writer = self.writer(write)
        if reason is not None:
            message = f"{read.reference} cannot exist when {writer} writes it: {reason}"
            self.fail(
                "type_mismatch", message, call, arg.argument_path, read.reference.span, arg.text
            )
            return
        accepted = self.accepted_types(tool, verdict_key[1])
        if types_compatible(produced, accepted):
            self._fitting.add(verdict_key)
            return
        assert produced is not None and accepted is not None
        message = (
            f"{read.reference} is {describe_types(produced)} "
            f"(written by {writer}), but {tool.name} expects "
            f"{describe_types(accepted)} for '{arg.path[0]}'"
        )
        self.fail("type_mismatch", message, call, arg.argument_path, read.reference.span, arg.text)

    def accepted_types(self, tool: Tool, name: str) -> frozenset[str] | None:
        key = (tool.name, name)
        if key not in self._accepted:
            self._accepted[key] = admitted_types(tool.parameter_schema(name), tool.parameters)
        return self._accepted[key]

    def produced_types(
        self, schema: dict[str, Any], tail: tuple[Segment, ...], tail_key: tuple[object, ...]
    ) -> tuple[str | None, frozenset[str] | None]:
        """``(reason the path cannot exist, or None; types found there, or None)``."""
        key = (id(schema), tail_key)
        if key not in self._produced:
            sub, reason = schema_at(schema, tail)
            self._produced[key] = (reason, None if reason else admitted_types(sub, schema))
        return self._produced[key]
