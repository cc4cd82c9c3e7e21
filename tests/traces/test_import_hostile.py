"""``import-traces`` on hostile trace files (issue 28, causes 1-6): out-of-range times,
huge and non-ASCII integers, lone surrogates, blank case ids, deep nesting and spans
without ids. Each gives exit 0 or exit 2 with one ``agenteval: error:`` line, never a
traceback, and never a RUN_DIR left on exit 2 (docs/reliability.md §10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hostile_traces import T0, attr, oi_span, otlp_request, otlp_span, write_lines

from agenteval.cli import main


def _run(tmp: Path, capsys: Any, *files: Path, args: tuple[str, ...] = ()) -> tuple[int, str]:
    code = main(["import-traces", *map(str, files), "--out", str(tmp / "out"), "--quiet", *args])
    return code, capsys.readouterr().err


def _refused(tmp: Path, code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.startswith("agenteval: error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, err
    assert not (tmp / "out").exists(), "a half-written RUN_DIR was left"


def _trials(tmp: Path) -> list[dict[str, Any]]:
    lines = (tmp / "out" / "trials.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("startTimeUnixNano", str(10**25)),
        ("startTimeUnixNano", -(10**20)),
        ("endTimeUnixNano", 1 << 64),
        ("startTimeUnixNano", "²"),  # str.isdigit() is true, int() refuses it
        ("startTimeUnixNano", "9" * 5000),  # over Python's 4,300-digit limit
    ],
)
def test_an_otlp_time_out_of_range_is_refused_naming_the_field(
    tmp_path: Path, capsys: Any, field: str, value: Any
) -> None:
    f = write_lines(
        tmp_path / "t.jsonl", [otlp_request(otlp_span(0), otlp_span(1, **{field: value}))]
    )
    code, err = _run(tmp_path, capsys, f)
    why = "must be an integer" if value == "²" else "out of range"
    _refused(tmp_path, code, err, "t.jsonl", f"spans[1].{field}", why)


def test_a_5000_digit_json_number_is_refused_as_not_json(tmp_path: Path, capsys: Any) -> None:
    good = json.dumps(otlp_request(otlp_span(0)))
    bad = json.dumps(otlp_request(otlp_span(1))).replace(
        '"attributes"', f'"x": {"9" * 5000}, "attributes"'
    )
    f = tmp_path / "t.jsonl"
    f.write_text(good + "\n" + bad + "\n")
    code, err = _run(tmp_path, capsys, f)
    _refused(tmp_path, code, err, "t.jsonl:2", "not JSON")
    f.write_text(bad + "\n")  # the first line too
    code, err = _run(tmp_path, capsys, f)
    _refused(tmp_path, code, err, "t.jsonl:1", "not JSON")


@pytest.mark.parametrize(
    "time", ["0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]
)
def test_an_openinference_time_out_of_range_is_refused(
    tmp_path: Path, capsys: Any, time: str
) -> None:
    f = write_lines(tmp_path / "p.jsonl", [oi_span(0), oi_span(1, start_time=time)])
    code, err = _run(tmp_path, capsys, f)
    _refused(tmp_path, code, err, "p.jsonl:2", "start_time", "out of range")


def test_lone_surrogates_in_prompts_ids_and_conversations_become_u_fffd(
    tmp_path: Path, capsys: Any
) -> None:
    s0 = otlp_span(0)
    s0["attributes"] = [
        attr("gen_ai.operation.name", "invoke_agent"),
        attr("input.value", "half an emoji \ud83d here"),
        attr("output.value", "and \udc00 there"),
        attr("case", "id-\ud800"),
        attr("gen_ai.conversation.id", "conv-\udfff"),
    ]
    s0["name"] = "invoke_agent \ud83d"
    f = write_lines(tmp_path / "t.jsonl", [otlp_request(s0, otlp_span(1))])
    for group in ("invocation", "conversation"):
        out = tmp_path / "out"
        code, err = _run(tmp_path, capsys, f, args=("--case-id-attr", "case", "--group", group))
        assert code == 0, err
        cases = (out / "cases.jsonl").read_bytes().decode("utf-8")  # valid UTF-8
        assert "half an emoji \ufffd here" in cases and "id-\ufffd" in cases
        trials = _trials(tmp_path)
        assert trials[0]["output"] == "and \ufffd there"
        assert trials[0]["case_id"] == "id-\ufffd"
        if group == "conversation":
            assert trials[0]["metadata"]["conversation"] == "conv-\ufffd"
        import shutil

        shutil.rmtree(out)
    # without --case-id-attr the conversation id is hashed into the case id
    code, err = _run(tmp_path, capsys, f, args=("--group", "conversation"))
    assert code == 0, err
    assert _trials(tmp_path)[0]["case_id"].startswith("t-")


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_a_blank_case_id_attr_value_on_a_later_invocation_keeps_the_hash_id(
    tmp_path: Path, capsys: Any, blank: str
) -> None:
    later = otlp_span(1)
    later["attributes"][3] = attr("case", blank)
    f = write_lines(tmp_path / "t.jsonl", [otlp_request(otlp_span(0), later)])
    code, err = _run(tmp_path, capsys, f, args=("--case-id-attr", "case"))
    assert code == 0, err
    ids = [t["case_id"] for t in _trials(tmp_path)]
    assert ids[0] == "c0" and ids[1].startswith("t-"), ids


def _nest(doc: Any, marker: str, open_: str, close: str, n: int, leaf: str) -> str:
    """``doc`` as JSON with the string ``marker`` replaced by a value nested ``n`` deep
    (written as text: ``json.dumps`` itself cannot go that deep)."""
    return json.dumps(doc).replace(json.dumps(marker), open_ * n + leaf + close * n)


def test_openinference_attributes_nested_600_deep_are_refused_in_one_line(
    tmp_path: Path, capsys: Any
) -> None:
    f = tmp_path / "p.jsonl"
    for open_, close, leaf in (('{"k": ', "}", '"leaf"'), ("[", "]", '"x"')):
        deep = oi_span(1, attributes={"input": {"value": "q"}, "metadata": "@"})
        f.write_text(json.dumps(oi_span(0)) + "\n" + _nest(deep, "@", open_, close, 600, leaf))
        code, err = _run(tmp_path, capsys, f)
        _refused(tmp_path, code, err, "p.jsonl:2", "nested deeper than")


def test_otlp_kvlist_values_nested_deep_are_refused_in_one_line(
    tmp_path: Path, capsys: Any
) -> None:
    s = otlp_span(1)
    s["attributes"].append({"key": "deep", "value": "@"})
    f = tmp_path / "t.jsonl"
    kv = '{"kvlistValue": {"values": [{"key": "k", "value": '
    f.write_text(_nest(otlp_request(otlp_span(0), s), "@", kv, "}]}}", 120, '{"stringValue": "x"}'))
    code, err = _run(tmp_path, capsys, f)
    _refused(tmp_path, code, err, "t.jsonl", "nested deeper than")


@pytest.mark.parametrize(
    "broken",
    [
        {"spanId": None},
        {"spanId": ""},
        {"traceId": ""},
        {"traceId": "0" * 32},
        {"spanId": "AAAAAAAAAAA="},  # all zeros in base64
    ],
)
def test_otlp_spans_without_ids_among_good_ones_are_skipped_and_counted(
    tmp_path: Path, capsys: Any, broken: dict[str, Any]
) -> None:
    spans = [otlp_span(0), otlp_span(1, **broken), otlp_span(2), otlp_span(3)]
    f = write_lines(tmp_path / "t.jsonl", [otlp_request(*spans)])
    code = main(["import-traces", str(f), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert len(_trials(tmp_path)) == 3
    assert "skipped spans: 1 (no trace or span id)" in err, err
    header = json.loads((tmp_path / "out" / "run.json").read_text())
    assert header["settings"]["import"]["skipped_spans"] == {"no trace or span id": 1}


def test_openinference_spans_without_ids_are_skipped_and_counted(
    tmp_path: Path, capsys: Any
) -> None:
    docs = [
        oi_span(0),
        oi_span(1, context={"trace_id": "0" * 32, "span_id": "1" * 16}),
        oi_span(2, context={"trace_id": "2" * 32}),
        oi_span(3),
    ]
    f = write_lines(tmp_path / "p.jsonl", docs)
    code = main(["import-traces", str(f), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert len(_trials(tmp_path)) == 2
    assert "2 (no trace or span id)" in err


def test_a_malformed_id_is_still_refused(tmp_path: Path, capsys: Any) -> None:
    f = write_lines(tmp_path / "t.jsonl", [otlp_request(otlp_span(0, spanId="zz"))])
    code, err = _run(tmp_path, capsys, f)
    _refused(tmp_path, code, err, "spanId", "not a hex or base64 id")


def test_times_at_the_edges_of_the_range_are_read(tmp_path: Path, capsys: Any) -> None:
    edge = otlp_span(1, startTimeUnixNano="1", endTimeUnixNano=str((1 << 64) - 1))
    f = write_lines(tmp_path / "t.jsonl", [otlp_request(otlp_span(0), edge)])
    code, err = _run(tmp_path, capsys, f)
    assert code == 0, err
    starts = sorted(t["started_at"] for t in _trials(tmp_path))
    assert starts[0].startswith("1970-01-01") and str(T0)[:2]
