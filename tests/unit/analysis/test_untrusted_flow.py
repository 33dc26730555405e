"""Labels decided at check time (docs/diagnostics.md, ``untrusted_flow``): the check
joins labels over the plan's graph and reports each flow a policy would stop, an error
where it denies, a warning where it asks, located at the argument and naming the
source; ``CheckResult.approval_load`` lists the calls that may need a person."""

from __future__ import annotations

from typing import Any

import pytest

import obelisk
from obelisk import Allow, Ask, Outcome, PolicyCall

FILE = "untrusted: file content"


@obelisk.tool(output_trust="untrusted")
def read_file(path: str) -> dict[str, Any]:
    "File content."
    return {"iban": "ATTACKER", "amount": 10}


@obelisk.tool(effects={"bank": "write"}, trusted_args=["iban"], on_untrusted="deny")
def pay_or_refuse(iban: str, amount: float) -> str:
    "Send money, or refuse untrusted IBANs."
    return "sent"


@obelisk.tool(effects={"bank": "write"}, trusted_args=["iban"], on_untrusted="ask")
def send_money(iban: str, amount: float) -> str:
    "Send money."
    return "sent"


@obelisk.tool(effects={"mail": "write"})
def post(to: str, body: Any = None) -> str:
    "Post a message."
    return "posted"


@obelisk.tool
def echo(value: Any) -> Any:
    "The value."
    return value


@obelisk.tool(output_trust="untrusted", outcomes=["yes", "no"])
def judge(text: str) -> Outcome:
    "A review's verdict."
    return Outcome("yes", text)


@obelisk.tool(trusted_args=["to"])
def notify(to: str) -> str:
    "Notify someone."
    return "notified"


TOOLS = [read_file, pay_or_refuse, send_money, post, echo, judge, notify]
BILL = {"_tool": "read_file", "path": "bill.txt", "_outputPath": "†state.bill"}


def _pay(tool: str, iban: str = "†state.bill.iban") -> dict[str, Any]:
    return {"_tool": tool, "iban": iban, "amount": 5, "_outputPath": f"†state.{tool}"}


def _flows(result: obelisk.CheckResult) -> list[obelisk.Diagnostic]:
    return [d for d in result.diagnostics if d.code == "untrusted_flow"]


def test_deny_is_an_error_located_at_the_argument_naming_the_source() -> None:
    result = obelisk.check([BILL, _pay("pay_or_refuse")], TOOLS)
    assert not result.ok
    [flow] = _flows(result)
    assert (flow.severity, flow.call, flow.path, flow.span) == ("error", 1, "args.iban", (0, 16))
    assert flow.label == "#1 pay_or_refuse" and flow.source == "†state.bill.iban"
    assert flow.message.startswith(
        f"argument `iban` of `#1 pay_or_refuse` comes from `#0 read_file` ({FILE})"
    )
    assert "PolicyViolation" in flow.message
    assert str(flow).splitlines()[1:] == ["    †state.bill.iban", "    ^^^^^^^^^^^^^^^^"]
    assert result.approval_load == ()  # a denied call fails; nobody is asked


def test_ask_is_a_warning_and_in_the_approval_load() -> None:
    result = obelisk.check([BILL, _pay("send_money")], TOOLS)
    assert result.ok
    [flow] = _flows(result)
    assert flow.severity == "warning" and "wait for a person's approval" in flow.message
    [need] = result.approval_load
    assert (need.call, need.tool, need.label) == (1, "send_money", "#1 send_money")
    assert need.reasons == (
        f"argument `iban` of `#1 send_money` comes from `#0 read_file` ({FILE})",
    )
    shown = result.to_dict()["approval_load"][0]
    assert shown["arguments"]["iban"]["sources"][0]["name"] == "#0 read_file"
    assert set(shown) == {"call", "tool", "label", "reasons", "arguments"}


def test_trusted_data_and_plans_without_labels_say_nothing() -> None:
    trusted = obelisk.check([_pay("pay_or_refuse", "†input.iban")], TOOLS, input={"iban": "X"})
    assert trusted.diagnostics == () and trusted.approval_load == ()
    assert "approval_load" not in trusted.to_dict()
    plain = obelisk.check([{"_tool": "echo", "value": 1}], [echo])
    assert plain.to_dict() == {"ok": True, "diagnostics": []}


