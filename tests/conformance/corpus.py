"""Public tool-call corpora as obelisk plans: converters and stub tools.

The corpora are vendored in ``tests/data`` (:data:`DATA_DIR`), each folder
with its upstream LICENSE and a PROVENANCE.md; the larger JSON-lines files are
stored gzip-compressed (``*.jsonl.gz``, read by :func:`read_jsonl`).  A missing
file is an error, not a skip.  Nothing here depends on pytest, so an execution
benchmark can import it too.

Every converter emits a plan as a plain JSON value (a list of call objects),
ready for :func:`obelisk.parse_plan` / :func:`obelisk.check`.  A literal string
that happens to begin with ``†`` is escaped as ``††…``, so only
the references the rules below create are expressions.

Seal-Tools (``seal-tools/{dev,test_in_domain,test_out_domain}.jsonl.gz``)
-------------------------------------------------------------------------
Call *k* of ``calling`` becomes ``{"_tool": api, <parameters>, "_outputPath":
"†state.call_k"}``.  Each API of ``tools_used.jsonl.gz`` becomes a latent tool,
``obelisk.Tool.from_schema({"name", "description", "parameters", "output"})``:

* ``parameters`` = ``{"type": "object", "properties", "required",
  "additionalProperties": false}`` -- the property names and ``required`` list
  come from the file; the API's parameter set is closed.
* ``output`` = a closed object whose properties are the API's ``responses``
  fields, all required (a tool returns every response field).
* Both schemas declare ``"$schema"`` draft-07 (:data:`SEAL_DRAFT`), which they
  fit entirely: with obelisk's default, draft 2020-12, ``Tool.from_schema``
  spends about 5 ms per tool on metaschema checks, 13 s for the 2,586 APIs,
  against under 3 s with draft-07.  ``draft=None`` gives the default draft.
* Type names map to JSON-schema types (:func:`type_schema`): ``str`` ->
  string, ``int`` -> integer, ``float`` -> number, ``bool`` -> boolean,
  ``list`` / ``List[X]`` / ``list of X`` -> array (of X), ``dict`` -> object,
  ``X or Y`` / ``Union[X, Y]`` -> both types, ``Optional[X]`` -> X or null.
  An unknown or missing type name gives no type constraint and is counted in
  :attr:`SealCatalog.unknown_types` (the current data only uses str, int, float
  and bool).  ``choices`` becomes ``enum``, ``default`` is kept; ``example(s)``
  and ``unit`` are documentation only and dropped.

References: ``responses: ["API_call_3", "API_call_4"]`` gives global names to
that call's output fields, in the order of the keys of the API's ``responses``
object.  A parameter whose *whole* value is ``"API_call_k"`` becomes
``"†state.call_<m>.<field>"``, where call *m* is the call whose ``responses``
list holds ``API_call_k`` and *field* the corresponding ``responses`` key.  The
two noisy values ``"API_call_0 response"`` (``dev-difficult-207``) are read the
same way, as ``API_call_0``.  Any other value, including text that merely
contains such a name, stays a literal; so does a name no call declares
(counted in :attr:`SealPlan.dangling`).

An API whose name obelisk refuses as a tool name (``requestFirst Aid
Assistance`` has spaces) is kept out of the registry and listed in
:attr:`SealCatalog.rejected`; calls to it stay verbatim, so ``check`` reports
them as ``unknown_tool``.

NESTFUL v2 (``nestful/v2_subset.jsonl.gz``)
-------------------------------------------
The call labelled ``$var_N`` (math) or ``$varN`` (code) becomes ``{"_tool":
name, <arguments>, "_outputPath": "†state.var_N"}`` (the label without
``$``); its tool's result is the object ``{<its single output field>: value}``,
so the whole-string argument ``"$var_1.result$"`` becomes
``"†state.var_1.result"``.  Any other string (in v2 every reference is a whole
top-level argument) is a literal.

Each record's own ``tools`` catalog (the tools used plus distractors) becomes a
registry of latent tools, built with ``Tool.from_schema``:

* ``parameters`` maps name -> schema-ish dict (one record gives the full
  JSON-schema form ``{"type": "object", "properties", "required"}``, used as
  such); it becomes a closed object schema.  Every parameter is required,
  except those marked ``"nullable": true`` (Python ``Optional[...]``, i.e.
  ``= None`` upstream) -- unless the record gives an explicit ``required``
  list, which wins.
* ``output_parameters`` (``output_parameter`` in 4 older records; also
  possibly in ``{"properties": ...}`` form) holds the single output field; the
  output is a closed object with that one required field.
* Types (:func:`type_schema`): JSON-schema names pass through, ``int`` ->
  integer, ``float`` -> number, ``int or float`` -> integer or number, ``list
  of float`` -> array of numbers, type lists are mapped and de-duplicated
  (``["object", "object"]`` occurs); ``nullable`` adds ``null``; ``items``,
  ``prefixItems``, ``properties`` and ``additionalProperties`` are converted
  recursively.  Schemas without a type (11 parameters such as ``obj: "The
  object to check."``, 16 nested ones) accept anything and are counted as
  ``<missing>``.

NESTFUL v1 (``nestful/v1/*-data.json``, structure only)
-------------------------------------------------------
As v2 (labels are ``var1``), plus the richer reference shapes of v1, for any
whole string, nested in lists and objects too: ``$var3$`` ->
``†state.var3``, ``$var1.location.name$`` -> ``†state.var1.location.name``,
``$var1.author[0].id$`` -> ``†state.var1.author[0].id`` and
``$var1.Exchange Rate$`` -> ``†state.var1["Exchange Rate"]``.  References
inside longer strings (templates, arithmetic) and decoys such as
``"$100-$500"`` stay literals.  The final pseudo-call ``var_result`` is
converted as a call to a tool named ``var_result`` without ``_outputPath``.

Stub tools
----------
:func:`stub_value` builds a fixed value from an output schema (strings name
their field, numbers are 1, booleans true, arrays hold one item, objects every
property); :func:`stub_tool` / :func:`stub_registry` turn latent tools into
callable tools with the same schemas that return that value.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import obelisk

__all__ = [
    "DATA_DIR",
    "NESTFUL_DIR",
    "NESTFUL_V1_FILES",
    "SEAL_DIR",
    "SEAL_DRAFT",
    "SEAL_SPLITS",
    "NestfulPlan",
    "SealCatalog",
    "SealPlan",
    "convert_nestful_record",
    "convert_nestful_v1_record",
    "convert_seal_record",
    "dollar_reference",
    "load_nestful_v1",
    "load_nestful_v2",
    "load_seal_catalog",
    "load_seal_split",
    "nestful_registry",
    "nestful_tool_description",
    "read_jsonl",
    "seal_tool_description",
    "state_reference",
    "stub_registry",
    "stub_tool",
    "stub_value",
    "type_schema",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
"""``<repository>/tests/data``, the vendored corpora."""
SEAL_DIR = DATA_DIR / "seal-tools"
NESTFUL_DIR = DATA_DIR / "nestful"
SEAL_SPLITS = ("dev", "test_in_domain", "test_out_domain")
SEAL_DRAFT = "http://json-schema.org/draft-07/schema#"
NESTFUL_V1_FILES = (
    "executable-data.json",
    "non-executable-glaive-data.json",
    "non-executable-sgd-data.json",
)
DAGGER = "†"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file, gzip-compressed when its name ends in ``.gz``
    (blank lines skipped)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# -- shared helpers -------------------------------------------------------------------


def state_reference(*segments: str | int) -> str:
    """``state_reference("var1", "author", 0, "Exchange Rate")`` ->
    ``†state.var1.author[0]["Exchange Rate"]`` (quoting is :func:`obelisk.ref`'s)."""
    return obelisk.ref("state", *segments)


def _literal(value: Any) -> Any:
    """Escape literal strings that begin with ``†``, anywhere inside."""
    if isinstance(value, str):
        return DAGGER + value if value.startswith(DAGGER) else value
    if isinstance(value, list):
        return [_literal(item) for item in value]
    if isinstance(value, dict):
        return {key: _literal(item) for key, item in value.items()}
    return value


_SCALARS = {
    "str": "string",
    "string": "string",
    "text": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "double": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "tuple": "array",
    "set": "array",
    "dict": "object",
    "object": "object",
    "none": "null",
    "null": "null",
}
_GENERIC = re.compile(r"(list|array|tuple|set|sequence)\s*\[\s*(.+?)\s*\]|(list|array)\s+of\s+(.+)")
_MAPPING = re.compile(r"(dict|mapping|object)\s*\[.+\]")
_OPTIONAL = re.compile(r"optional\s*\[\s*(.+?)\s*\]")
_UNION = re.compile(r"union\s*\[\s*(.+?)\s*\]")


def _merge_types(schemas: Iterable[dict[str, Any]]) -> dict[str, Any]:
    types: list[str] = []
    for schema in schemas:
        found = schema["type"]
        for name in found if isinstance(found, list) else [found]:
            if name not in types:
                types.append(name)
    return {"type": types[0] if len(types) == 1 else types}


def type_schema(name: Any) -> dict[str, Any] | None:
    """The JSON schema for a corpus type name, or None when it is unknown.

    Accepts the Python-ish names of Seal-Tools and NESTFUL (``str``, ``int or
    float``, ``List[str]``, ``list of float``, ``Optional[int]``) and JSON-schema
    names and type lists (``["integer", "number"]``, duplicates dropped).
    """
    if isinstance(name, list):
        parts = [type_schema(item) for item in name]
        if not parts or any(part is None for part in parts):
            return None
        return _merge_types(part for part in parts if part is not None)
    if not isinstance(name, str):
        return None
    text = name.strip().lower()
    if text in _SCALARS:
        return {"type": _SCALARS[text]}
    if (match := _OPTIONAL.fullmatch(text)) is not None:
        inner = type_schema(match.group(1))
        return None if inner is None else _merge_types([inner, {"type": "null"}])
    if (match := _UNION.fullmatch(text)) is not None:
        return type_schema([part for part in match.group(1).split(",")])
    if " or " in text or "|" in text:
        return type_schema(re.split(r"\s+or\s+|\s*\|\s*", text))
    if (match := _GENERIC.fullmatch(text)) is not None:
        inner_text = match.group(2) or match.group(4)
        inner = type_schema(inner_text)
        if inner is None and inner_text.endswith("s"):  # "list of strings"
            inner = type_schema(inner_text[:-1])
        return {"type": "array", **({"items": inner} if inner is not None else {})}
    if _MAPPING.fullmatch(text):
        return {"type": "object"}
    return None


# -- Seal-Tools ----------------------------------------------------------------------


@dataclass
class SealCatalog:
    """The Seal-Tools APIs: raw specs, the latent tools, and what did not convert.

    ``rejected`` maps an API name obelisk refuses as a tool name to the error;
    ``unknown_types`` counts type names mapped to "no constraint".
    """

    specs: dict[str, dict[str, Any]]
    registry: obelisk.Registry
    rejected: dict[str, str]
    unknown_types: Counter[str]


def _seal_parameter(spec: Mapping[str, Any], unknown: Counter[str]) -> dict[str, Any]:
    schema = type_schema(spec.get("type"))
    if schema is None:
        unknown[str(spec.get("type", "<missing>"))] += 1
        schema = {}
    if isinstance(spec.get("description"), str):
        schema["description"] = spec["description"]
    if isinstance(spec.get("choices"), list):
        schema["enum"] = spec["choices"]
    if "default" in spec:
        schema["default"] = spec["default"]
    return schema


def seal_tool_description(
    spec: Mapping[str, Any], unknown: Counter[str], draft: str | None = SEAL_DRAFT
) -> dict[str, Any]:
    """The ``Tool.from_schema`` description of one ``tools_used.jsonl.gz`` API;
    ``draft`` is the ``$schema`` both schemas declare (None: obelisk's default)."""
    parameters = spec.get("parameters") or {}
    responses = spec.get("responses") or {}
    header = {"$schema": draft} if draft is not None else {}
    return {
        "name": spec["api_name"],
        "description": spec.get("api_description", ""),
        "parameters": {
            **header,
            "type": "object",
            "properties": {k: _seal_parameter(v, unknown) for k, v in parameters.items()},
            "required": [name for name in spec.get("required") or [] if name in parameters],
            "additionalProperties": False,
        },
        "output": {
            **header,
            "type": "object",
            "properties": {k: _seal_parameter(v, unknown) for k, v in responses.items()},
            "required": list(responses),
            "additionalProperties": False,
        },
    }


@functools.cache
def load_seal_catalog(
    path: Path = SEAL_DIR / "tools_used.jsonl.gz", draft: str | None = SEAL_DRAFT
) -> SealCatalog:
    """Every API of ``tools_used.jsonl.gz`` as a latent tool (cached per arguments)."""
    specs: dict[str, dict[str, Any]] = {}
    tools: list[obelisk.Tool] = []
    rejected: dict[str, str] = {}
    unknown: Counter[str] = Counter()
    for spec in read_jsonl(path):
        specs[spec["api_name"]] = spec
        try:
            tools.append(obelisk.Tool.from_schema(seal_tool_description(spec, unknown, draft)))
        except obelisk.ToolDefinitionError as exc:
            rejected[spec["api_name"]] = str(exc)
    return SealCatalog(specs, obelisk.Registry(tools), rejected, unknown)


def load_seal_split(split: str) -> list[dict[str, Any]]:
    """The records of one Seal-Tools split (``dev``, ``test_in_domain``, ``test_out_domain``)."""
    return read_jsonl(SEAL_DIR / f"{split}.jsonl.gz")


@dataclass
class SealPlan:
    """One converted Seal-Tools record.

    ``references`` lists ``(consumer call, parameter, producer call, field)``;
    ``dangling`` the ``(call, parameter, value)`` of reference-like values that
    name no declared response (kept literal).
    """

    id: str
    plan: list[dict[str, Any]]
    references: list[tuple[int, str, int, str]] = field(default_factory=list)
    dangling: list[tuple[int, str, str]] = field(default_factory=list)


_SEAL_REFERENCE = re.compile(r"(API_call_\d+)(?: response)?")


def convert_seal_record(record: Mapping[str, Any], catalog: SealCatalog) -> SealPlan:
    """One Seal-Tools record as an obelisk plan (rule in the module docstring)."""
    names: dict[str, tuple[int, str]] = {}
    for index, call in enumerate(record["calling"]):
        fields = list((catalog.specs.get(call["api"]) or {}).get("responses") or {})
        for name, response_field in zip(call.get("responses") or [], fields, strict=False):
            names.setdefault(name, (index, response_field))
    result = SealPlan(record["id"], [])
    for index, call in enumerate(record["calling"]):
        converted: dict[str, Any] = {"_tool": call["api"]}
        for key, value in (call.get("parameters") or {}).items():
            match = _SEAL_REFERENCE.fullmatch(value) if isinstance(value, str) else None
            if match is not None and match.group(1) in names:
                producer, response_field = names[match.group(1)]
                converted[key] = state_reference(f"call_{producer}", response_field)
                result.references.append((index, key, producer, response_field))
            else:
                if match is not None:
                    result.dangling.append((index, key, value))
                converted[key] = _literal(value)
        converted["_outputPath"] = state_reference(f"call_{index}")
        result.plan.append(converted)
    return result


# -- NESTFUL -------------------------------------------------------------------------

_DOLLAR_REFERENCE = re.compile(r"\$(?P<label>[A-Za-z_]\w*)(?P<path>(?:\.[^.\[\]$]+|\[\d+\])*)\$")
_SEGMENT = re.compile(r"\.([^.\[\]$]+)|\[(\d+)\]")


def dollar_reference(value: Any) -> tuple[str, tuple[str | int, ...]] | None:
    """``"$var1.author[0].id$"`` -> ``("var1", ("author", 0, "id"))``; None when
    ``value`` is not wholly one NESTFUL reference."""
    if not isinstance(value, str):
        return None
    match = _DOLLAR_REFERENCE.fullmatch(value)
    if match is None:
        return None
    segments: tuple[str | int, ...] = tuple(
        name if name else int(number) for name, number in _SEGMENT.findall(match["path"])
    )
    return match["label"], segments


def _convert_nestful_value(value: Any) -> Any:
    found = dollar_reference(value)
    if found is not None:
        return state_reference(found[0], *found[1])
    if isinstance(value, list):
        return [_convert_nestful_value(item) for item in value]
    if isinstance(value, dict):
        return {key: _convert_nestful_value(item) for key, item in value.items()}
    return _literal(value)


def _nestful_schema(spec: Any, unknown: Counter[str]) -> Any:
    if not isinstance(spec, Mapping):
        return spec if isinstance(spec, bool) else {}
    schema: dict[str, Any] = {}
    if "type" in spec:
        typed = type_schema(spec["type"])
        if typed is None:
            unknown[json.dumps(spec["type"])] += 1
        else:
            schema.update(typed)
    else:
        unknown["<missing>"] += 1
    if spec.get("nullable") is True and "type" in schema:
        schema.update(_merge_types([schema, {"type": "null"}]))
    if isinstance(spec.get("description"), str):
        schema["description"] = spec["description"]
    for key in ("items", "additionalProperties"):
        if key in spec:
            schema[key] = _nestful_schema(spec[key], unknown)
    if isinstance(spec.get("prefixItems"), list):
        schema["prefixItems"] = [_nestful_schema(item, unknown) for item in spec["prefixItems"]]
    if isinstance(spec.get("properties"), Mapping):
        schema["properties"] = {
            key: _nestful_schema(item, unknown) for key, item in spec["properties"].items()
        }
    return schema


def _properties(spec: Any) -> tuple[dict[str, Any], list[str] | None]:
    """``(properties, explicit required list or None)`` of a flat or JSON-schema form."""
    if not isinstance(spec, Mapping):
        return {}, None
    if isinstance(spec.get("properties"), Mapping):
        required = spec.get("required")
        return dict(spec["properties"]), list(required) if isinstance(required, list) else None
    return dict(spec), None


def nestful_tool_description(tool: Mapping[str, Any], unknown: Counter[str]) -> dict[str, Any]:
    """The ``Tool.from_schema`` description of one NESTFUL catalog entry."""
    parameters, required = _properties(tool.get("parameters"))
    if required is None:
        required = [
            name
            for name, spec in parameters.items()
            if not (isinstance(spec, Mapping) and spec.get("nullable") is True)
        ]
    outputs, _ = _properties(tool.get("output_parameters", tool.get("output_parameter")))
    return {
        "name": tool["name"],
        "description": tool.get("description") or "",
        "parameters": {
            "type": "object",
            "properties": {k: _nestful_schema(v, unknown) for k, v in parameters.items()},
            "required": [name for name in required if name in parameters],
            "additionalProperties": False,
        },
        "output": {
            "type": "object",
            "properties": {k: _nestful_schema(v, unknown) for k, v in outputs.items()},
            "required": list(outputs),
            "additionalProperties": False,
        },
    }


@functools.lru_cache(maxsize=4096)
def _cached_tool(description_json: str) -> obelisk.Tool:
    return obelisk.Tool.from_schema(json.loads(description_json))


def nestful_registry(
    tools: Iterable[Mapping[str, Any]], unknown: Counter[str] | None = None
) -> obelisk.Registry:
    """A record's ``tools`` catalog as a registry of latent tools (first of a name wins)."""
    counter = unknown if unknown is not None else Counter()
    registry = obelisk.Registry()
    for tool in tools:
        if tool["name"] in registry:
            continue
        description = nestful_tool_description(tool, counter)
        registry.add(_cached_tool(json.dumps(description, sort_keys=True)))
    return registry


@dataclass
class NestfulPlan:
    """One converted NESTFUL record: its plan and (v2) its tool registry."""

    id: str
    plan: list[dict[str, Any]]
    registry: obelisk.Registry | None = None


def _nestful_calls(calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    plan = []
    for call in calls:
        converted: dict[str, Any] = {"_tool": call["name"]}
        for key, value in (call.get("arguments") or {}).items():
            converted[key] = _convert_nestful_value(value)
        label = call.get("label")
        if isinstance(label, str) and label:
            converted["_outputPath"] = state_reference(label.removeprefix("$"))
        plan.append(converted)
    return plan


def convert_nestful_record(
    record: Mapping[str, Any], unknown: Counter[str] | None = None
) -> NestfulPlan:
    """One NESTFUL v2 record as a plan plus a registry of its catalog's latent tools."""
    return NestfulPlan(
        record["sample_id"],
        _nestful_calls(record["output"]),
        nestful_registry(record["tools"], unknown),
    )


def convert_nestful_v1_record(record: Mapping[str, Any], ident: str) -> NestfulPlan:
    """One NESTFUL v1 record as a plan (no registry: v1 is checked for structure only)."""
    return NestfulPlan(ident, _nestful_calls(record["output"]))


def load_nestful_v2() -> list[dict[str, Any]]:
    """The NESTFUL v2 records of ``v2_subset.jsonl.gz``."""
    return read_jsonl(NESTFUL_DIR / "v2_subset.jsonl.gz")


def load_nestful_v1() -> Iterator[tuple[str, dict[str, Any]]]:
    """``(id, record)`` for every v1 record; ids are ``<file stem>-<position>``."""
    for name in NESTFUL_V1_FILES:
        records = json.loads((NESTFUL_DIR / "v1" / name).read_text(encoding="utf-8"))
        stem = name.removesuffix(".json")
        for position, record in enumerate(records):
            yield f"{stem}-{position}", record


# -- stub tools ----------------------------------------------------------------------


def stub_value(schema: Any, name: str = "value") -> Any:
    """A fixed JSON value that fits ``schema`` (for the shapes the converters emit)."""
    if not isinstance(schema, Mapping):
        return name
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    declared = schema.get("type")
    kinds = declared if isinstance(declared, list) else [declared]
    kind = next((k for k in kinds if k != "null"), kinds[0])
    if kind == "object":
        properties = schema.get("properties") or {}
        return {key: stub_value(sub, key) for key, sub in properties.items()}
    if kind == "array":
        if isinstance(schema.get("prefixItems"), list):
            return [stub_value(sub, name) for sub in schema["prefixItems"]]
        return [stub_value(schema.get("items"), name)]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return name


def stub_tool(latent: obelisk.Tool) -> obelisk.Tool:
    """A callable twin of a latent tool: same schemas, returns :func:`stub_value`.

    The stub validates its arguments with the latent tool first (raising
    :class:`obelisk.ArgumentValidationError`): a ``Tool`` built with its
    constructor does not validate against ``parameters`` by itself.
    """
    value = stub_value(latent.output_schema, latent.name)

    def stub(**arguments: Any) -> Any:
        latent.validate_arguments(arguments)
        return json.loads(json.dumps(value))  # a fresh copy per call

    return obelisk.Tool(
        latent.name,
        latent.description,
        latent.parameters,
        latent.output_schema,
        stub,
        pure=True,
    )


def stub_registry(registry: obelisk.Registry) -> obelisk.Registry:
    """Every tool of ``registry`` replaced by its :func:`stub_tool`."""
    return obelisk.Registry(stub_tool(tool) for tool in registry)
