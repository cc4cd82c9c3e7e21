"""``agenteval schema``: JSON Schemas that accept what the loaders accept and what runs hold."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agenteval.cases.case import Case
from agenteval.cli.schema import SCHEMAS, schema_for
from agenteval.rundir import RunHeader, RunWriter, read_header, trial_line
from agenteval.scoring.score import Score
from agenteval.trials.trial import Failure, Latency, Retry, ToolCall, Trial, Usage


def agenteval(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def validator(name: str) -> jsonschema.Draft202012Validator:
    s = schema_for(name)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_command_prints_a_valid_schema(name: str) -> None:
    proc = agenteval("schema", name)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed == schema_for(name)
    assert printed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(printed)


def test_unknown_contract_is_a_usage_error() -> None:
    proc = agenteval("schema", "casez")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


GOOD_CASES: list[dict[str, Any]] = [
    {"id": "a", "input": "hi"},
    {"id": 7, "input": [{"role": "user", "content": "hi"}], "expected": 19753.0},
    {
        "id": "b",
        "input": "Weather?",
        "expected": "sunny",
        "expected_tools": ["weather", "weather"],
        "expected_trajectory": ["weather"],
        "max_tool_calls": 2,
        "relevant_docs": ["doc1"],
        "must_not_contain": "IGNORE PREVIOUS",
        "canary": "CANARY-1",
        "context": "...",
        "notes": "...",
        "tags": ["tools"],
        "tools": [{"type": "function", "function": {"name": "weather", "parameters": {}}}],
        "difficulty": "hard",
    },
    {"id": "c", "input": "x", "expected_tools": {"search": 1}, "canary": ["a", "b"]},
]
BAD_CASES: list[dict[str, Any]] = [
    {"input": "no id"},
    {"id": "a"},
    {"id": "a", "input": 42},
    {"id": "a", "input": "x", "max_tool_calls": -1},
    {"id": "a", "input": "x", "expected_tools": [1]},
    {"id": "a", "input": "x", "expected": [1]},
]


def test_case_schema_accepts_the_documented_forms() -> None:
    v = validator("case")
    for good in GOOD_CASES:
        Case.model_validate(good)  # the loader agrees
        v.validate(good)
    for bad in BAD_CASES:
        assert not v.is_valid(bad), bad


def test_case_schema_accepts_stored_cases() -> None:
    v = validator("case")
    for good in GOOD_CASES:
        v.validate(Case.model_validate(good).model_dump(mode="json", exclude_defaults=True))


def test_trial_schema_accepts_minimal_and_provider_forms() -> None:
    v = validator("trial")
    v.validate({"case_id": "a"})
    v.validate({"case_id": 3, "latency": 1.2, "usage": {"model": "m", "input_tokens": 1}})
    v.validate(
        {
            "case_id": "a",
            "tool_calls": [
                {"name": "calc", "arguments": {"x": 1}},
                {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}},
            ],
        }
    )
    assert not v.is_valid({"output": "no case id"})
    assert not v.is_valid({"case_id": "a", "repeat": -1})
    assert not v.is_valid({"case_id": "a", "tool_calls": {"name": "x"}})


def _full_trial() -> Trial:
    return Trial(
        case_id="a",
        repeat=1,
        output="42",
        tool_calls=[ToolCall(name="calc", arguments={"x": 1}, result="42", duration_s=0.1)],
        usage=[Usage(model="m", input_tokens=10, output_tokens=2)],
        latency=Latency(total_s=1.5, active_s=1.0),
        retries=[Retry(reason="rate_limit", wait_s=0.5)],
        failure=Failure(cause="timeout", message="slow"),
        tools=[{"name": "calc"}],
        metadata={"k": "v"},
    )


def test_trial_record_schema_accepts_what_runs_store(tmp_path: Path) -> None:
    scores = {
        "exact_match": Score(1.0, "equal"),
        "tool_grounding": Score(None, "no canary"),
        "mine": Score(None, "boom", error="boom", usage=[Usage(model="j", input_tokens=3)]),
    }
    line = json.loads(trial_line(_full_trial(), scores))
    validator("trial-record").validate(line)
    validator("trial").validate(line)  # a run's line is also a valid trial
    bad = dict(line, scores={"x": {"value": 1.5, "reason": "too big"}})
    assert not validator("trial-record").is_valid(bad)


def test_run_schema_accepts_run_json(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run", RunHeader(scorers=["exact_match"])) as w:
        w.finish({"trials": 0})
    header = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    validator("run").validate(header)
    assert read_header(tmp_path / "run").summary == {"trials": 0}


DOCS = Path(__file__).resolve().parent.parent / "docs" / "formats.md"


def _block_after(heading: str, lang: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(f"```{lang}\n", text.index(heading)) + len(lang) + 4
    return text[start : text.index("```", start)]


def test_docs_examples_load_and_match_the_schemas(tmp_path: Path) -> None:
    from agenteval.dataset import iter_cases, scan_dataset
    from agenteval.dataset.trialfile import iter_trial_file

    files = {
        "c.jsonl": _block_after("### JSON Lines", "jsonl"),
        "c.json": _block_after("### JSON array", "json"),
        "c.yaml": _block_after("### YAML", "yaml"),
        "c.csv": _block_after("### CSV", "csv"),
    }
    case_v = validator("case")
    for name, text in files.items():
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        cases = list(iter_cases(p))
        assert len(cases) >= 2, name
        for c in cases:
            case_v.validate(c.model_dump(mode="json", exclude_defaults=True))
    assert scan_dataset(tmp_path / "c.jsonl").cases == 3
    one_tool = json.loads(" ".join(_block_after("A tool definition inside", "json").split("\n")))
    case_v.validate(one_tool)
    assert Case.model_validate(one_tool).tools is not None

    trial_v = validator("trial")
    p = tmp_path / "t.jsonl"
    p.write_text(_block_after("### Example", "jsonl"), encoding="utf-8")
    trials = list(iter_trial_file(p))
    assert [t.key for t in trials] == [("add-1", 0), ("weather-1", 0), ("weather-1", 1)]
    for line in p.read_text(encoding="utf-8").splitlines():
        trial_v.validate(json.loads(line))
    calls = _block_after("### Tool calls", "jsonl").splitlines()
    for raw in calls:
        assert ToolCall.model_validate(json.loads(raw)).name == "search"
        trial_v.validate({"case_id": "a", "tool_calls": [json.loads(raw)]})


def test_schemas_describe_score_status_and_scorer_specs(tmp_path: Path) -> None:
    line = json.loads(trial_line(_full_trial(), {"x": Score(None, "tie", status="inconclusive")}))
    assert line["scores"]["x"]["status"] == "inconclusive"
    validator("trial-record").validate(line)
    bad = dict(line, scores={"x": dict(line["scores"]["x"], status="maybe")})
    assert not validator("trial-record").is_valid(bad)
    fixture = Path(__file__).parent / "fixtures" / "runs_v0_1" / "repeats"
    validator("run").validate(json.loads((fixture / "run.json").read_text()))  # format 1
    with RunWriter.create(tmp_path / "run", RunHeader(scorers=["pii_leakage"])) as w:
        w.finish(None)
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    validator("run").validate(header)
    assert header["scorers"][0]["safety"] is True and header["format_version"] == 2
