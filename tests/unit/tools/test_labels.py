"""Labels and policy declarations: the label algebra, per-path label maps, tools'
``output_trust`` / ``trusted_args`` / ``on_untrusted`` / ``audience_arg`` / ``policy``
on ``@tool``, ``Tool.from_function`` and ``Tool.from_schema``, MCP's ``openWorldHint``
(docs/security.md)."""

from __future__ import annotations

import pytest

import obelisk
from obelisk import Allow, Ask, Deny, Label, Labeled, PolicyCall, Tool
from obelisk.interpreter.tools.labels import (
    TRUSTED,
    LabelMap,
    Source,
    join,
    label_of,
    relative_path,
)
from obelisk.interpreter.tools.policies import Rules, decide, flow_text

FILE = Source("#1 read_file", "file content", 1)
MAIL = Source("†input.body", "labelled by the caller")


def test_join_is_the_lattice_join() -> None:
    untrusted = Label("untrusted", frozenset((FILE,)))
    secret = Label(readers=frozenset(("alice", "bob")))
    both = untrusted.join(secret)
    assert both.untrusted and both.readers == frozenset(("alice", "bob"))
    assert both.sources == frozenset((FILE,))
    assert TRUSTED.join(untrusted) is untrusted and untrusted.join(TRUSTED) is untrusted
    assert secret.join(Label(readers=frozenset(("bob",)))).readers == frozenset(("bob",))
    assert join([]) == TRUSTED and join([secret, untrusted]) == both
    assert Label.from_dict(both.to_dict()) == both
    assert both.endorsed() == Label(readers=frozenset(("alice", "bob")))
    assert not secret.can_read("eve") and secret.can_read("alice") and TRUSTED.can_read("eve")


def test_label_of_and_relative_paths() -> None:
    assert label_of("untrusted", FILE) == Label("untrusted", frozenset((FILE,)))
    assert label_of("trusted", FILE) == TRUSTED  # the bottom gets no source
    assert label_of({"readers": ["a"]}).readers == frozenset(("a",))
    with pytest.raises(obelisk.UsageError, match="must be 'trusted', 'untrusted'"):
        label_of("maybe")
    assert relative_path("items[0].text") == ("items", 0, "text")
    assert relative_path("") == () and relative_path(("a", 1)) == ("a", 1)
    with pytest.raises(obelisk.UsageError, match="is not a path"):
        relative_path("a..b")


def test_label_map_reads_join_prefixes_and_what_is_below() -> None:
    labels = LabelMap()
    body = Label("untrusted", frozenset((MAIL,)))
    labels.put(("state", "mail"), TRUSTED)
    labels.put(("state", "mail", "body"), body)
    assert labels.read(("state", "mail", "sender")) == TRUSTED
    assert labels.read(("state", "mail", "body", "text")) == body  # below a labelled path
    assert labels.read(("state", "mail")) == body  # the whole holds the body
    assert labels.read(("state",)) == body and labels.everything() == body
    labels.put(("state", "list", 0), body)
    assert labels.read(("state", "list", ...)) == body  # [*] matches every index
    labels.put(("state", "mail"), TRUSTED)  # a new value replaces what was below
    assert labels.read(("state", "mail")) == TRUSTED
    labels.put(("state", "mail"), body, replace=False)
    assert labels.read(("state", "mail", "x")) == body
    assert [path for path, _ in labels.items()] == [("state", "mail"), ("state", "list", 0)]


def test_labeled_gives_the_whole_and_each_field() -> None:
    made = Labeled({"sender": "a", "body": "b"}, trust="trusted", fields={"body": "untrusted"})
    found = made.labels(Label("untrusted", frozenset((FILE,))), FILE)
    assert found == [((), TRUSTED), (("body",), Label("untrusted", frozenset((FILE,))))]
    secret = Labeled(1, readers=["alice"]).labels(TRUSTED, FILE)
    assert secret[0][1].readers == frozenset(("alice",))


