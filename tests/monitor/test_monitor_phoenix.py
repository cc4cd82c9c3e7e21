"""The monitor's scores in a real Arize Phoenix, read back through Phoenix's API.

Phoenix ingests OTLP traces only (``/v1/logs`` answers 405), so ``--export-otlp``'s
evaluation events cannot reach it; ``--export-phoenix URL`` sends each score as a span
annotation on the root span of the trace scored. Here an agent instrumented with the
OpenTelemetry SDK sends its traces to Phoenix and to the monitor (as a Collector fanning
out to both would); the annotations Phoenix gives back are the monitor's scores, on the
spans it scored. Uses the session's Phoenix (tests/phoenix_server.py).
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from monitor_harness import all_trials, post, served, wait_for

from agenteval.monitor import MonitorConfig


def _agent(endpoints: list[str], project: str, n: int) -> None:
    """``n`` invocations with a tool call, sent to every endpoint; every third answer
    ignores what the tool said (tool_faithfulness fails it)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    resource = Resource.create({"service.name": "shop", "openinference.project.name": project})
    provider = TracerProvider(resource=resource)
    for e in endpoints:
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=e)))
    tracer = provider.get_tracer("shop")

    def text(role: str, content: str) -> str:
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": content}]}])

    for i in range(n):
        with tracer.start_as_current_span("invoke_agent shop") as agent:
            agent.set_attribute("gen_ai.operation.name", "invoke_agent")
            agent.set_attribute("gen_ai.input.messages", text("user", f"Orders of {i}?"))
            with tracer.start_as_current_span("execute_tool count_orders") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "count_orders")
                tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"customer": i}))
                tool.set_attribute("gen_ai.tool.call.result", json.dumps({"orders": 42}))
            answer = "7 orders" if i % 3 == 0 else "42 orders"
            agent.set_attribute("gen_ai.output.messages", text("assistant", answer))
    provider.shutdown()


def _annotations(base: str, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        q = [("span_ids", s) for s in span_ids] + [("limit", "1000")]
        if cursor:
            q.append(("cursor", cursor))
        url = f"{base}/v1/projects/{project}/span_annotations?{urllib.parse.urlencode(q)}"
        with urllib.request.urlopen(url, timeout=10) as r:
            page = json.loads(r.read())
        out.extend(page["data"])
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def test_scores_reach_phoenix_as_annotations_on_the_scored_root_spans(
    tmp_path: Path, phoenix: str
) -> None:
    project = f"agenteval-monitor-{uuid.uuid4().hex[:8]}"
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, window_s=3600, idle_s=0.2, max_wait_s=2.0, tick_s=0.05)
    with served(cfg, export_phoenix=phoenix) as m:
        _agent([f"{phoenix}/v1/traces", f"{m.endpoint}/v1/traces"], project, 6)
        wait_for(lambda: m.monitor.metrics.trials == 6, timeout=20, what="6 trials")
        trials = all_trials(out)
        n_scores = sum(len(t["scores"]) for t in trials)
        export = m.monitor.metrics.gauges
        wait_for(lambda: export["evaluations_exported"]() == n_scores, timeout=30, what="sent")
        assert export["evaluations_export_dropped"]() == 0
    roots = {t["metadata"]["span_id"]: t for t in trials}
    got = _annotations(phoenix, project, sorted(roots))
    assert len(got) == n_scores
    by_span: dict[str, dict[str, dict[str, Any]]] = {}
    for a in got:
        by_span.setdefault(a["span_id"], {})[a["name"]] = a
    assert set(by_span) == set(roots)  # on the root span of every trace scored
    for span_id, t in roots.items():
        for name, s in t["scores"].items():
            a = by_span[span_id][name]
            assert a["annotator_kind"] == "CODE" and a["identifier"] == "agenteval-monitor"
            assert a["result"]["label"] == s["status"]
            assert a["result"]["explanation"] == s.get("reason")
            if s.get("value") is None:
                assert a["result"]["score"] is None
            else:
                assert a["result"]["score"] == pytest.approx(float(s["value"]))
            assert a["metadata"]["trace_id"] == t["metadata"]["trace_id"]
            assert a["metadata"]["case_id"] == t["case_id"]
    faithful = sorted(by_span[s]["tool_faithfulness"]["result"]["label"] for s in roots)
    assert faithful == ["failed"] * 2 + ["passed"] * 4


def test_phoenix_does_not_take_otlp_logs(phoenix: str) -> None:
    """Why --export-otlp is not the way to Phoenix (docs/monitor.md says so)."""
    status = post(f"{phoenix}/v1/logs", b"{}")[0]
    assert status == 405


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--export-phoenix", "ftp://x"], "--export-phoenix"),
        (
            ["--export-otlp", "http://a:4318", "--export-phoenix", "http://b:6006"],
            "give one",
        ),
    ],
)
def test_an_unusable_export_phoenix_is_refused_before_anything_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    from agenteval.cli import main

    assert main(["monitor", "--out", str(tmp_path / "m"), *args]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