def test_strict_mode_and_input_labels() -> None:
    plan = [{"_tool": "post", "to": "†input.to", "body": "hi", "_outputPath": "†state.s"}]
    given: dict[str, Any] = {"input": {"to": "eve"}}
    labels = {"†input.to": "untrusted"}
    assert _flows(obelisk.check(plan, TOOLS, **given, input_labels=labels)) == []
    assert _flows(obelisk.check(plan, TOOLS, **given, policy="strict")) == []
    strict = obelisk.check(plan, TOOLS, **given, policy="strict", input_labels=labels)
    [flow] = _flows(strict)
    assert flow.severity == "warning" and flow.path == "args.to"
    assert "comes from `†input.to` (untrusted: labelled by the caller)" in flow.message
    assert 'policy="strict": post writes the world' in flow.message
    assert [need.call for need in strict.approval_load] == [0]


def test_every_writer_and_alternative_is_joined() -> None:
    plan = [
        BILL,
        {"_tool": "echo", "value": "trusted", "_outputPath": "†state.safe"},
        # a fallback: either option may be what runs
        _pay("send_money", "†state.safe || †state.bill.iban"),
    ]
    [flow] = _flows(obelisk.check(plan, TOOLS))
    assert flow.call == 2 and "`#0 read_file`" in flow.message
    assert flow.span == (15, 31)  # the caret is under the option the data comes through


def test_a_control_dependency_taints_what_a_branch_decides() -> None:
    plan = [
        {"_tool": "judge", "text": "good", "_outputPath": "†state.a || †state.b"},
        {"_tool": "notify", "to": "†state.a && †input.to", "_outputPath": "†state.gated"},
        {"_tool": "notify", "to": "†state.b || †input.to", "_outputPath": "†state.fallback"},
        {"_tool": "echo", "value": "†state.a", "_outputPath": "†state.c"},  # may be skipped
        {"_tool": "notify", "to": "†state.c || †input.to", "_outputPath": "†state.after_skip"},
        {"_tool": "notify", "to": "†input.to", "_outputPath": "†state.plain"},
    ]
    result = obelisk.check(plan, TOOLS, input={"to": "bob"})
    assert [d.call for d in _flows(result)] == [1, 2, 4]
    assert all("comes from `#0 judge`" in d.message for d in _flows(result))


def test_a_latent_call_or_delegate_reading_untrusted_data_is_untrusted() -> None:
    latent = obelisk.Tool.from_schema(
        {"name": "summarize", "parameters": {"type": "object", "properties": {"text": {}}}}
    )
    delegate = obelisk.Tool.from_schema(
        {
            "name": "research",
            "_delegate": True,
            "_scopes": ["state"],
            "parameters": {"type": "object", "properties": {"topic": {"type": "string"}}},
        }
    )
    plan = [
        BILL,
        {"_tool": "summarize", "text": "†state.bill", "_output": "GB00", "_outputPath": "†state.s"},
        _pay("send_money", "†state.s"),
        # the delegate's topic is trusted, but it reads the state, where the bill is
        {"_tool": "research", "topic": "fees", "_output": "GB11", "_outputPath": "†state.r"},
        {**_pay("send_money", "†state.r"), "_outputPath": "†state.second"},
    ]
    result = obelisk.check(plan, [*TOOLS, latent, delegate])
    assert [(d.call, d.path) for d in _flows(result)] == [(2, "args.iban"), (4, "args.iban")]
    assert all("`#0 read_file`" in d.message for d in _flows(result))


@obelisk.tool(output_trust="untrusted")
def fetch(url: str) -> str:
    "A web page."
    return "GB00ATTACKER"


@obelisk.tool(effects={"files:{path}": "write"})
def save(path: str, text: str) -> None:
    "Write a file."


@obelisk.tool(effects={"files:{path}": "read"})
def load(path: str) -> str:
    "Read a file."
    return ""


