"""Dataset loading: four formats, one validated Case stream, precise errors."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agenteval.cases.case import Case
from agenteval.dataset import (
    canonical_case_json,
    iter_cases,
    load_case_index,
    scan_dataset,
)
from agenteval.errors import InputError

CASES: list[dict[str, Any]] = [
    {"id": "q1", "input": "What is 2+2?", "expected": 4, "tags": ["math"]},
    {
        "id": "q2",
        "input": [{"role": "user", "content": "Weather in Paris?"}],
        "expected_tools": ["weather", "weather"],
        "expected_trajectory": ["weather"],
        "max_tool_calls": 2,
        "must_not_contain": ["password"],
        "canary": "CANARY-7",
        "source": "handwritten",
    },
]


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def err(path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        list(iter_cases(path))
    return info.value


def jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


# ------------------------------------------------------------------ formats


def test_jsonl_json_yaml_csv_give_the_same_cases(tmp_path: Path) -> None:
    a = write(tmp_path / "c.jsonl", jsonl(CASES))
    b = write(tmp_path / "c.json", json.dumps(CASES, indent=4))
    c = write(tmp_path / "c.yaml", yaml.safe_dump({"cases": CASES}))
    d = write(tmp_path / "c.yml", yaml.safe_dump(CASES))
    cases = list(iter_cases(a))
    assert [x.id for x in cases] == ["q1", "q2"]
    assert cases[1].expected_tools == {"weather": 2}
    assert cases[1].canary == ["CANARY-7"]
    assert cases[1].metadata == {"source": "handwritten"}
    for other in (b, c, d):
        assert list(iter_cases(other)) == cases
    shas = {scan_dataset(p).sha256 for p in (a, b, c, d)}
    assert len(shas) == 1


def test_csv_rules(tmp_path: Path) -> None:
    text = (
        "id,input,expected,expected_tools,tags,max_tool_calls,tools,must_not_contain,source\n"
        'q1,"What is\nthe answer?",42,search | search|calc,"[""a"", ""b""]",3,'
        '"[{""name"": ""calc""}]",,web\n'
        "\n"
        'q2,"[{""role"": ""user"", ""content"": ""hi""}]",,"{""search"": 1}",x,,,"a|b",\n'
        "q3,[not messages] plain text\n"
    )
    p = write(tmp_path / "c.csv", text)
    q1, q2, q3 = iter_cases(p)
    assert q1.input == "What is\nthe answer?"
    assert q1.expected == "42"  # CSV cells are text; exact_match compares numbers by value
    assert q1.expected_tools == {"search": 2, "calc": 1}
    assert q1.tags == ["a", "b"]
    assert q1.max_tool_calls == 3
    assert q1.tools == [{"name": "calc", "parameters": {"type": "object", "properties": {}}}]
    assert q1.must_not_contain is None  # empty cell = absent
    assert q1.metadata == {"source": "web"}
    assert q2.input == [{"role": "user", "content": "hi"}]
    assert q2.expected is None
    assert q2.expected_tools == {"search": 1}
    assert q2.must_not_contain == ["a", "b"]
    assert q3.input == "[not messages] plain text"


def test_csv_row_line_is_the_physical_line_where_it_starts(tmp_path: Path) -> None:
    p = write(tmp_path / "c.csv", 'id,input,max_tool_calls\na,"x\ny\nz",1\n\nb,y,lots\n')
    e = err(p)
    assert (e.file, e.line, e.field) == (str(p), 6, "max_tool_calls")
    assert "whole number" in e.message and "'lots'" in e.message


def test_csv_header_problems(tmp_path: Path) -> None:
    e = err(write(tmp_path / "a.csv", "name,input\nx,y\n"))
    assert (e.line, e.field) == (1, "id")
    assert "missing column 'id'" in str(e) and "name, input" in str(e)
    e = err(write(tmp_path / "b.csv", "id,input,id\nx,y,z\n"))
    assert e.line == 1 and "twice" in e.message
    e = err(write(tmp_path / "c.csv", "id,input\nx,y,z\n"))
    assert e.line == 2 and "3 cells" in e.message
    e = err(write(tmp_path / "d.csv", "id,input,tools\nx,y,[oops\n"))
    assert (e.line, e.field) == (2, "tools") and "not valid JSON" in e.message
    e = err(write(tmp_path / "e.csv", "\ufeffid,input\n"))
    assert e.message == "contains no cases"
    e = err(write(tmp_path / "f.csv", ""))
    assert "is empty" in e.message


def test_yaml_reports_the_line_of_the_bad_field(tmp_path: Path) -> None:
    p = write(
        tmp_path / "c.yaml",
        "cases:\n  - id: a\n    input: hi\n  - id: b\n    input: x\n\n    max_tool_calls: many\n",
    )
    e = err(p)
    assert (e.line, e.field) == (7, "max_tool_calls")
    assert "(got 'many')" in e.message


def test_yaml_keeps_yes_no_and_dates_as_text(tmp_path: Path) -> None:
    text = "- id: 2024-01-01\n  input: ok?\n  expected: yes\n  flag: true\n"
    p = write(tmp_path / "c.yaml", text)
    (case,) = iter_cases(p)
    assert case.id == "2024-01-01" and case.expected == "yes"
    assert case.metadata == {"flag": True}


def test_yaml_structure_errors(tmp_path: Path) -> None:
    e = err(write(tmp_path / "a.yaml", "id: a\ninput: b\n"))
    assert "'cases:' list" in e.message
    e = err(write(tmp_path / "b.yaml", "cases: {id: a}\n"))
    assert e.line == 1 and "list of cases" in e.message
    e = err(write(tmp_path / "c.yaml", "- id: a\n  input: [unclosed\n- id: b\n"))
    assert e.line == 3 and e.message.startswith("not valid YAML")
    e = err(write(tmp_path / "d.yaml", "- id: a\n  input: !!binary aGVsbG8=\n"))
    assert (e.line, e.field) == (2, "input") and "bytes" in e.message
    e = err(write(tmp_path / "e.yaml", "- id: a\n  input: x\n  expected: .nan\n"))
    assert (e.line, e.field) == (3, "expected") and "NaN" in e.message
    e = err(write(tmp_path / "f.yaml", "   \n"))
    assert "is empty" in e.message


def test_jsonl_skips_blank_lines_and_a_bom(tmp_path: Path) -> None:
    p = write(tmp_path / "c.ndjson", "\ufeff" + jsonl(CASES[:1]) + "\n   \n" + jsonl(CASES[1:]))
    assert [c.id for c in iter_cases(p)] == ["q1", "q2"]


def test_jsonl_is_streamed(tmp_path: Path) -> None:
    p = write(tmp_path / "c.jsonl", jsonl(CASES) + "{broken\n")
    it = iter_cases(p)
    assert next(it).id == "q1"  # yielded before the broken line is read
    assert next(it).id == "q2"
    with pytest.raises(InputError) as info:
        next(it)
    assert info.value.line == 3


def test_memory_stays_flat_while_streaming(tmp_path: Path) -> None:
    p = tmp_path / "big.jsonl"
    pad = "x" * 2000
    with open(p, "w", encoding="utf-8") as f:
        for i in range(4_000):
            f.write(json.dumps({"id": f"c{i}", "input": "q", "context": pad}) + "\n")
    size = p.stat().st_size
    tracemalloc.start()
    try:
        ref = scan_dataset(p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ref.cases == 4_000
    assert peak < size / 4, (peak, size)  # ids are kept, case bodies are not


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ('{"id": "a", "input": "x"}\n{"id": "b", "input": \n', 2, None, "not valid JSON"),
        ('{"id": "a", "input": "x"}\n["a", "b"]\n', 2, None, "must be an object, got a list"),
        ('{"input": "x"}\n', 1, "id", "is required"),
        ('{"id": "a"}\n', 1, "input", "is required"),
        ('{"id": ["a"], "input": "x"}\n', 1, "id", "must be a string"),
        ('{"id": "", "input": "x"}\n', 1, "id", "must not be empty"),
        ('{"id": "a", "input": 7}\n', 1, "input", "non-empty list of chat messages"),
        ('{"id": "a", "input": "x", "expected_tools": [1]}\n', 1, "expected_tools", "tool names"),
        ('{"id": "a", "input": "x", "max_tool_calls": -1}\n', 1, "max_tool_calls", "(got -1)"),
        ('{"id": "a", "input": "x", "context": ["p"]}\n', 1, "context", "got a list"),
        ('{"id": "a", "input": "x", "expected": true}\n', 1, "expected", "string or a number"),
        ('{"id": "a", "input": "x", "expected": NaN}\n', 1, "expected", "NaN"),
        ('{"id": "a", "input": "x", "meta": {"w": Infinity}}\n', 1, "meta.w", "Infinity"),
        ('{"id": "a", "input": "x", "tools": [{"type": "function"}]}\n', 1, "tools", "'function'"),
        ('{"id": "a", "input": "x", "metadata": 3}\n', 1, "metadata", "must be an object (got 3)"),
    ],
)
def test_jsonl_errors_name_line_and_field(
    tmp_path: Path, text: str, line: int, field: str | None, words: str
) -> None:
    p = write(tmp_path / "c.jsonl", text)
    e = err(p)
    assert (e.file, e.line, e.field) == (str(p), line, field)
    assert words in e.message
    assert str(e).startswith(f"{p}:{line}: ")


def test_truncated_last_line_says_so(tmp_path: Path) -> None:
    e = err(write(tmp_path / "c.jsonl", '{"id": "a", "input": "x"}\n{"id": "b", "inp'))
    assert e.line == 2 and "cut short" in e.message


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    e = err(write(tmp_path / "c.jsonl", b'{"id": "a", "input": "x"}\n{"id": "\xff"}\n'))
    assert e.line == 2 and "UTF-8" in e.message and "0xff at column 9" in e.message
    e = err(write(tmp_path / "c.json", b'[\n{"id": "a", "input": "\xc3"}]'))
    assert e.line == 2 and "UTF-8" in e.message


def test_json_array_errors(tmp_path: Path) -> None:
    e = err(write(tmp_path / "a.json", '[\n  {"id": "a", "input": "x"},\n  3\n]'))
    assert e.line == 3 and "got a number" in e.message
    e = err(write(tmp_path / "b.json", '{"id": "a", "input": "x"}'))
    assert "JSON array" in e.message and ".jsonl" in e.message
    e = err(write(tmp_path / "c.json", '[\n {"id": "a", "input": "x"}\n {"id": "b"}]'))
    assert e.line == 3 and "expected ',' or ']'" in e.message
    e = err(write(tmp_path / "d.json", '[{"id": "a", "input": "x"}] []'))
    assert "extra data" in e.message
    e = err(write(tmp_path / "e.json", "[\n\n {1: 2}]"))
    assert e.line == 3 and "not valid JSON" in e.message
    e = err(write(tmp_path / "f.json", "[]"))
    assert e.message == "contains no cases"
    e = err(write(tmp_path / "g.json", "  "))
    assert "is empty" in e.message


def test_path_problems_are_reported_at_once(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        iter_cases(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        iter_cases(tmp_path)
    p = write(tmp_path / "cases.txt", "")
    with pytest.raises(InputError) as info:
        iter_cases(p)
    assert "'.txt'" in str(info.value) and ".jsonl" in str(info.value) and ".csv" in str(info.value)


def test_empty_dataset(tmp_path: Path) -> None:
    assert err(write(tmp_path / "c.jsonl", "")).message == "contains no cases"
    assert err(write(tmp_path / "d.jsonl", "\n \n")).message == "contains no cases"


# ------------------------------------------------------------------ scan and index


def test_scan_dataset_counts_hashes_and_rejects_duplicates(tmp_path: Path) -> None:
    p = write(tmp_path / "c.jsonl", jsonl(CASES))
    ref = scan_dataset(p)
    assert ref.cases == 2 and ref.path == str(p) and len(ref.sha256 or "") == 64
    spaced_text = "\n".join(json.dumps(c, separators=(" ,", " : ")) + "  " for c in CASES)
    spaced = write(tmp_path / "s.jsonl", spaced_text)
    assert scan_dataset(spaced).sha256 == ref.sha256
    changed = write(tmp_path / "x.jsonl", jsonl([CASES[0], {**CASES[1], "max_tool_calls": 3}]))
    assert scan_dataset(changed).sha256 != ref.sha256
    dup = write(tmp_path / "d.jsonl", jsonl([CASES[0], CASES[1], {"id": "q1", "input": "again"}]))
    for fn in (scan_dataset, load_case_index):
        with pytest.raises(InputError) as info:
            fn(dup)
        e = info.value
        assert (e.line, e.field) == (3, "id")
        assert "duplicate id 'q1' (first at line 1)" in e.message


def test_load_case_index(tmp_path: Path) -> None:
    index = load_case_index(write(tmp_path / "c.yaml", yaml.safe_dump(CASES)))
    assert list(index) == ["q1", "q2"] and index["q1"].expected == 4


def test_canonical_json_is_stable() -> None:
    a = Case.model_validate({"input": "x", "id": "a", "tags": [], "expected_tools": ["t", "t"]})
    b = Case.model_validate({"id": "a", "input": "x", "expected_tools": {"t": 2}})
    assert canonical_case_json(a) == canonical_case_json(b)
    assert canonical_case_json(a) == '{"expected_tools":{"t":2},"id":"a","input":"x"}'


# ------------------------------------------------------------------ properties

_text = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=12).filter(
    lambda s: s.strip() == s and s.strip() != ""
)
_name = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)


@st.composite
def case_dicts(draw: st.DrawFn, for_csv: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {"id": draw(_text), "input": draw(_text)}
    if draw(st.booleans()):
        d["expected"] = draw(_text if for_csv else st.one_of(_text, st.integers(-999, 999)))
    if draw(st.booleans()):
        d["expected_tools"] = draw(st.lists(_name, min_size=1, max_size=4))
    if draw(st.booleans()):
        d["expected_trajectory"] = draw(st.lists(_name, min_size=1, max_size=4))
    if draw(st.booleans()):
        d["max_tool_calls"] = draw(st.integers(0, 50))
    for key in ("relevant_docs", "must_not_contain", "canary", "tags"):
        if draw(st.booleans()):
            d[key] = draw(st.lists(_text.filter(lambda s: "|" not in s), min_size=1, max_size=3))
    for key in ("context", "notes"):
        if draw(st.booleans()):
            d[key] = draw(_text)
    if draw(st.booleans()):
        d["tools"] = [{"name": draw(_name), "description": draw(_text)}]
    return d


def _to_csv(cases: list[dict[str, Any]]) -> str:
    cols = ["id", "input", *sorted({k for c in cases for k in c} - {"id", "input"})]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(cols)
    for c in cases:
        row = []
        for col in cols:
            v = c.get(col)
            row.append("" if v is None else v if isinstance(v, str | int) else json.dumps(v))
        w.writerow(row)
    return buf.getvalue()


_fast = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_fast
@given(st.lists(case_dicts(), min_size=1, max_size=4, unique_by=lambda d: d["id"]))
def test_round_trip_jsonl_and_yaml(cases: list[dict[str, Any]]) -> None:
    import tempfile

    expected = [Case.model_validate(c) for c in cases]
    with tempfile.TemporaryDirectory() as d:
        a = write(Path(d) / "c.jsonl", jsonl(cases))
        b = write(Path(d) / "c.yaml", yaml.safe_dump(cases, allow_unicode=True))
        assert list(iter_cases(a)) == expected
        assert list(iter_cases(b)) == expected
        assert scan_dataset(a).sha256 == scan_dataset(b).sha256


@_fast
@given(st.lists(case_dicts(for_csv=True), min_size=1, max_size=4, unique_by=lambda d: d["id"]))
def test_round_trip_csv(cases: list[dict[str, Any]]) -> None:
    import tempfile

    expected = [Case.model_validate(c) for c in cases]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.csv"
        p.write_text(_to_csv(cases), encoding="utf-8", newline="")
        assert list(iter_cases(p)) == expected


@settings(max_examples=150, deadline=None)
@given(
    st.binary(max_size=300) | st.text(max_size=200).map(str.encode),
    st.sampled_from([".jsonl", ".json", ".yaml", ".csv"]),
)
def test_random_bytes_raise_only_input_error(data: bytes, ext: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = write(Path(d) / f"c{ext}", data)
        try:
            for case in iter_cases(p):
                assert isinstance(case, Case)
        except InputError as e:
            assert str(e).startswith(str(p))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
_keys = st.sampled_from([*Case.model_fields, "x"])


@settings(max_examples=120, deadline=None)
@given(st.lists(st.dictionaries(_keys, _json, max_size=6) | _json, min_size=1, max_size=3))
def test_random_records_raise_only_input_error(rows: list[Any]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.jsonl"
        p.write_text(jsonl(rows), encoding="utf-8")
        try:
            ref = scan_dataset(p)
            assert ref.cases == len(rows)
        except InputError as e:
            assert e.file == str(p) and e.line is not None
