"""``agenteval export-otel``: a run as OpenTelemetry traces, and back with import-traces."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from agenteval.cases.case import Case
from agenteval.rundir import RunHeader, RunWriter, iter_trials, write_cases
from agenteval.scorers.config import ScorerConfig, build_scorers
from agenteval.traces.tracefile import read_file
from agenteval.trials.trial import Failure, Latency, ToolCall, Trial, Usage

T0 = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


def _same(a: Path, b: Path) -> None:
    """Same trials (trajectory, answer, usage, latency, failure) and the same scores."""
    x = {t.key: t for t in iter_trials(a)}
    y = {t.key: t for t in iter_trials(b)}
    assert set(x) == set(y)
    for k, t in x.items():
        u = y[k]
        assert [(c.id, c.name, c.arguments, c.result, c.error) for c in t.tool_calls] == [
            (c.id, c.name, c.arguments, c.result, c.error) for c in u.tool_calls
        ], k
        for c, d in zip(t.tool_calls, u.tool_calls, strict=True):
            if c.started_at is not None:
                assert c.started_at == d.started_at
            if c.duration_s is not None:
                assert d.duration_s == pytest.approx(c.duration_s, abs=1e-6)
        assert (t.output, t.usage, t.failure, t.tools) == (u.output, u.usage, u.failure, u.tools)
        assert t.started_at == u.started_at
        assert u.latency.total_s == pytest.approx(t.latency.total_s, abs=1e-6)
        if t.latency.active_s is None:
            assert u.latency.active_s is None
        else:
            assert u.latency.active_s == pytest.approx(t.latency.active_s, abs=1e-6)
        assert {n: s.to_dict() for n, s in t.scores.items()} == {
            n: s.to_dict() for n, s in u.scores.items()
        }, k


def test_demo_runs_round_trip_with_the_same_trajectories_and_scores(
    tmp_path: Path, cli: Any
) -> None:
    demo = tmp_path / "demo"
    r = cli("demo", "--dir", demo)
    assert r.returncode == 0, r.stderr
    for name in ("careful", "sloppy"):
        f = tmp_path / f"{name}.jsonl"
        e = cli("export-otel", demo / "runs" / name, "--file", f)
        assert e.returncode == 0, e.stderr
        assert e.stdout.startswith("exported 34 traces (") and str(f) in e.stdout
        back = tmp_path / f"{name}-back"
        i = cli(
            "import-traces", f, "--out", back,
            "--dataset", demo / "cases.jsonl", "--join-attr", "agenteval.case.id",
        )  # fmt: skip
        assert i.returncode == 0, i.stderr
        _same(demo / "runs" / name, back)


def _scripted_run(tmp_path: Path) -> Path:
    """A run of a scripted agent: usage of two models, model time, a failed call with raw
    arguments, a tool returning None, a failed trial, and a message-list input."""
    cases = [
        Case(id="a", input="What is 6 x 7?", expected="42"),
        Case(
            id="b",
            input=[
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "order O-1?"},
            ],
        ),
        Case(id="c", input="status of O-2?"),
    ]
    tools = [{"name": "calc", "parameters": {"type": "object"}, "description": "math"}]
    trials = [
        Trial(
            case_id="a",
            output="42",
            tool_calls=[
                ToolCall(
                    id="c1",
                    name="calc",
                    arguments={"expr": "6*7"},
                    result=42,
                    started_at=T0,
                    duration_s=0.25,
                ),
                ToolCall(
                    id="c2",
                    name="calc",
                    arguments='{"expr": 6*',
                    error="bad json",
                    started_at=T0,
                    duration_s=0.0,
                ),
                ToolCall(
                    id="c3", name="log", arguments={}, result=None, started_at=T0, duration_s=0.01
                ),
            ],
            usage=[
                Usage(model="m1", input_tokens=10, output_tokens=3),
                Usage(model="m2", input_tokens=7, output_tokens=2),
            ],
            latency=Latency(total_s=1.5, active_s=0.8),
            started_at=T0,
            tools=tools,
        ),
        Trial(case_id="b", output="shipped", latency=Latency(total_s=0.5), started_at=T0),
        Trial(
            case_id="c",
            output=None,
            failure=Failure(cause="timeout", message="no answer in 30s"),
            latency=Latency(total_s=30.0),
            started_at=T0,
        ),
    ]
    scorers = build_scorers(ScorerConfig())
    run = tmp_path / "scripted"
    with RunWriter.create(run, RunHeader(scorers=scorers.specs, agent={"name": "calc-bot"})) as w:
        write_cases(run, cases)
        by_id = {c.id: c for c in cases}
        for t in trials:
            w.append(t, scorers.apply(by_id[t.case_id], t))
    return run


def test_scripted_run_round_trips_usage_failures_and_tool_errors(tmp_path: Path, cli: Any) -> None:
    run = _scripted_run(tmp_path)
    f = tmp_path / "out.jsonl"
    assert cli("export-otel", run, "--file", f).returncode == 0
    back = tmp_path / "back"
    i = cli(
        "import-traces", f, "--out", back,
        "--dataset", run / "cases.jsonl", "--join-attr", "agenteval.case.id",
    )  # fmt: skip
    assert i.returncode == 0, i.stderr
    _same(run, back)
    # without the dataset, the recorded input is the case input
    plain = tmp_path / "plain"
    assert cli("import-traces", f, "--out", plain).returncode == 0
    inputs = [json.loads(x)["input"] for x in (plain / "cases.jsonl").read_text().splitlines()]
    assert "What is 6 x 7?" in inputs
    assert [m["content"] for m in next(i for i in inputs if isinstance(i, list))] == [
        "hi",
        "hello",
        "order O-1?",
    ]


def test_exported_spans_follow_the_genai_conventions(tmp_path: Path, cli: Any) -> None:
    run = _scripted_run(tmp_path)
    f = tmp_path / "out.jsonl"
    assert cli("export-otel", run, "--file", f, "--service-name", "shop").returncode == 0
    lines = f.read_text().splitlines()
    assert len(lines) == 3  # one trace per line
    spans = list(read_file(f))
    assert {s.resource["service.name"] for s in spans} == {"shop"}
    a = [s for s in spans if s.trace_id == spans[0].trace_id]
    root = next(s for s in a if s.parent_id is None)
    assert root.name == "invoke_agent calc-bot"
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["agenteval.case.id"] == "a"
    assert root.end_ns is not None and root.start_ns is not None
    assert (root.end_ns - root.start_ns) / 1e9 == pytest.approx(1.5)
    chats = [s for s in a if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert [(s.name, s.attributes["gen_ai.usage.input_tokens"]) for s in chats] == [
        ("chat m1", 10),
        ("chat m2", 7),
    ]
    tools = [s for s in a if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert [s.name for s in tools] == ["execute_tool calc", "execute_tool calc", "execute_tool log"]
    assert all(s.parent_id == root.span_id for s in chats + tools)
    assert json.loads(tools[0].attributes["gen_ai.tool.call.arguments"]) == {"expr": "6*7"}
    assert tools[1].status == "error" and tools[1].status_message == "bad json"
    evals = {e.attributes["gen_ai.evaluation.name"]: e.attributes for e in root.events}
    assert set(evals) >= {"exact_match", "tool_execution"}
    assert all(e.name == "gen_ai.evaluation.result" for e in root.events)
    em = evals["exact_match"]
    assert em["gen_ai.evaluation.score.value"] == 1.0
    assert em["gen_ai.evaluation.score.label"] == "passed"
    assert "gen_ai.evaluation.explanation" in em
    failed = next(s for s in spans if s.attributes.get("agenteval.case.id") == "c")
    assert failed.status == "error" and failed.attributes["error.type"] == "timeout"
    # the same run exported again: the same ids (a backend sees the same traces)
    f2 = tmp_path / "again.jsonl"
    assert cli("export-otel", run, "--file", f2, "--service-name", "shop").returncode == 0
    assert f2.read_bytes() == f.read_bytes()


def test_export_never_overwrites_and_refuses_the_runs_own_files(tmp_path: Path, cli: Any) -> None:
    run = _scripted_run(tmp_path)
    f = tmp_path / "taken.jsonl"
    f.write_text("keep me\n")
    r = cli("export-otel", run, "--file", f)
    assert r.returncode == 2 and "exists; export-otel never overwrites a file" in r.stderr
    assert f.read_text() == "keep me\n"
    r2 = cli("export-otel", run, "--file", run / "trials.jsonl")
    assert r2.returncode == 2 and r2.stderr.count("\n") == 1
    r3 = cli("export-otel", tmp_path / "nope", "--file", tmp_path / "x.jsonl")
    assert r3.returncode == 2 and "is not a run directory" in r3.stderr
    assert not (tmp_path / "x.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scripted", "taken.jsonl"]


def test_unreachable_endpoint_exits_5_with_one_line(tmp_path: Path, cli: Any) -> None:
    run = _scripted_run(tmp_path)
    t = time.monotonic()
    r = cli("export-otel", run, "--otlp-endpoint", "http://user:pw@127.0.0.1:9", "--timeout", "1")
    assert r.returncode == 5, r.stderr
    assert "did not accept the trace of case 'a'" in r.stderr
    assert "pw" not in r.stderr
    assert time.monotonic() - t < 30


def test_an_endpoint_that_is_not_a_url_is_refused_without_echoing_it(
    tmp_path: Path, cli: Any
) -> None:
    """``user:key@host:4318`` has no scheme, so it is no URL and the key is not scrubbed
    as a URL's password would be: the message must not repeat it."""
    run = _scripted_run(tmp_path)
    r = cli("export-otel", run, "--otlp-endpoint", "user:s3cr3tkey@127.0.0.1:4318")
    assert r.returncode == 2
    assert "s3cr3tkey" not in r.stderr + r.stdout
    assert r.stderr.strip().splitlines() == [
        "agenteval: error: --otlp-endpoint must be an http:// or https:// URL with a host"
    ]
