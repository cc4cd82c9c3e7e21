"""The fast schema check agrees with jsonschema (Draft 2020-12) wherever it applies."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agenteval.cases.fastschema import compile_check

_types = st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null"])
_num = st.one_of(st.integers(-5, 5), st.floats(-5, 5, allow_nan=False))


def _leaf() -> st.SearchStrategy[Any]:
    keyword = st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(_types, st.lists(_types, min_size=1, max_size=3, unique=True)),
            "enum": st.lists(st.sampled_from(["a", "b", "c", ""]), min_size=1, unique=True),
            "minimum": _num,
            "maximum": _num,
            "exclusiveMinimum": _num,
            "exclusiveMaximum": _num,
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(0, 3),
            "minItems": st.integers(0, 2),
            "maxItems": st.integers(0, 3),
            "pattern": st.sampled_from(["^a", "b$", "a+", "^[ab]*$", "c", "", "^(a|bc)?$"]),
            "description": st.text(max_size=5),
            "format": st.sampled_from(["email", "date-time"]),
        },
    )
    return st.one_of(st.booleans(), keyword)


schemas = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("object")},
            optional={
                "properties": st.dictionaries(st.sampled_from("abcd"), inner, max_size=3),
                "required": st.lists(st.sampled_from("abcd"), max_size=3, unique=True),
                "additionalProperties": st.one_of(st.booleans(), inner),
            },
        ),
        st.fixed_dictionaries({"items": inner}, optional={"type": st.just("array")}),
    ),
    max_leaves=6,
)

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-10, 10),
        st.floats(-10, 10, allow_nan=False),
        st.sampled_from([1.0, 2.0, -0.0, 0.5]),
        st.text(alphabet="abc", max_size=4),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from("abcde"), inner, max_size=4),
    ),
    max_leaves=8,
)


@settings(max_examples=150)
@given(schemas, st.lists(json_values, min_size=1, max_size=5))
def test_fast_check_agrees_with_jsonschema(schema: Any, instances: list[Any]) -> None:
    check = compile_check(schema)
    assert check is not None, schema  # every generated schema is in the plain subset
    reference = Draft202012Validator(schema)
    for instance in instances:
        assert check(instance) == reference.is_valid(instance), (schema, instance)


def test_unsupported_keywords_fall_back() -> None:
    schemas: list[dict[str, Any]] = [
        {"$ref": "#/$defs/x"},
        {"anyOf": [{"type": "string"}]},
        {"type": "string", "pattern": "(unclosed"},
        {"type": "string", "pattern": 5},
        {"enum": [1, 2]},
        {"const": "x"},
        {"properties": {"a": {"oneOf": []}}},
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"type": "objekt"},
    ]
    for schema in schemas:
        assert compile_check(schema) is None, schema


def test_pattern_is_searched_not_matched() -> None:
    check = compile_check({"pattern": "[0-9]+"})
    assert check is not None
    assert check("ORD-123") and not check("ORD-")
    assert check(5)  # pattern constrains strings only
    anchored = compile_check({"properties": {"id": {"pattern": "^ORD-[0-9]+$"}}})
    assert anchored is not None
    assert anchored({"id": "ORD-1"}) and not anchored({"id": "x ORD-1"})
