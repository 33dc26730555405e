"""Conformance: public tool-call corpora through ``obelisk.parse_plan`` / ``obelisk.check``.

Seal-Tools and NESTFUL records are converted to obelisk plans (rules in
``corpus.py``) and checked against latent tools built from the corpora's own
schemas.  No record may crash the checker, and the
only diagnostics allowed are the ones listed here, each a true problem of the
data, counted exactly.  Independent oracles, computed from the raw records,
confirm the dependency edges and which arguments are (in)valid.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

import obelisk

from . import corpus

Key = tuple[str, int, str]  # (record id, call index, argument name)


def _argument(diagnostic: obelisk.Diagnostic) -> str:
    assert diagnostic.path is not None and diagnostic.path.startswith("args.")
    return diagnostic.path.removeprefix("args.")


def _keys(results: Iterator[tuple[str, obelisk.CheckResult]], code: str) -> set[Key]:
    return {
        (ident, d.call, _argument(d))
        for ident, result in results
        for d in result.diagnostics
        if d.code == code and d.call is not None
    }


# ======================================================================================
# Seal-Tools
# ======================================================================================

SEAL_RECORDS = {"dev": 700, "test_in_domain": 700, "test_out_domain": 654}
SEAL_WITH_REFERENCES = {"dev": 28, "test_in_domain": 30, "test_out_domain": 27}
SEAL_REFERENCE_ARGUMENTS = {"dev": 34, "test_in_domain": 38, "test_out_domain": 32}

# Every diagnostic the Seal-Tools plans produce, by split and code.  All are errors.
#
# invalid_argument -- a literal does not fit the type the API declares (see
#   SEAL_INVALID_KINDS for the breakdown): mostly numbers written as strings
#   ("63" for an int), also prose for a number ("per month"), a 3-vector for a
#   float, a number for a str.  The data is wrong; obelisk is right.
# type_mismatch -- a reference whose producing field's declared type can never be
#   the parameter's type: a diagnosis (str) as an int patient_id, a success flag
#   (bool) as an image_path.  The README warns that some references make little
#   sense; these are those whose types show it.
# Tool names with spaces ("requestFirst Aid Assistance", test_out_domain-difficult-440)
#   are accepted, so every API of tools_used.jsonl registers and no call is unknown.
SEAL_DIAGNOSTICS = {
    "dev": {"invalid_argument": 63, "type_mismatch": 9},
    "test_in_domain": {"invalid_argument": 72, "type_mismatch": 11},
    "test_out_domain": {"invalid_argument": 16, "type_mismatch": 10},
}

SEAL_INVALID_KINDS = {
    "dev": {
        "numeric string for a number/int": 57,
        "text for a number/int": 2,
        "list for a number": 4,
    },
    "test_in_domain": {
        "numeric string for a number/int": 62,
        "text for a number/int": 5,
        "list for a number": 4,
        "number for a string": 1,
    },
    "test_out_domain": {
        "numeric string for a number/int": 12,
        "list for a number": 4,
    },
}

SEAL_INVALID_SAMPLES = {
    ("dev-easy-14", 0, "age"),  # enrollYouthParticipant(age: int) <- "63"
    ("dev-easy-20", 0, "mass"),  # calculateForce(mass: float) <- "37.5"
    ("dev-difficult-215", 1, "average_purchase_frequency"),  # float <- "per month"
    ("dev-difficult-325", 1, "position1"),  # calculateCollision(position1: float) <- [0, 0, 0]
    ("test_in_domain-difficult-547", 1, "patient_id"),  # scheduleSurgery(int) <- "ABC123"
    ("test_in_domain-difficult-595", 2, "expenses"),  # calculatePropertyROI(float) <- "maintenance"
    ("test_in_domain-difficult-294", 3, "eval_data"),  # evaluateNeuralNetwork(str) <- 0.92
    ("test_out_domain-easy-9", 0, "release_year"),  # getAnimationInfo(int) <- "2000"
}

SEAL_TYPE_MISMATCH_SAMPLES = {
    ("dev-difficult-274", 1, "image_path"),  # uploadRadiologyImage.success (bool) -> str
    ("dev-difficult-300", 1, "patient_id"),  # getDiseaseDiagnosis.diagnosis (str) -> int
    ("dev-difficult-465", 1, "location"),  # getCommunityDemographics.population (int) -> str
    ("test_in_domain-difficult-237", 2, "project_id"),  # createITProject.message (str) -> int
    ("test_in_domain-difficult-648", 1, "building_id"),  # getBridgeLength.length (float) -> str
    ("test_out_domain-difficult-131", 1, "playlist_id"),  # createPlaylist.status (str) -> int
    ("test_out_domain-difficult-389", 2, "author"),  # getBookRecommendation.rating (float) -> str
    ("test_out_domain-difficult-552", 1, "user_id"),  # checkAuthentication.authenticated -> int
}

_SEAL_NAME = re.compile(r"(API_call_\d+)(?: response)?")
_KINDS = {"str": "string", "int": "number", "float": "number", "bool": "boolean"}


@functools.cache
def seal_catalog() -> corpus.SealCatalog:
    return corpus.load_seal_catalog()


@functools.cache
def seal_split(split: str) -> list[tuple[dict[str, Any], corpus.SealPlan, obelisk.CheckResult]]:
    catalog = seal_catalog()
    rows = []
    for record in corpus.load_seal_split(split):
        converted = corpus.convert_seal_record(record, catalog)
        rows.append((record, converted, obelisk.check(converted.plan, catalog.registry)))
    return rows


def _seal_param(api: str, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = seal_catalog().specs[api]["parameters"][name]
    return spec


def _seal_fits(spec: dict[str, Any], value: Any) -> bool:
    """Independent oracle: does a literal fit a Seal-Tools parameter spec?"""
    kind = spec["type"]
    if "choices" in spec and value not in spec["choices"]:
        return False
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "int":
        return number and float(value).is_integer()
    return number  # float


def _seal_invalid_kind(spec: dict[str, Any], value: Any) -> str:
    if spec["type"] in ("int", "float"):
        if isinstance(value, str):
            numeric = re.fullmatch(r"-?\d+(\.\d+)?", value.strip()) is not None
            return "numeric string for a number/int" if numeric else "text for a number/int"
        if isinstance(value, list):
            return "list for a number"
    if spec["type"] == "str" and isinstance(value, (int, float)):
        return "number for a string"
    return f"other: {spec['type']} <- {json.dumps(value)}"


def _seal_producers(record: dict[str, Any]) -> dict[str, int]:
    return {
        name: index for index, call in enumerate(record["calling"]) for name in call["responses"]
    }


def test_seal_catalog() -> None:
    catalog = seal_catalog()
    assert len(catalog.specs) == 2587
    assert len(catalog.registry) == 2587
    assert catalog.rejected == {}
    assert "requestFirst Aid Assistance" in catalog.registry
    # The data only uses str/int/float/bool, all mapped: nothing fell back to "any".
    assert catalog.unknown_types == Counter()
    assert all(tool.latent for tool in catalog.registry)


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        ("str", {"type": "string"}),
        ("int", {"type": "integer"}),
        ("float", {"type": "number"}),
        ("bool", {"type": "boolean"}),
        ("dict", {"type": "object"}),
        ("list", {"type": "array"}),
        ("List[str]", {"type": "array", "items": {"type": "string"}}),
        ("list of strings", {"type": "array", "items": {"type": "string"}}),
        ("list of float", {"type": "array", "items": {"type": "number"}}),
        ("Optional[int]", {"type": ["integer", "null"]}),
        ("int or float", {"type": ["integer", "number"]}),
        (["object", "object"], {"type": "object"}),
        ("Dict[str, int]", {"type": "object"}),
        ("datetime", None),
        (None, None),
    ],
)
def test_type_names(name: Any, schema: dict[str, Any] | None) -> None:
    assert corpus.type_schema(name) == schema


@pytest.mark.parametrize("split", corpus.SEAL_SPLITS)
def test_seal_records_convert_and_check(split: str) -> None:
    rows = seal_split(split)
    assert len(rows) == SEAL_RECORDS[split]
    for record, converted, result in rows:
        assert result.plan is not None, (record["id"], result.diagnostics)
        assert len(result.plan) == len(record["calling"])
        assert converted.dangling == []


@pytest.mark.parametrize("split", corpus.SEAL_SPLITS)
def test_seal_references(split: str) -> None:
    rows = seal_split(split)
    with_references = [converted.id for _, converted, _ in rows if converted.references]
    assert len(with_references) == SEAL_WITH_REFERENCES[split]
    nested = json.loads((corpus.SEAL_DIR / "nested_ids.json").read_text(encoding="utf-8"))
    assert len(nested) == 85
    assert set(with_references) == {i for i in nested if i.startswith(split + "-")}
    arguments = sum(len(converted.references) for _, converted, _ in rows)
    assert arguments == SEAL_REFERENCE_ARGUMENTS[split]


def test_seal_noisy_reference_form() -> None:
    """``"API_call_0 response"`` (twice, in dev-difficult-207) is a reference too."""
    rows = {converted.id: converted for _, converted, _ in seal_split("dev")}
    plan = rows["dev-difficult-207"].plan
    assert plan[1]["text"] == plan[2]["restaurant_id"] == "†state.call_0.evolution"
    noisy = [
        value
        for split in corpus.SEAL_SPLITS
        for record, _, _ in seal_split(split)
        for call in record["calling"]
        for value in call["parameters"].values()
        if isinstance(value, str) and "API_call_" in value and not value.startswith("API_call_")
    ]
    assert noisy == []  # no reference-like text inside longer values


@pytest.mark.parametrize("split", corpus.SEAL_SPLITS)
def test_seal_expected_diagnostics(split: str) -> None:
    rows = seal_split(split)
    found = Counter(d.code for _, _, result in rows for d in result.diagnostics)
    assert dict(found) == SEAL_DIAGNOSTICS[split]
    assert all(d.severity == "error" for _, _, r in rows for d in r.diagnostics)


@pytest.mark.parametrize("split", corpus.SEAL_SPLITS)
def test_seal_invalid_arguments_are_data_errors(split: str) -> None:
    """invalid_argument is reported for exactly the literals that do not fit the
    declared type (independent oracle), and each is a known kind of data error."""
    rows = seal_split(split)
    reported = _keys(((c.id, r) for _, c, r in rows), "invalid_argument")
    expected: set[Key] = set()
    kinds: Counter[str] = Counter()
    for record, _, _ in rows:
        producers = _seal_producers(record)
        for index, call in enumerate(record["calling"]):
            if call["api"] not in seal_catalog().registry:
                continue
            for name, value in call["parameters"].items():
                is_reference = isinstance(value, str) and _SEAL_NAME.fullmatch(value)
                spec = _seal_param(call["api"], name)
                if is_reference and is_reference.group(1) in producers:
                    continue
                if not _seal_fits(spec, value):
                    expected.add((record["id"], index, name))
                    kinds[_seal_invalid_kind(spec, value)] += 1
    assert reported == expected
    assert dict(kinds) == SEAL_INVALID_KINDS[split]
    samples = {key for key in SEAL_INVALID_SAMPLES if key[0].startswith(split + "-")}
    assert samples <= reported


@pytest.mark.parametrize("split", corpus.SEAL_SPLITS)
def test_seal_type_mismatches_are_data_errors(split: str) -> None:
    """type_mismatch is reported for exactly the references whose producing field
    and parameter have disjoint declared types (independent oracle)."""
    rows = seal_split(split)
    reported = _keys(((c.id, r) for _, c, r in rows), "type_mismatch")
    expected: set[Key] = set()
    for record, _, _ in rows:
        producers = _seal_producers(record)
        for index, call in enumerate(record["calling"]):
            for name, value in call["parameters"].items():
                match = _SEAL_NAME.fullmatch(value) if isinstance(value, str) else None
                if match is None or match.group(1) not in producers:
                    continue
                producer = record["calling"][producers[match.group(1)]]
                position = producer["responses"].index(match.group(1))
                fields = seal_catalog().specs[producer["api"]]["responses"]
                produced = list(fields.values())[position]["type"]
                accepted = _seal_param(call["api"], name)["type"]
                if _KINDS[produced] != _KINDS[accepted]:
                    expected.add((record["id"], index, name))
    assert reported == expected
    assert len(reported) == SEAL_DIAGNOSTICS[split]["type_mismatch"]
    samples = {key for key in SEAL_TYPE_MISMATCH_SAMPLES if key[0].startswith(split + "-")}
    assert samples <= reported


def test_seal_has_no_unknown_tool() -> None:
    found = [
        (converted.id, d.call, d.path)
        for split in corpus.SEAL_SPLITS
        for _, converted, result in seal_split(split)
        for d in result.diagnostics
        if d.code == "unknown_tool"
    ]
    assert found == []


@pytest.mark.parametrize("split", corpus.SEAL_SPLITS)
def test_seal_edges_follow_references(split: str) -> None:
    for record, _, result in seal_split(split):
        producers = _seal_producers(record)
        expected = set()
        for index, call in enumerate(record["calling"]):
            for value in call["parameters"].values():
                match = _SEAL_NAME.fullmatch(value) if isinstance(value, str) else None
                if match is not None and match.group(1) in producers:
                    expected.add((producers[match.group(1)], index))
        assert result.graph is not None
        assert set(result.graph.edges) == expected, record["id"]


def test_seal_default_draft_gives_the_same_diagnostics() -> None:
    """The catalog declares draft-07 for speed; with obelisk's default draft the
    nested records and every record with a diagnostic check the same."""
    rows = [
        (record, converted, result)
        for split in corpus.SEAL_SPLITS
        for record, converted, result in seal_split(split)
        if converted.references or result.diagnostics
    ]
    names = {call["api"] for record, _, _ in rows for call in record["calling"]}
    unknown: Counter[str] = Counter()
    tools = []
    for name in sorted(names - set(seal_catalog().rejected)):
        spec = seal_catalog().specs[name]
        tools.append(obelisk.Tool.from_schema(corpus.seal_tool_description(spec, unknown, None)))
    registry = obelisk.Registry(tools)
    for _, converted, result in rows:
        again = obelisk.check(converted.plan, registry)
        assert [(d.code, d.call, d.path) for d in again.diagnostics] == [
            (d.code, d.call, d.path) for d in result.diagnostics
        ], converted.id


def test_seal_stubs_fit_their_output_schemas() -> None:
    stubs = corpus.stub_registry(seal_catalog().registry)
    for latent in seal_catalog().registry:
        stub = stubs[latent.name]
        assert not stub.latent
        arguments = {
            name: corpus.stub_value(latent.parameter_schema(name), name) for name in latent.required
        }
        assert latent.validate_output(stub(**arguments)) == [], latent.name
    with pytest.raises(obelisk.ArgumentValidationError):
        stubs["enrollYouthParticipant"](age="63")


# ======================================================================================
# NESTFUL v2
# ======================================================================================

NESTFUL_RECORDS = 215

# Every NESTFUL v2 diagnostic.  All are true problems of the record's own catalog:
# the types the upstream generator derived from Python hints contradict each other
# (duck typing lets the Python run anyway), so a schema-checked run cannot pass
# these values.  No math record has any diagnostic.
NESTFUL_DIAGNOSTICS: dict[Key, str] = {
    # remove_non_letters -> array (its description says "returns a list of strings"),
    # consonants_only(text: string)
    ("2ead49c7-655d-402d-94e3-b08fcd91175d", 1, "text"): "type_mismatch",
    # generate_bit_patterns -> array, concatenate_one_by_one(string: object|string)
    ("f00c7690-65d0-4638-b0db-6161d103b176", 1, "string"): "type_mismatch",
    # camel_case_to_underscore -> string, contains_value(value: integer|number)
    ("63be82cb-0498-4662-80a3-cb4623de13e4", 1, "value"): "type_mismatch",
    # encode_32bit_int -> object (a bytearray), bytes_to_binary(byte_list: array)
    ("54485469-8521-4248-a917-2b0086395491", 1, "byte_list"): "type_mismatch",
    # convert_to_url_slug -> string, generate_numpy_boilerplate(shape: object) ...
    ("f8fe2146-d079-43e3-af9f-c86156d82c86", 1, "shape"): "type_mismatch",
    # ... and dtype: object (a numpy dtype) given the literal "float64"
    ("f8fe2146-d079-43e3-af9f-c86156d82c86", 1, "dtype"): "invalid_argument",
    # generate_frequency_table -> object (a dict), top_three(numbers: array)
    ("06d6141e-c66b-4719-bc30-21fa22ee65bb", 1, "numbers"): "type_mismatch",
    # find_kth_largest -> integer, convert_to_float_or_string(input_string: string)
    ("e3e68bf5-479b-450b-8c4f-c635b0f75604", 1, "input_string"): "type_mismatch",
}

_NESTFUL_UNKNOWN: Counter[str] = Counter()


@functools.cache
def nestful_v2() -> list[tuple[dict[str, Any], corpus.NestfulPlan, obelisk.CheckResult]]:
    rows = []
    for record in corpus.load_nestful_v2():
        converted = corpus.convert_nestful_record(record, _NESTFUL_UNKNOWN)
        rows.append((record, converted, obelisk.check(converted.plan, converted.registry)))
    return rows


def _raw_edges(calls: list[dict[str, Any]]) -> set[tuple[int, int]]:
    """Edges implied by ``$label...$`` references, straight from the raw record."""
    writers: dict[str, list[int]] = {}
    for index, call in enumerate(calls):
        if call.get("label"):
            writers.setdefault(call["label"].lstrip("$"), []).append(index)

    def strings(value: Any) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)

    edges = set()
    for index, call in enumerate(calls):
        for text in strings(call["arguments"]):
            if len(text) > 2 and text[0] == text[-1] == "$" and "$" not in text[1:-1]:
                label = re.split(r"[.\[]", text[1:-1], maxsplit=1)[0]
                edges |= {(w, index) for w in writers.get(label, ()) if w != index}
    return edges


def test_nestful_records_convert_and_check() -> None:
    rows = nestful_v2()
    assert len(rows) == NESTFUL_RECORDS
    for record, converted, result in rows:
        assert result.plan is not None, (record["sample_id"], result.diagnostics)
        assert len(result.plan) == len(record["output"])
        assert len(converted.registry or ()) == len({t["name"] for t in record["tools"]})
        # every record has at least one reference (README)
        assert any(c.expressions for c in result.plan), record["sample_id"]
    # parameters without a type accept anything: 11 top-level, 16 nested
    assert Counter({"<missing>": 27}) == _NESTFUL_UNKNOWN


def test_nestful_reference_conversion() -> None:
    first = nestful_v2()[0][1].plan  # 91820795-...: generate_integer_string -> altered_string
    assert first[0]["_outputPath"] == "†state.var1"
    assert first[1]["s"] == "†state.var1.output_0"
    labels: Counter[str] = Counter()
    for record, converted, _ in nestful_v2():
        for call, raw in zip(converted.plan, record["output"], strict=True):
            labels[re.sub(r"\d+", "N", raw["label"])] += 1
            assert call["_outputPath"] == "†state." + raw["label"][1:]
            for name, value in raw["arguments"].items():
                if isinstance(value, str) and re.fullmatch(r"\$[^$]+\$", value):
                    label, field = value[1:-1].split(".")
                    assert call[name] == f"†state.{label}.{field}"
                else:
                    assert call[name] == value
    assert labels == Counter({"$var_N": 788, "$varN": 112})


def test_nestful_nullable_parameters_are_optional() -> None:
    """integer_list_to_string(file_path: nullable string, "an optional file path")
    is called without file_path: not a missing_argument.  An explicit required
    list wins over nullable (generate_drs_uri.obj_id in fa57c28a-...)."""
    rows = {record["sample_id"]: converted for record, converted, _ in nestful_v2()}
    registry = rows["6be90b58-deac-47bf-8d35-2b0176618f91"].registry
    assert registry is not None
    tool = registry["integer_list_to_string"]
    assert "file_path" in tool.parameter_names
    assert "file_path" not in tool.required
    assert tool.parameters["properties"]["file_path"]["type"] == ["string", "null"]
    explicit = rows["fa57c28a-e9d8-44fb-a358-a9404a557d5b"].registry
    assert explicit is not None
    assert "obj_id" in explicit["generate_drs_uri"].required


def test_nestful_expected_diagnostics() -> None:
    rows = nestful_v2()
    found = {
        (record["sample_id"], d.call, _argument(d)): d.code
        for record, _, result in rows
        for d in result.diagnostics
    }
    count = sum(len(result.diagnostics) for _, _, result in rows)
    assert count == len(found) == 8
    assert found == NESTFUL_DIAGNOSTICS
    assert Counter(found.values()) == Counter({"type_mismatch": 7, "invalid_argument": 1})
    index = {
        row["sample_id"]: row for row in corpus.read_jsonl(corpus.NESTFUL_DIR / "v2_index.jsonl")
    }
    assert {index[key[0]]["kind"] for key in found} == {"code"}


def test_nestful_edges_follow_references() -> None:
    for record, _, result in nestful_v2():
        assert result.graph is not None
        assert set(result.graph.edges) == _raw_edges(record["output"]), record["sample_id"]


def test_nestful_stubs_fit_their_output_schemas() -> None:
    seen = set()
    for _, converted, _ in nestful_v2():
        assert converted.registry is not None
        for latent in converted.registry:
            if id(latent) in seen:
                continue
            seen.add(id(latent))
            arguments = {
                name: corpus.stub_value(latent.parameter_schema(name), name)
                for name in latent.required
            }
            output = corpus.stub_tool(latent)(**arguments)
            assert latent.validate_output(output) == [], latent.name
            assert latent.output_schema is not None
            assert list(output) == list(latent.output_schema["properties"])


# ======================================================================================
# NESTFUL v1 (structure only)
# ======================================================================================

# check() without tools, structural codes only.  True problems of the data:
# var_result gathers a label no call has (6 records: 4 of them reuse a label where
# the next number was meant, e.g. glaive-94 labels two calls var1 and reads var2),
# and glaive-45 labels two independent calls var3.
NESTFUL_V1_STRUCTURE = {
    ("non-executable-glaive-data-45", 3): "write_conflict",
    ("non-executable-glaive-data-45", 4): "unresolved_reference",
    ("non-executable-glaive-data-94", 2): "unresolved_reference",
    ("non-executable-glaive-data-103", 2): "unresolved_reference",
    ("non-executable-glaive-data-104", 2): "unresolved_reference",
    ("non-executable-sgd-data-18", 3): "unresolved_reference",
    ("non-executable-sgd-data-34", 2): "unresolved_reference",
}


@functools.cache
def nestful_v1() -> list[tuple[dict[str, Any], corpus.NestfulPlan, obelisk.Plan]]:
    rows = []
    for ident, record in corpus.load_nestful_v1():
        converted = corpus.convert_nestful_v1_record(record, ident)
        rows.append((record, converted, obelisk.parse_plan(converted.plan)))
    return rows


def test_nestful_v1_parses() -> None:
    rows = nestful_v1()
    assert len(rows) == 85 + 169 + 46
    for record, _, plan in rows:
        assert len(plan) == len(record["output"])


def test_nestful_v1_reference_shapes() -> None:
    converted: list[str] = []
    literals: list[str] = []
    for record, plan, _ in nestful_v1():
        for raw, call in zip(record["output"], plan.plan, strict=True):
            for name, value in raw["arguments"].items():
                values = value if isinstance(value, list) else [value]
                outs = call[name] if isinstance(value, list) else [call[name]]
                for before, after in zip(values, outs, strict=True):
                    if not isinstance(before, str) or "$" not in before:
                        continue
                    if after == before:
                        literals.append(before)
                    else:
                        converted.append(after)
    shapes: Counter[str] = Counter()
    for text in converted:
        assert text.startswith("†state.var")
        if re.fullmatch(r"†state\.var\d+", text):
            shapes["whole output"] += 1
        elif "[" in text and '["' not in text:
            shapes["indexing"] += 1
        elif '["' in text:
            shapes["field with spaces"] += 1
        elif text.count(".") > 2:
            shapes["deep path"] += 1
        else:
            shapes["field"] += 1
    assert shapes == Counter(
        {
            "whole output": 669,
            "field": 426,
            "deep path": 26,
            "field with spaces": 6,
            "indexing": 5,
        }
    )
    assert {'†state.var1["Exchange Rate"]', "†state.var1.author[0].id"} <= set(converted)
    assert "†state.var1.location.name" in converted
    assert "†state.var1.movies[0]" in converted
    # references inside longer strings and money decoys stay literal
    assert sum(bool(re.search(r"\$var\d", text)) for text in literals) == 12
    assert {"5 * $var1.Exchange Rate$", "Meeting ID: $var1.event_id$", "$100-$500"} <= set(literals)


def test_nestful_v1_structure() -> None:
    found = {}
    for _, converted, _ in nestful_v1():
        for d in obelisk.check(converted.plan).diagnostics:
            if d.code in ("unknown_tool", "invalid_argument", "missing_argument"):
                continue  # no tools given: v1 is checked for structure only
            found[(converted.id, d.call)] = d.code
    assert found == NESTFUL_V1_STRUCTURE


def test_nestful_v1_edges_follow_references() -> None:
    for record, converted, plan in nestful_v1():
        graph = obelisk.PlanGraph(plan)
        assert set(graph.edges) == _raw_edges(record["output"]), converted.id
