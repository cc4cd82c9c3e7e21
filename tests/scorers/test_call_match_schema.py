"""The expected_calls JSON Schema in docs/formats.md accepts its examples and the loader agrees."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from agenteval.cases.case import Case

DOC = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
SCHEMA = json.loads(re.search(r"<!-- schema: expected_calls -->\n```json\n(.*?)```", DOC, re.S)[1])  # type: ignore[index]
EXAMPLES = [
    yaml.safe_load(m) for m in re.findall(r"```yaml\n# expected_calls example\n(.*?)```", DOC, re.S)
]
VALIDATOR = Draft202012Validator(SCHEMA)

BAD: list[Any] = [
    {"name": "f", "arguments": {"x": {"$regex": "a", "$approx": 1}}},
    {"name": "f", "arguments": {"x": {"$optional": True}}},
    {"name": "f", "arguments": {"x": {"$nope": 1}}},
    {"name": "f", "arguments": {"x": {"$present": True, "a": 1}}},
    {"name": "f", "arguments": {"x": {"$any_of": 1}}},
    {"name": "f", "arguments": {"x": {"$approx": "a"}}},
    {"name": "f", "arguments": {"x": {"$regex": "a", "$tolerance": 1}}},
    {"name": "f", "strings": "fuzzy"},
    {"name": "f", "argumnts": {}},
    {"arguments": {}},
    {"name": ""},
    "f",
]


def test_the_schema_is_a_valid_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


def test_examples_are_valid_for_the_schema_and_the_loader() -> None:
    assert len(EXAMPLES) >= 2
    for example in EXAMPLES:
        assert not list(VALIDATOR.iter_errors(example))
        case = Case.model_validate({"id": "c", "input": "q", "expected_calls": example})
        assert case.call_specs() is not None


@pytest.mark.parametrize("bad", BAD, ids=[json.dumps(b)[:40] for b in BAD])
def test_what_the_schema_rejects_the_loader_rejects(bad: Any) -> None:
    assert list(VALIDATOR.iter_errors([bad]))
    with pytest.raises(ValidationError, match="expected_calls"):
        Case.model_validate({"id": "c", "input": "q", "expected_calls": [bad]})
