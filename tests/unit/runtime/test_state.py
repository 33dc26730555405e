"""State: the write log with its materialized view (docs/language.md, docs/semantics.md).

Every expected value here follows from the output methods of docs/language.md
(``set`` replaces, ``merge`` merges objects deeply, ``assign`` one level,
``push`` appends the value, ``concat`` appends the items, ``erase`` removes),
the path rules of §1.2 (negative indices count from the end, ``[*]`` yields a
list) and the instance rules of §1.4 (an instance's writes are seen by that
instance only, base writes by all, the most specific layer wins).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import pytest

from obelisk.errors import ExecutionError, StateWriteError
from obelisk.grammar import Reference, parse_reference
from obelisk.interpreter.runtime.state import MISSING, State
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.json_values import deep_merge


def ref(text: str) -> Reference:
    return parse_reference(text)


def written(start: dict | None, target: str, value, method: str = "set", **kwargs) -> dict:
    """The state document after one write onto ``start``."""
    state = State(start)
    state.write(ref(target), value, method, **kwargs)
    return state.document()


# -- set -------------------------------------------------------------------------------
class TestSet:
    def test_fresh_path(self) -> None:
        assert written(None, "†state.a", 1) == {"a": 1}

    def test_replaces_an_existing_value_whole(self) -> None:
        assert written({"a": {"x": 1}, "b": 2}, "†state.a", {"y": 2}) == {"a": {"y": 2}, "b": 2}

    def test_creates_missing_objects_on_the_way(self) -> None:
        assert written({"keep": True}, "†state.a.b.c", 1) == {"keep": True, "a": {"b": {"c": 1}}}

    def test_creates_an_object_where_null_was(self) -> None:
        assert written({"a": None}, "†state.a.b", 1) == {"a": {"b": 1}}

    def test_adds_a_key_beside_existing_ones(self) -> None:
        assert written({"a": {"x": 1}}, "†state.a.y", 2) == {"a": {"x": 1, "y": 2}}

    def test_quoted_key(self) -> None:
        assert written(None, '†state["a b"].c', 1) == {"a b": {"c": 1}}

    def test_list_index_replaces_an_item(self) -> None:
        assert written({"l": [1, 2, 3]}, "†state.l[1]", 9) == {"l": [1, 9, 3]}

    def test_list_index_just_past_the_end_appends(self) -> None:
        assert written({"l": [1, 2, 3]}, "†state.l[3]", 4) == {"l": [1, 2, 3, 4]}

    def test_negative_list_index_counts_from_the_end(self) -> None:
        assert written({"l": [1, 2, 3]}, "†state.l[-1]", 0) == {"l": [1, 2, 0]}
        assert written({"l": [1, 2, 3]}, "†state.l[-3]", 0) == {"l": [0, 2, 3]}

    def test_field_inside_a_list_item(self) -> None:
        start = {"l": [{"a": 1}, {"a": 2}]}
        assert written(start, "†state.l[1].b", 3) == {"l": [{"a": 1}, {"a": 2, "b": 3}]}

    def test_dotted_index_is_a_list_index(self) -> None:
        assert written({"l": ["a", "b"]}, "†state.l.0", "z") == {"l": ["z", "b"]}

    def test_index_into_a_missing_list_creates_the_list(self) -> None:
        # docs/language.md: writing goes through jsonpath-ng paths, whose update_or_create
        # builds a list for an index segment; a user writing items[0] expects a list.
        assert written(None, "†state.items[0]", "v") == {"items": ["v"]}

    def test_index_then_field_into_missing_containers(self) -> None:
        assert written(None, "†state.a[0].b", "v") == {"a": [{"b": "v"}]}

    def test_index_out_of_range(self) -> None:
        state = State({"l": [1, 2, 3]})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.l[7]"), 1)
        assert (
            str(info.value) == "cannot write †state.l[7]: index 7 is out of range for a list of 3"
        )
        assert state.document() == {"l": [1, 2, 3]}
        assert state.log == []

    def test_field_through_a_string(self) -> None:
        state = State({"s": "text"})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.s.q"), 1)
        assert str(info.value) == "cannot write †state.s.q: †state.s holds str, not an object"
        assert state.log == []

    def test_index_through_an_object(self) -> None:
        state = State({"o": {"k": 1}})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.o[0]"), 1)
        assert str(info.value) == "cannot write †state.o[0]: †state.o holds dict, not a list"


# -- merge / assign --------------------------------------------------------------------
class TestMergeAndAssign:
    def test_merge_onto_a_fresh_path_sets(self) -> None:
        assert written(None, "†state.a", {"x": 1}, "merge") == {"a": {"x": 1}}

    def test_merge_is_deep(self) -> None:
        start = {"a": {"x": {"p": 1, "q": 2}, "y": 1}}
        update = {"x": {"q": 3, "r": 4}, "z": 5}
        expected = {"a": {"x": {"p": 1, "q": 3, "r": 4}, "y": 1, "z": 5}}
        assert written(start, "†state.a", update, "merge") == expected

    def test_merge_replaces_what_is_not_an_object(self) -> None:
        assert written({"a": [1]}, "†state.a", [2], "merge") == {"a": [2]}
        assert written({"a": {"x": [1]}}, "†state.a", {"x": [2]}, "merge") == {"a": {"x": [2]}}

    def test_assign_onto_a_fresh_path_sets(self) -> None:
        assert written(None, "†state.a", {"x": 1}, "assign") == {"a": {"x": 1}}

    def test_assign_is_shallow(self) -> None:
        start = {"a": {"x": {"p": 1}, "y": 1}}
        assert written(start, "†state.a", {"x": {"q": 2}}, "assign") == {
            "a": {"x": {"q": 2}, "y": 1}
        }

    def test_assign_replaces_what_is_not_an_object(self) -> None:
        assert written({"a": 1}, "†state.a", {"x": 1}, "assign") == {"a": {"x": 1}}

    def test_deep_merge_leaves_its_arguments_alone(self) -> None:
        base = {"x": {"p": 1}}
        update = {"x": {"q": 2}}
        assert deep_merge(base, update) == {"x": {"p": 1, "q": 2}}
        assert base == {"x": {"p": 1}}
        assert update == {"x": {"q": 2}}


# -- push / concat ---------------------------------------------------------------------
class TestPushAndConcat:
    def test_push_onto_a_fresh_path_makes_a_list(self) -> None:
        assert written(None, "†state.l", 1, "push") == {"l": [1]}

    def test_push_appends_the_value_itself(self) -> None:
        assert written({"l": [1]}, "†state.l", [2, 3], "push") == {"l": [1, [2, 3]]}

    def test_push_in_order(self) -> None:
        state = State()
        for value in ("a", "b", "c"):
            state.write(ref("†state.x.l"), value, "push")
        assert state.document() == {"x": {"l": ["a", "b", "c"]}}

    def test_push_onto_a_string(self) -> None:
        state = State({"s": "text"})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.s"), 1, "push")
        assert str(info.value) == "cannot push onto †state.s: it holds str, not a list"
        assert state.document() == {"s": "text"}
        assert state.log == []

    def test_push_onto_an_object(self) -> None:
        state = State({"d": {}})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.d"), 1, "push")
        assert str(info.value) == "cannot push onto †state.d: it holds dict, not a list"

    def test_concat_onto_a_fresh_path(self) -> None:
        assert written(None, "†state.l", [1, 2], "concat") == {"l": [1, 2]}

    def test_concat_appends_the_items(self) -> None:
        assert written({"l": [1]}, "†state.l", [2, [3]], "concat") == {"l": [1, 2, [3]]}

    def test_concat_of_a_value_that_is_not_a_list(self) -> None:
        state = State({"l": [1]})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.l"), 2, "concat")
        assert str(info.value) == "cannot concat onto †state.l: the value is not a list"
        assert state.document() == {"l": [1]}

    def test_concat_onto_a_string(self) -> None:
        state = State({"s": "x"})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.s"), [1], "concat")
        assert str(info.value) == "cannot concat onto †state.s: it holds str, not a list"


# -- erase -----------------------------------------------------------------------------
class TestErase:
    def test_erase_a_key(self) -> None:
        assert written({"a": 1, "b": 2}, "†state.a", None, "erase") == {"b": 2}

    def test_erase_a_nested_key(self) -> None:
        assert written({"a": {"b": 1, "c": 2}}, "†state.a.b", None, "erase") == {"a": {"c": 2}}

    def test_erase_a_list_item(self) -> None:
        assert written({"l": [1, 2, 3]}, "†state.l[1]", None, "erase") == {"l": [1, 3]}
        assert written({"l": [1, 2, 3]}, "†state.l[-1]", None, "erase") == {"l": [1, 2]}

    def test_erase_a_missing_path_changes_nothing_but_is_logged(self) -> None:
        state = State({"a": 1})
        state.write(ref("†state.nope.deeper"), None, "erase", call=4)
        assert state.document() == {"a": 1}
        assert [(e.seq, e.call, e.path, e.method) for e in state.log] == [
            (0, 4, "†state.nope.deeper", "erase")
        ]

    def test_erase_the_whole_document_then_write_again(self) -> None:
        state = State({"a": 1})
        state.write(ref("†state"), None, "erase")
        assert state.read(ref("†state.a")) is MISSING
        state.write(ref("†state.b"), 2)
        assert state.document() == {"b": 2}


# -- reads -----------------------------------------------------------------------------
class TestRead:
    STATE: ClassVar[dict[str, Any]] = {
        "l": [1, 2, 3],
        "nested": [[1, 2], [3, 4]],
        "users": [{"name": "ann"}, {"age": 3}, {"name": "bob"}],
        "empty": [],
        "s": "text",
        "zero": 0,
        "no": False,
        "blank": "",
        "null": None,
    }

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("†state.l[0]", 1),
            ("†state.l[-1]", 3),
            ("†state.l[-3]", 1),
            ("†state.nested[-1][0]", 3),
            ("†state.users[2].name", "bob"),
            ("†state.zero", 0),
            ("†state.no", False),
            ("†state.blank", ""),
            ("†state.null", None),
        ],
    )
    def test_existing_paths(self, text: str, expected) -> None:
        assert State(self.STATE).read(ref(text)) == expected

    @pytest.mark.parametrize(
        "text",
        [
            "†state.l[3]",
            "†state.l[-4]",
            "†state.missing",
            "†state.missing.deeper",
            "†state.s.x",
            "†state.l.x",
            "†state.users[1].name",
            "†state.null.x",
            '†state["users"]["0"]',
        ],
    )
    def test_missing_paths(self, text: str) -> None:
        assert State(self.STATE).read(ref(text)) is MISSING

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("†state.l[*]", [1, 2, 3]),
            ("†state.users[*].name", ["ann", "bob"]),
            ("†state.nested[*][-1]", [2, 4]),
            ("†state.nested[-1][*]", [3, 4]),
            ("†state.nested[*][*]", [1, 2, 3, 4]),
            ("†state.empty[*]", []),
        ],
    )
    def test_wildcard_reads_give_a_list(self, text: str, expected: list) -> None:
        assert State(self.STATE).read(ref(text)) == expected

    @pytest.mark.parametrize(
        "text", ["†state.missing[*]", "†state.s[*]", "†state.zero[*]", "†state.l[9][*]"]
    )
    def test_wildcard_without_a_container_is_missing(self, text: str) -> None:
        assert State(self.STATE).read(ref(text)) is MISSING

    def test_whole_document(self) -> None:
        state = State({"a": {"b": 1}})
        assert state.read(ref("†state")) == {"a": {"b": 1}}
        assert state.document() == {"a": {"b": 1}}

    def test_fresh_state_is_an_empty_object(self) -> None:
        assert State().document() == {}
        assert State().read(ref("†state")) == {}

    def test_unknown_kind_is_missing(self) -> None:
        assert State().read(ref("†data.x")) is MISSING
        assert State().read(ref("†data")) is MISSING


# -- whole documents, data kinds, input ------------------------------------------------
class TestDocumentsAndKinds:
    def test_whole_document_set(self) -> None:
        assert written({"old": 1}, "†state", {"new": 2}) == {"new": 2}

    def test_whole_document_merge(self) -> None:
        assert written({"a": {"x": 1}}, "†state", {"a": {"y": 2}}, "merge") == {
            "a": {"x": 1, "y": 2}
        }

    def test_data_kinds_read_and_write(self) -> None:
        state = State(data={"data": {"k": 1}})
        assert state.kinds == ["state", "data"]
        assert state.read(ref("†data.k")) == 1
        state.write(ref("†data.j"), 2)
        assert state.document("data") == {"k": 1, "j": 2}
        assert state.document() == {}

    def test_a_new_kind_is_created_by_its_first_write(self) -> None:
        state = State()
        state.write(ref("†notes.first"), "x")
        assert state.kinds == ["state", "notes"]
        assert state.document("notes") == {"first": "x"}

    def test_data_document_may_be_a_list(self) -> None:
        state = State(data={"rows": [1, 2]})
        state.write(ref("†rows"), 3, "push")
        assert state.document("rows") == [1, 2, 3]
        assert state.read(ref("†rows[-1]")) == 3

    def test_input_reads(self) -> None:
        state = State(input={"user": {"name": "ann"}, "n": 0})
        assert state.read(ref("†input.user.name")) == "ann"
        assert state.read(ref("†input.n")) == 0
        assert state.read(ref("†input.other")) is MISSING
        assert State().read(ref("†input.user")) is MISSING

    @pytest.mark.parametrize("text", ["†input.user", "†input"])
    def test_input_is_read_only(self, text: str) -> None:
        state = State(input={"user": "ann"})
        with pytest.raises(StateWriteError) as info:
            state.write(ref(text), "bob")
        assert str(info.value) == f"cannot write {text}: the input is read-only"
        assert state.read(ref("†input.user")) == "ann"
        assert state.log == []

    def test_wildcard_is_not_writable(self) -> None:
        state = State({"l": [1]})
        with pytest.raises(StateWriteError) as info:
            state.write(ref("†state.l[*]"), 2)
        assert str(info.value) == "cannot write through a wildcard: †state.l[*]"

    def test_state_write_error_is_an_execution_error(self) -> None:
        assert issubclass(StateWriteError, ExecutionError)
        assert StateWriteError.code == "state_write"


# -- instances -------------------------------------------------------------------------
class TestInstances:
    def test_instance_write_is_seen_by_that_instance_only(self) -> None:
        state = State()
        state.write(ref("†state.r"), 1, instance="a")
        assert state.read(ref("†state.r"), "a") == 1
        assert state.read(ref("†state.r"), "b") is MISSING
        assert state.read(ref("†state.r")) is MISSING
        assert state.document() == {}
        assert state.document("state", "a") == {"r": 1}
        assert state.document("state", "b") == {}

    def test_base_write_is_seen_by_every_instance(self) -> None:
        state = State()
        state.write(ref("†state.r"), 1, instance="a")
        state.write(ref("†state.shared"), "s")
        assert state.read(ref("†state.shared"), "a") == "s"
        assert state.read(ref("†state.shared"), "b") == "s"
        assert state.document("state", "a") == {"r": 1, "shared": "s"}

    def test_instance_read_merges_base_and_layer_layer_wins(self) -> None:
        state = State({"u": {"name": "ann", "age": 1, "tags": {"x": 1}}})
        state.write(ref("†state.u.age"), 2, instance="a")
        state.write(ref("†state.u.tags.y"), 2, instance="a")
        assert state.read(ref("†state.u"), "a") == {
            "name": "ann",
            "age": 2,
            "tags": {"x": 1, "y": 2},
        }
        assert state.read(ref("†state.u.age"), "a") == 2
        assert state.read(ref("†state.u.name"), "a") == "ann"
        assert state.read(ref("†state.u")) == {"name": "ann", "age": 1, "tags": {"x": 1}}

    def test_layer_wins_over_a_later_base_write(self) -> None:
        state = State()
        state.write(ref("†state.x"), 1, instance="a")
        state.write(ref("†state.x"), 2)
        assert state.read(ref("†state.x"), "a") == 1
        assert state.read(ref("†state.x"), "b") == 2
        assert state.read(ref("†state.x")) == 2

    def test_instances_in_order_of_first_write(self) -> None:
        state = State()
        state.write(ref("†state.x"), 1, instance="b")
        state.write(ref("†state.x"), 1)
        state.write(ref("†state.x"), 1, instance="a")
        state.write(ref("†state.y"), 1, instance="b")
        assert state.instances == ["b", "a"]

    def test_instance_push_extends_the_list_it_sees(self) -> None:
        # The instance sees [1, 2] (from the base); pushing 3 must give [1, 2, 3].
        state = State({"l": [1, 2]})
        assert state.read(ref("†state.l"), "a") == [1, 2]
        state.write(ref("†state.l"), 3, "push", instance="a")
        assert state.read(ref("†state.l"), "a") == [1, 2, 3]
        assert state.read(ref("†state.l")) == [1, 2]

    def test_instance_view_of_a_path_under_a_replaced_value(self) -> None:
        # Instance a replaced †state.a with 5, so under it there is nothing to read.
        state = State({"a": {"b": 1}})
        state.write(ref("†state.a"), 5, instance="a")
        assert state.read(ref("†state.a"), "a") == 5
        assert state.document("state", "a") == {"a": 5}
        assert state.read(ref("†state.a.b"), "a") is MISSING

    def test_instance_erase_hides_a_base_value_from_that_instance(self) -> None:
        state = State({"a": 1, "b": 2})
        state.write(ref("†state.a"), None, "erase", instance="x")
        assert state.read(ref("†state.a"), "x") is MISSING
        assert state.read(ref("†state.a")) == 1


# -- copies ----------------------------------------------------------------------------
class TestCopies:
    def test_mutating_a_written_value_does_not_change_state(self) -> None:
        state = State()
        value = {"k": [1]}
        state.write(ref("†state.a"), value)
        value["k"].append(2)
        value["new"] = True
        assert state.document() == {"a": {"k": [1]}}
        assert state.log[0].value == {"k": [1]}

    def test_mutating_a_read_value_does_not_change_state(self) -> None:
        state = State({"a": {"k": [1]}})
        state.read(ref("†state.a"))["k"].append(2)
        state.read(ref("†state.a.k")).append(3)
        state.document()["a"]["x"] = 1
        state.read(ref("†state.a"), "i")["k"].append(4)
        assert state.document() == {"a": {"k": [1]}}

    def test_mutating_an_instance_read_does_not_change_the_layer(self) -> None:
        state = State({"a": {"k": 1}})
        state.write(ref("†state.a.j"), [1], instance="i")
        state.read(ref("†state.a"), "i")["j"].append(2)
        state.document("state", "i")["a"]["k"] = 9
        assert state.read(ref("†state.a"), "i") == {"k": 1, "j": [1]}

    def test_starting_documents_are_copied(self) -> None:
        start = {"a": [1]}
        data = {"data": {"d": [1]}}
        given_input = {"i": [1]}
        state = State(start, given_input, data)
        start["a"].append(2)
        data["data"]["d"].append(2)
        given_input["i"].append(2)
        assert state.document() == {"a": [1]}
        assert state.document("data") == {"d": [1]}
        assert state.read(ref("†input.i")) == [1]
        state.read(ref("†input.i")).append(3)
        assert state.read(ref("†input.i")) == [1]

    def test_log_entries_keep_the_value_as_written(self) -> None:
        state = State()
        state.write(ref("†state.l"), [1])
        state.write(ref("†state.l"), 2, "push")
        state.write(ref("†state.l[0]"), "x")
        assert state.document() == {"l": ["x", 2]}
        assert [e.value for e in state.log] == [[1], 2, "x"]
        state.log[0].value.append("mutated")
        assert state.document() == {"l": ["x", 2]}

    def test_pushed_value_is_not_shared_with_the_log(self) -> None:
        state = State()
        entry = state.write(ref("†state.l"), {"k": 1}, "push")
        entry.value["k"] = 2
        assert state.document() == {"l": [{"k": 1}]}


# -- the write log ---------------------------------------------------------------------
class TestLog:
    def test_entries(self) -> None:
        state = State({"l": []})
        before = time.time()
        first = state.write(ref("†state.a.b"), {"v": 1}, call=0)
        second = state.write(ref("†state.l"), 7, "push", call=3, instance="i")
        third = state.write(ref("†data.q"), [1, 2], "concat", call=2)
        after = time.time()
        assert state.log == [first, second, third]
        assert all(isinstance(e, WriteEntry) for e in state.log)
        assert [(e.seq, e.call, e.instance, e.path, e.method, e.value) for e in state.log] == [
            (0, 0, None, "†state.a.b", "set", {"v": 1}),
            (1, 3, "i", "†state.l", "push", 7),
            (2, 2, None, "†data.q", "concat", [1, 2]),
        ]
        assert all(before <= e.time <= after for e in state.log)
        assert [e.time for e in state.log] == sorted(e.time for e in state.log)

    def test_path_text_is_the_reference_text(self) -> None:
        state = State({"l": [0]})
        state.write(ref('†state["a b"].c'), 1)
        state.write(ref("†state.l.0"), 1)
        state.write(ref("†state"), {"z": 1}, "merge")
        assert [e.path for e in state.log] == ['†state["a b"].c', "†state.l[0]", "†state"]

    def test_failed_writes_are_not_logged(self) -> None:
        state = State({"s": "x"})
        state.write(ref("†state.a"), 1)
        for target, method in [("†state.s", "push"), ("†input.a", "set"), ("†state.s.t", "set")]:
            with pytest.raises(StateWriteError):
                state.write(ref(target), 1, method)
        state.write(ref("†state.b"), 2)
        assert [(e.seq, e.path) for e in state.log] == [(0, "†state.a"), (1, "†state.b")]

    def test_entry_to_dict(self) -> None:
        entry = State().write(ref("†state.a"), [1], "set", call=1, instance="i")
        assert entry.to_dict() == {
            "seq": 0,
            "call": 1,
            "instance": "i",
            "path": "†state.a",
            "method": "set",
            "value": [1],
            "time": entry.time,
        }
        assert isinstance(entry.time, float)


def test_pushes_in_place_never_change_the_log_or_an_earlier_read() -> None:
    # push appends to the state's own list in place; the log and every read hold
    # copies, so later pushes never show up in them
    state = State()
    items = parse_reference("†state.items")
    first = state.write(items, {"n": 0}, "push")
    seen = state.read(items)
    state.write(items, {"n": 1}, "push")
    state.write(parse_reference("†state.items[0].n"), 9)
    assert state.document("state") == {"items": [{"n": 9}, {"n": 1}]}
    assert seen == [{"n": 0}]
    assert first.value == {"n": 0}
    assert [entry.value for entry in state.log] == [{"n": 0}, {"n": 1}, 9]
