"""Asking a person on the terminal: whole plans and single calls (docs/approvals.md).

Answers come from the terminal, or line by line from standard input when it is not a
terminal, so that ``printf 'y\n' | obelisk run ... --approve`` works; running out of
answers raises :class:`~obelisk.errors.ApprovalAborted`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from obelisk.cli.io import json_for_output
from obelisk.diagnostics import printable
from obelisk.errors import ApprovalAborted
from obelisk.interpreter.runtime.approvals import Decision, PendingApproval
from obelisk.json_values import loads_strict

if TYPE_CHECKING:  # dry runs are loaded only with --approve
    from obelisk.interpreter.simulate.approval import Approval

__all__ = ["TerminalApprover", "print_pending"]


class TerminalApprover:
    """The ``approve`` callback of ``--approve``: shows the checked plan, its dry run
    and what changed on ``console`` and asks ``y`` (accept), ``n`` (reject, with a reason) or ``e``
    (edit the plan JSON in ``$VISUAL`` / ``$EDITOR``).  ``model``: whether a model plans
    (``obelisk loop``), to which the reason of a rejected plan is sent; ``obelisk run``
    has none, so its prompt says only ``Reason:``.  Answers come from the
    terminal, or line by line from standard input when it is not a terminal;
    running out of them raises :class:`ApprovalAborted`."""

    def __init__(self, console: Console, *, model: bool = True) -> None:
        self.console = console
        self.model = model  # is there a model the reason of a rejected plan is sent to
        self.edited: Any = []  # the last edit: what to edit when it did not parse

    def _ask(self, prompt: str) -> str:
        self.console.print(prompt, end="", markup=False, style="bold")
        if sys.stdin.isatty():
            try:
                return input().strip()
            except EOFError:
                raise ApprovalAborted("no answer: standard input ended") from None
        line = sys.stdin.readline()
        if not line:
            self.console.print()
            raise ApprovalAborted("no answer: standard input ended")
        self.console.print(line.rstrip("\n"), markup=False)
        return line.strip()

    def show(self, checked: Approval) -> None:
        """The plan as a table (call label, arguments, output paths), then its
        diagnostics (an edited plan may have errors; accepting those sends the
        plan back to the model)."""
        if checked.plan is not None:
            from rich.table import Table  # only --approve draws tables
            from rich.text import Text

            table = Table(title="Plan to approve", title_justify="left", show_lines=True)
            for column in ("call", "arguments", "writes"):
                table.add_column(column, overflow="fold")
            for call in checked.plan.calls:
                arguments = "\n".join(
                    printable(f"{name} = {json_for_output(value)[0]}")
                    for name, value in call.arguments.items()
                )
                writes = call.output_path or "(nothing)"
                if call.output_method != "set":
                    writes += f" ({call.output_method})"
                table.add_row(Text(printable(call.label)), Text(arguments), Text(printable(writes)))
            self.console.print(table)
        for diagnostic in checked.diagnostics:
            style = "bold red" if diagnostic.severity == "error" else "yellow"
            self.console.print(str(diagnostic), markup=False, style=style)
        for line in checked.summary_lines():
            self.console.print(line, markup=False)

    def edit(self, checked: Approval) -> Any | None:
        """The plan as edited in ``$VISUAL``/``$EDITOR``, or ``None`` (said why)."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            self.console.print("set $EDITOR to edit the plan", markup=False, style="red")
            return None
        plan = self.edited if checked.plan is None else [c.to_data() for c in checked.plan.calls]
        text = json_for_output(plan, indent=2)[0]
        with tempfile.TemporaryDirectory(prefix="obelisk-") as folder:
            path = Path(folder) / "plan.json"
            path.write_text(text + "\n", encoding="utf-8")
            try:
                done = subprocess.run([*shlex.split(editor), str(path)], check=False)
            except OSError as exc:
                self.console.print(f"cannot start {editor!r}: {exc}", markup=False, style="red")
                return None
            edited = path.read_text(encoding="utf-8")
        if done.returncode != 0:
            self.console.print(
                f"{editor!r} exited with {done.returncode}", markup=False, style="red"
            )
            return None
        try:
            self.edited = loads_strict(edited)
        except json.JSONDecodeError as exc:
            message = f"the edited plan is not JSON: {exc.msg} at line {exc.lineno}"
            self.console.print(message, markup=False, style="red")
            return None
        return self.edited

    def __call__(self, checked: Approval) -> Decision:
        self.show(checked)
        while True:
            answer = self._ask("Run this plan? [y]es / [n]o / [e]dit: ").lower()
            if answer in ("y", "yes"):
                return Decision.accept()
            if answer in ("n", "no"):
                prompt = "Reason (sent to the model): " if self.model else "Reason: "
                return Decision.reject(self._ask(prompt))
            if answer in ("e", "edit"):
                edited = self.edit(checked)
                if edited is not None:
                    return Decision.edit(edited)
                continue
            self.console.print("answer y, n or e", markup=False, style="yellow")

    def decide(self, pending: PendingApproval) -> Decision:
        """Ask about one call awaiting approval: ``y``, ``n`` (a reason) or ``e`` (the
        arguments as JSON, on one line)."""
        arguments = json_for_output(pending.arguments)[0]
        self.console.print(
            printable(f"{pending.label} awaits approval ({pending.id}): {arguments}"),
            markup=False,
        )
        while True:
            answer = self._ask("Run this call? [y]es / [n]o / [e]dit: ").lower()
            if answer in ("y", "yes"):
                return Decision.accept()
            if answer in ("n", "no"):
                return Decision.reject(self._ask("Reason: ") or "rejected")
            if answer in ("e", "edit"):
                text = self._ask("Arguments (JSON object): ")
                try:
                    edited = loads_strict(text)
                except json.JSONDecodeError as exc:
                    self.console.print(f"not JSON: {exc.msg}", markup=False, style="red")
                    continue
                return Decision.edit(edited)
            self.console.print("answer y, n or e", markup=False, style="yellow")


def print_pending(console: Console, pending: tuple[PendingApproval, ...]) -> None:
    """One line per call waiting for a person: label, approval id, arguments, and
    the flows when a policy asked (docs/security.md)."""
    for approval in pending:
        arguments = json_for_output(approval.arguments)[0]
        console.print(
            printable(f"{approval.label} awaits approval ({approval.id}): {arguments}"),
            markup=False,
            style="yellow",
        )
        if approval.reason is not None:
            console.print(printable(f"  why: {approval.reason}"), markup=False, style="yellow")
