"""``agenteval import-traces``: recorded traces (real PydanticAI and LangGraph/OpenInference
instrumentation, tests/fixtures/traces/record.py) become a scored run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.proto")

from agenteval.rundir import iter_trials, read_header
from agenteval.traces.importer import ImportOptions, import_traces, sample_key

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
PYD = FIX / "pydantic_ai.jsonl"
LG = FIX / "langgraph.pb"


def _calls(t: Any) -> list[tuple[Any, ...]]:
    return [(c.name, c.arguments, c.result, c.error) for c in t.tool_calls]


def test_pydantic_ai_traces_give_one_trial_per_agent_run() -> None:
    res = import_traces([PYD], ImportOptions())
    assert len(res.trials) == 3 and res.skipped_spans == {}
    status, spend, redacted = res.trials
    assert res.cases[status.case_id].input == (
        "What is the status of order O-1002? Answer with one word."
    )
    assert status.output == "shipped"
    assert _calls(status) == [
        (
            "get_order",
            {"order_id": "O-1002"},
            {"id": "O-1002", "status": "shipped", "total": 649.0},
            None,
        )
    ]
    assert [(u.model, u.input_tokens, u.output_tokens) for u in status.usage] == [
        ("scripted-1", 132, 11)
    ]
    assert status.tools is not None and {t["name"] for t in status.tools} == {
        "get_order",
        "customer_spend",
    }
    assert status.latency.total_s is not None and status.latency.active_s is not None
    assert 0 < status.latency.active_s <= status.latency.total_s
    assert status.metadata["service"] == "shop-assistant"
    assert "not_recorded" not in status.metadata
    assert spend.output == "C-101 spent 912.5 over 3 orders."
    # the third run was instrumented with include_content=False
    assert redacted.output is None
    assert res.cases[redacted.case_id].input == "[input not recorded]"
    assert redacted.metadata["not_recorded"] == [
        "input",
        "output",
        "tool_arguments",
        "tool_results",
    ]
    assert [c.name for c in redacted.tool_calls] == ["get_order"]


def test_langgraph_openinference_traces_give_one_trial_per_graph_invocation() -> None:
    res = import_traces([LG], ImportOptions())
    assert len(res.trials) == 2  # the graph's AGENT node spans are steps, not invocations
    one, two = res.trials
    assert res.cases[one.case_id].input == (
        "What is the status of order O-1002? Answer with one word."
    )
    assert one.output == "shipped"
    assert [(c.id, *x) for c, x in zip(one.tool_calls, _calls(one), strict=True)] == [
        (
            "call_1",
            "get_order",
            {"order_id": "O-1002"},
            {"id": "O-1002", "status": "shipped", "total": 649.0},
            None,
        )
    ]
    assert _calls(two) == [
        ("customer_spend", {"customer_id": "C-101"}, {"orders": 3, "total": 912.5}, None),
        ("customer_spend", {"customer_id": "C-999"}, None, "ValueError: no customer C-999"),
    ]
    assert two.output == "C-101 spent 912.5; C-999 is not a customer."
    assert (one.metadata["conversation"], two.metadata["conversation"]) == (
        "session-0",
        "session-1",
    )


def test_case_ids_are_stable_across_imports_and_file_order() -> None:
    a = import_traces([PYD, LG], ImportOptions())
    b = import_traces([LG, PYD], ImportOptions())
    assert sorted(t.case_id for t in a.trials) == sorted(t.case_id for t in b.trials)
    assert all(t.case_id.startswith("t-") for t in a.trials)


def test_sampling_is_deterministic_and_by_trace_id() -> None:
    ids = sorted({t.metadata["trace_id"] for t in import_traces([PYD, LG], ImportOptions()).trials})
    for seed in range(5):
        opts = ImportOptions(sample=0.5, seed=seed)
        kept = {t.metadata["trace_id"] for t in import_traces([PYD, LG], opts).trials}
        again = {t.metadata["trace_id"] for t in import_traces([LG, PYD], opts).trials}
        assert kept == again
        assert kept == {i for i in ids if sample_key(seed, i) < 0.5}
    # a larger rate keeps a superset
    small = {
        t.metadata["trace_id"] for t in import_traces([PYD, LG], ImportOptions(sample=0.3)).trials
    }
    big = {
        t.metadata["trace_id"] for t in import_traces([PYD, LG], ImportOptions(sample=0.8)).trials
    }
    assert small <= big


def _run(tmp_path: Path, cli: Any, *args: Any, name: str = "imp") -> tuple[Path, Any]:
    out = tmp_path / name
    r = cli("import-traces", *args, "--out", out)
    return out, r


def test_cli_writes_a_normal_run_with_not_applicable_scores_for_missing_content(
    tmp_path: Path, cli: Any
) -> None:
    out, r = _run(tmp_path, cli, PYD, LG)
    assert r.returncode == 0, r.stderr
    assert "44 spans, 5 invocations; 5 trials of 5 cases" in r.stderr
    assert "1 trials lack recorded content" in r.stderr
    header = read_header(out)
    assert header.format_version == 2 and header.kind == "score"
    assert header.agent is not None and header.agent["type"] == "imported-traces"
    assert [f["path"] for f in header.agent["files"]] == [str(PYD), str(LG)]
    assert all(len(f["sha256"]) == 64 for f in header.agent["files"])
    assert header.summary is not None
    trials = list(iter_trials(out))
    redacted = next(t for t in trials if "not_recorded" in t.metadata)
    for name in ("tool_arguments_valid", "tool_execution", "redundant_calls", "pii_leakage"):
        s = redacted.scores[name]
        assert s.status == "not_applicable" and s.value is None, (name, s)
        assert "the trace did not record" in s.reason
    full = next(t for t in trials if t.output == "shipped" and t.usage)
    assert full.scores["tool_arguments_valid"].status == "passed"
    assert full.scores["redundant_calls"].status == "passed"
    # the same run directory again: refused, nothing overwritten
    r2 = cli("import-traces", PYD, "--out", out)
    assert r2.returncode == 2 and "already holds a run" in r2.stderr
    assert r2.stderr.count("\n") == 1


def test_cli_filters_where_since_until(tmp_path: Path, cli: Any) -> None:
    out, r = _run(tmp_path, cli, PYD, LG, "--where", "service.name=shop-graph", name="w")
    assert r.returncode == 0, r.stderr
    assert "left out: 3 --where" in r.stderr
    assert {t.metadata["service"] for t in iter_trials(out)} == {"shop-graph"}
    starts = sorted(t.started_at for t in import_traces([PYD, LG], ImportOptions()).trials)
    cut = starts[2].isoformat()
    out2, r2 = _run(tmp_path, cli, PYD, LG, "--since", cut, name="s")
    assert r2.returncode == 0, r2.stderr
    assert len(list(iter_trials(out2))) == 3
    out3, r3 = _run(tmp_path, cli, PYD, LG, "--until", cut, name="u")
    assert r3.returncode == 0, r3.stderr
    assert len(list(iter_trials(out3))) == 2
    r4 = cli("import-traces", PYD, "--out", tmp_path / "none", "--until", "2000-01-01")
    assert r4.returncode == 2 and "no agent invocation left to import" in r4.stderr
    assert not (tmp_path / "none").exists()
    r5 = cli("import-traces", PYD, "--out", tmp_path / "bad", "--since", "last tuesday")
    assert r5.returncode == 2 and "--since 'last tuesday' is not an ISO" in r5.stderr


def test_cli_group_conversation_and_case_id_attr(tmp_path: Path, cli: Any) -> None:
    out, r = _run(tmp_path, cli, LG, "--group", "conversation", "--case-id-attr", "session.id")
    assert r.returncode == 0, r.stderr
    trials = list(iter_trials(out))
    assert sorted(t.case_id for t in trials) == ["session-0", "session-1"]
    assert all(t.metadata["conversation"] == t.case_id for t in trials)


def test_cli_conversation_merges_invocations_of_one_session(tmp_path: Path, cli: Any) -> None:
    # two invocations of one PydanticAI conversation: the second line's spans are moved
    # into the first one's conversation
    lines = PYD.read_text().splitlines()
    docs = [json.loads(x) for x in lines]
    conv = None
    for d in docs:
        for rs in d["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    for a in s.get("attributes", []):
                        if a["key"] == "gen_ai.conversation.id":
                            conv = conv or a["value"]["stringValue"]
                            a["value"]["stringValue"] = conv
    f = tmp_path / "one_conversation.jsonl"
    f.write_text("".join(json.dumps(d) + "\n" for d in docs))
    out, r = _run(tmp_path, cli, f, "--group", "conversation")
    assert r.returncode == 0, r.stderr
    (t,) = list(iter_trials(out))
    assert t.metadata["invocations"] == 3
    assert [c.name for c in t.tool_calls] == ["get_order", "customer_spend", "get_order"]
    cases = [json.loads(x) for x in (out / "cases.jsonl").read_text().splitlines()]
    # the third turn's prompt was not recorded: the first two turns are the input
    assert [m["role"] for m in cases[0]["input"]] == ["user", "assistant", "user", "assistant"]
    assert t.output is None and t.metadata["not_recorded"][0] == "input"  # the third is redacted


def test_cli_dataset_join_gets_expected_answers_and_reports_unmatched(
    tmp_path: Path, cli: Any
) -> None:
    ds = tmp_path / "cases.jsonl"
    ds.write_text(
        json.dumps({"id": "session-0", "input": "status of O-1002?", "expected": "shipped"}) + "\n"
    )
    out, r = _run(tmp_path, cli, LG, "--dataset", ds, "--join-attr", "session.id")
    assert r.returncode == 0, r.stderr
    assert "1 not in the dataset by session.id (session-1)" in r.stderr
    trials = {t.case_id: t for t in iter_trials(out)}
    assert trials["session-0"].scores["exact_match"].status == "passed"
    other = next(t for k, t in trials.items() if k != "session-0")
    assert other.scores["exact_match"].status == "not_applicable"
    r2 = cli("import-traces", LG, "--out", tmp_path / "x", "--dataset", ds)
    assert r2.returncode == 2 and "--dataset and --join-attr go together" in r2.stderr


def test_rescore_report_and_gate_work_on_an_imported_run(tmp_path: Path, cli: Any) -> None:
    a, r = _run(tmp_path, cli, PYD, LG, "--case-id-attr", "gen_ai.agent.name", name="a")
    assert r.returncode == 0, r.stderr
    b, r = _run(tmp_path, cli, PYD, LG, "--case-id-attr", "gen_ai.agent.name", name="b")
    assert r.returncode == 0, r.stderr
    rs = cli("rescore", a, "--out", tmp_path / "re")
    assert rs.returncode == 0, rs.stderr
    before = {t.key: {n: s.status for n, s in t.scores.items()} for t in iter_trials(a)}
    after = {
        t.key: {n: s.status for n, s in t.scores.items()} for t in iter_trials(tmp_path / "re")
    }
    assert before == after
    rep = cli("report", a, "--markdown", tmp_path / "r.md")
    assert rep.returncode == 0, rep.stderr
    assert "**5** trials over **3** cases" in (tmp_path / "r.md").read_text()  # 3 repeats of "shop"
    g = cli("gate", a, b, "--allow-underpowered")
    assert g.returncode == 0, g.stdout + g.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"', "bad.json:1: not JSON"),
        (LG.read_bytes()[:1000], "not an OTLP protobuf ExportTraceServiceRequest"),
        (b"", "hold no spans"),
        (b'{"resourceSpans": 3}\n', "field 'resourceSpans': must be a list"),
        (b'{"hello": 1}\n{"hello": 2}\n', "resourceSpans': missing"),
        # nested deeper than Python's JSON parser goes: one line, not a RecursionError
        (b"[" * 100_000 + b"]" * 100_000, "bad.json:1: not JSON (nested too deeply)"),
        (
            b'{"resourceSpans": []}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
            "bad.json:2: not JSON (nested too deeply)",
        ),
        (
            b'{"resourceSpans":\n' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "bad.json: not JSON (nested too deeply)",
        ),
    ],
    # short ids: a 200 KB id in PYTEST_CURRENT_TEST makes the subprocess's environment
    # too long to exec (E2BIG)
    ids=[
        "cut",
        "protobuf-cut",
        "empty",
        "not-a-list",
        "no-spans",
        "deep",
        "deep-line-2",
        "deep-in",
    ],
)
def test_unusable_files_exit_2_with_one_line(
    tmp_path: Path, cli: Any, content: bytes, expected: str
) -> None:
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    r = cli("import-traces", f, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert expected in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()


def _span(trace: str, span: str, parent: str | None, **attrs: str) -> dict[str, Any]:
    s: dict[str, Any] = {
        "traceId": trace,
        "spanId": span,
        "name": "invoke_agent a",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }
    if parent:
        s["parentSpanId"] = parent
    return s


def _doc(spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


def test_cycles_orphans_and_huge_attributes_are_counted_not_fatal(tmp_path: Path, cli: Any) -> None:
    t1, t2 = "1" * 32, "2" * 32
    big = "x" * 10_000_000
    spans = [
        _span(
            t1,
            "a" * 16,
            None,
            **{"gen_ai.operation.name": "invoke_agent", "input.value": "hi", "output.value": big},
        ),
        # two spans whose parents point at each other: no root reaches them
        _span(t1, "b" * 16, "c" * 16),
        _span(t1, "c" * 16, "b" * 16),
        # a span whose parent was never exported: a root of its own trace
        _span(t2, "d" * 16, "e" * 16, **{"input.value": "orphan", "output.value": "ok"}),
    ]
    f = tmp_path / "odd.json"
    f.write_text(_doc(spans))
    out, r = _run(tmp_path, cli, f)
    assert r.returncode == 0, r.stderr
    assert "skipped spans: 2 (parent ids in a cycle)" in r.stderr
    trials = list(iter_trials(out))
    assert sorted(len(t.output or "") for t in trials) == [2, 10_000_000]


def test_judge_works_on_an_imported_run_and_skips_unrecorded_content(
    tmp_path: Path, cli: Any
) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
    from _judge_fake import FakeJudge, Reply

    run, r = _run(tmp_path, cli, PYD)
    assert r.returncode == 0, r.stderr
    rubric = tmp_path / "helpful.txt"
    rubric.write_text("Does the answer address the question?\n{input}\n{output}\n")
    with FakeJudge(default=Reply("on point\nGRADE: C")) as srv:
        j = cli(
            "judge",
            run,
            "--out",
            tmp_path / "judged",
            "--rubric",
            f"{rubric}:binary",
            "--judge-endpoint",
            srv.base_url,
            "--judge-model",
            "jm",
            "--judge-cache",
            tmp_path / "cache",
        )
        assert j.returncode == 0, j.stderr
        assert srv.calls == 2  # the redacted trial is not sent to the judge
    scores = {t.output: t.scores["judge_helpful"] for t in iter_trials(tmp_path / "judged")}
    assert scores["shipped"].status == "passed"
    assert scores[None].status == "not_applicable"
    assert "the trace did not record the input and output" in scores[None].reason


def test_attribute_text_nested_too_deeply_is_kept_as_text(tmp_path: Path, cli: Any) -> None:
    """JSON text in an attribute (tool arguments, a result, the messages) nested deeper
    than the parser goes is recorded as the raw text, not a RecursionError traceback."""
    deep = "[" * 5000 + "]" * 5000
    t1 = "1" * 32
    root = _span(
        t1,
        "a" * 16,
        None,
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": deep,
            "gen_ai.output.messages": deep,
            "input.value": deep,
            "output.value": deep,
            "metadata": '{"langgraph_step": ' + deep + "}",
        },
    )
    tool = _span(
        t1,
        "b" * 16,
        "a" * 16,
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.arguments": deep,
            "gen_ai.tool.call.result": deep,
        },
    )
    f = tmp_path / "deep.json"
    f.write_text(_doc([root, tool]))
    out, r = _run(tmp_path, cli, f)
    assert r.returncode == 0, r.stderr
    (trial,) = iter_trials(out)
    (call,) = trial.tool_calls
    assert call.name == "lookup" and call.arguments == deep and not call.arguments_valid_json