def test_tools_declare_labels_and_policies() -> None:
    @obelisk.tool(output_trust="untrusted")
    def read_file(path: str) -> str:
        "File content."
        return path

    @obelisk.tool(
        effects={"bank": "write"}, trusted_args=["iban"], on_untrusted="deny", audience_arg="to"
    )
    def send_money(iban: str, to: str) -> str:
        "Pay."
        return iban

    assert read_file.rules == Rules(output="untrusted")
    assert send_money.rules.trusted_args == ("iban",) and send_money.rules.writes
    assert send_money.rules.on_untrusted == "deny" and send_money.rules.audience_arg == "to"
    assert not Tool.from_function(lambda x: x, name="plain").rules.declared

    def rule(call: PolicyCall) -> Allow:
        return Allow()

    made = Tool.from_function(lambda x: x, name="f", policy=rule, trusted_args=("x",))
    assert made.policy is rule and made.rules.declared


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"output_trust": "maybe"}, "output_trust must be 'trusted' or 'untrusted'"),
        ({"trusted_args": "iban"}, "trusted_args must be a list"),
        ({"on_untrusted": "warn"}, "on_untrusted must be 'ask' or 'deny'"),
        ({"audience_arg": 3}, "audience_arg must be an argument name"),
        ({"policy": 3}, "policy must be a callable"),
        ({"trusted_args": ["nope"]}, "must name parameters, got 'nope'"),
    ],
)
def test_bad_declarations_are_refused(options: dict[str, object], message: str) -> None:
    def pay(iban: str) -> str:
        return iban

    with pytest.raises(obelisk.ToolDefinitionError, match=message):
        Tool.from_function(pay, **options)  # type: ignore[arg-type]


def test_from_schema_reads_the_keys_and_mcp_open_world_hint() -> None:
    schema = {"type": "object", "properties": {"iban": {"type": "string"}}}
    made = Tool.from_schema(
        {"name": "pay", "parameters": schema, "trusted_args": ["iban"], "on_untrusted": "deny"},
        policy=lambda call: Deny("no"),
    )
    assert made.rules.trusted_args == ("iban",) and made.rules.on_untrusted == "deny"
    assert made.policy is not None
    mcp = {"name": "fetch", "inputSchema": schema, "annotations": {"openWorldHint": True}}
    assert Tool.from_schema(mcp).output_trust == "untrusted"
    closed = {**mcp, "annotations": {"openWorldHint": False}}
    assert Tool.from_schema(closed).output_trust == "trusted"
    assert Tool.from_schema({**mcp, "output_trust": "trusted"}).output_trust == "trusted"
    registry = obelisk.Registry.from_mcp_tools([mcp])
    assert registry["fetch"].output_trust == "untrusted"
    with pytest.raises(obelisk.ToolDefinitionError, match="openWorldHint"):
        Tool.from_schema({**mcp, "annotations": {"openWorldHint": "yes"}})


def _call(**labels: Label) -> PolicyCall:
    arguments = {name: "x" for name in labels}
    return PolicyCall("send_money", "#4 send_money", arguments, labels)


def test_decide_takes_the_strictest_rule() -> None:
    tainted = Label("untrusted", frozenset((FILE,)))
    rules = Rules(trusted_args=("iban",), writes=True)
    assert decide(rules, _call(iban=TRUSTED, memo=tainted)) == Allow()
    assert decide(rules, _call(iban=TRUSTED, memo=tainted), "strict").action == "ask"
    asked = decide(rules, _call(iban=tainted))
    assert asked == Ask(
        "argument `iban` of `#4 send_money` comes from `#1 read_file` (untrusted: file content)"
    )
    assert asked.reason == flow_text("#4 send_money", "iban", tainted)
    denying = Rules(trusted_args=("iban",), on_untrusted="deny")
    assert decide(denying, _call(iban=tainted)).action == "deny"
    broken = Rules(policy=lambda call: 1 / 0)
    assert "ZeroDivisionError" in decide(broken, _call(iban=TRUSTED)).reason
    odd = Rules(policy=lambda call: "yes")
    assert decide(odd, _call(iban=TRUSTED)).action == "ask"


def test_the_readers_rule_refuses_an_audience_outside_the_readers() -> None:
    secret = Label(readers=frozenset(("alice",)))
    rules = Rules(audience_arg="to")
    call = PolicyCall("send", "#2 send", {"to": "eve", "body": "s"}, {"body": secret})
    denied = decide(rules, call)
    assert denied.action == "deny" and "may be read only by alice, not by eve" in denied.reason
    fine = PolicyCall("send", "#2 send", {"to": ["alice"], "body": "s"}, {"body": secret})
    assert decide(rules, fine) == Allow()