def test_a_write_then_a_read_of_one_file_is_an_edge_labels_follow() -> None:
    plan = [
        {"_tool": "fetch", "url": "https://example.com", "_outputPath": "†state.page"},
        {"_tool": "save", "path": "notes/a.txt", "text": "†state.page", "_outputPath": "†state.w"},
        {"_tool": "load", "path": "notes/a.txt", "_outputPath": "†state.a"},
        {"_tool": "load", "path": "notes/b.txt", "_outputPath": "†state.b"},
        {**_pay("send_money", "†state.a"), "_outputPath": "†state.p1"},
        {**_pay("send_money", "†state.b"), "_outputPath": "†state.p2"},
    ]
    result = obelisk.check(plan, [fetch, save, load, send_money])
    [flow] = _flows(result)
    assert flow.call == 4 and "comes from `#0 fetch`" in flow.message


@obelisk.tool(audience_arg="to")
def mail(to: Any, body: str) -> str:
    "Mail."
    return "sent"


def test_the_readers_rule_with_a_known_and_an_unknown_audience() -> None:
    labels = {"†input.secret": {"readers": ["alice"]}}
    given = {"secret": "s3cret", "to": "eve"}
    plan = [
        {"_tool": "mail", "to": "eve", "body": "†input.secret", "_outputPath": "†state.m1"},
        {"_tool": "mail", "to": ["alice"], "body": "†input.secret", "_outputPath": "†state.m2"},
        {"_tool": "mail", "to": "†input.to", "body": "†input.secret", "_outputPath": "†state.m3"},
    ]
    result = obelisk.check(plan, [mail], input=given, input_labels=labels)
    [flow] = _flows(result)
    assert (flow.call, flow.severity, flow.path) == (0, "error", "args.body")
    assert "may be read only by alice" in flow.message
    [need] = result.approval_load
    assert need.call == 2 and "the audience `to` is known only then" in need.reasons[0]


def test_a_policy_callable_is_decided_at_run_time() -> None:
    def rule(call: PolicyCall) -> Allow | Ask:
        return Ask("check") if call.untrusted() else Allow()

    checked = obelisk.Tool.from_function(send_money.function, name="pay", policy=rule)
    result = obelisk.check([BILL, _pay("pay")], [read_file, checked])
    assert _flows(result) == []
    [need] = result.approval_load
    assert need.reasons == ("decided at run time by its policy",)


def test_tools_that_require_approval_are_in_the_load() -> None:
    approve = obelisk.Tool.from_function(post.function, name="approved", requires_approval=True)
    result = obelisk.check(
        [{"_tool": "approved", "to": "bob", "_outputPath": "†state.x"}],
        [approve, read_file],
    )
    assert [need.reasons for need in result.approval_load] == [("approved requires approval",)]


def test_bad_policy_settings_are_usage_errors() -> None:
    with pytest.raises(obelisk.UsageError, match="policy must be 'off' or 'strict'"):
        obelisk.check([BILL], TOOLS, policy="lax")  # type: ignore[arg-type]
    with pytest.raises(obelisk.UsageError, match="is not a path"):
        obelisk.check([BILL], TOOLS, input_labels={"input.x": "untrusted"})


def test_the_run_decides_a_given_plan_call_by_call() -> None:
    """``obelisk.run`` checks without labels: a denied call fails at run time, and
    the calls before it run (an error arm can take the PolicyViolation)."""
    result = obelisk.run_sync([BILL, _pay("pay_or_refuse")], TOOLS)
    assert result.calls[0].status == "succeeded" and result.calls[1].status == "failed"


def test_a_file_label_follows_order_only_edges_through_calls_that_do_not_touch_it() -> None:
    plan = [
        {"_tool": "fetch", "url": "https://example.com", "_outputPath": "†state.page"},
        {
            "_id": "w",
            "_tool": "save",
            "path": "a.txt",
            "text": "†state.page",
            "_outputPath": "†state.w",
        },
        {"_id": "x", "_tool": "echo", "value": 1, "_after": ["w"], "_outputPath": "†state.x"},
        # ordered after the write through #2 alone: no world edge is drawn to it
        {"_tool": "load", "path": "a.txt", "_after": ["x"], "_outputPath": "†state.a"},
        _pay("send_money", "†state.a"),
    ]
    result = obelisk.check(plan, [fetch, save, echo, load, send_money])
    [flow] = _flows(result)
    assert flow.call == 4 and "comes from `#0 fetch`" in flow.message
