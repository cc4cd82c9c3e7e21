"""The OTLP endpoint: what is acknowledged, refused, or pushed back; and /metrics."""

from __future__ import annotations

import time
import zlib
from pathlib import Path

import pytest
from monitor_harness import (
    agent_trace,
    all_trials,
    get,
    gzipped,
    otlp_json,
    post,
    served,
    span,
    wait_for,
)
from prometheus_client.parser import text_string_to_metric_families

from agenteval.monitor import MonitorConfig
from agenteval.monitor.wal import read_segment


def _config(out: Path, **kw: object) -> MonitorConfig:
    base: dict[str, object] = dict(out=out, idle_s=0.2, max_wait_s=2.0, tick_s=0.05)
    return MonitorConfig(**{**base, **kw})  # type: ignore[arg-type]


def _protobuf(spans_json: bytes) -> bytes:
    import json

    from google.protobuf.json_format import Parse
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    doc = json.loads(spans_json)
    for rs in doc["resourceSpans"]:  # protobuf JSON wants base64 ids
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                for k in ("traceId", "spanId", "parentSpanId"):
                    if k in s:
                        import base64

                        s[k] = base64.b64encode(bytes.fromhex(s[k])).decode()
    return Parse(json.dumps(doc), ExportTraceServiceRequest()).SerializeToString()


def _metrics(endpoint: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, parsed by prometheus_client's own text parser."""
    out = {}
    for fam in text_string_to_metric_families(get(endpoint + "/metrics")):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_json_protobuf_and_gzip_are_acknowledged_and_scored(tmp_path: Path) -> None:
    with served(_config(tmp_path)) as m:
        url = m.endpoint + "/v1/traces"
        status, _, body = post(url, otlp_json(agent_trace(1)))
        assert (status, body) == (200, b"{}")
        status, _, body = post(url, _protobuf(otlp_json(agent_trace(2))), "application/x-protobuf")
        assert (status, body) == (200, b"")
        status, _, _ = post(
            url, gzipped(otlp_json(agent_trace(3))), headers={"Content-Encoding": "gzip"}
        )
        assert status == 200
        deflated = zlib.compress(otlp_json(agent_trace(4)))
        assert post(url, deflated, headers={"Content-Encoding": "deflate"})[0] == 200
        # the file is written before the counters (they follow the done log's fsync)
        wait_for(lambda: m.monitor.metrics.traces_scored == 4, what="4 traces scored")
        got = _metrics(m.endpoint)
    trials = all_trials(tmp_path)
    assert sorted(int(t["metadata"]["trace_id"], 16) for t in trials) == [1, 2, 3, 4]
    assert {t["output"] for t in trials} == {"The answer is 42"}
    assert got[("agenteval_monitor_spans_total", ())] == 8
    assert got[("agenteval_monitor_traces_scored_total", ())] == 4
    assert got[("agenteval_monitor_requests_total", (("code", "200"), ("signal", "traces")))] == 4


def test_refusals_are_one_line_each_and_never_acknowledged(tmp_path: Path) -> None:
    with served(_config(tmp_path)) as m:
        url = m.endpoint + "/v1/traces"
        assert post(url, b"{not json")[0] == 400
        assert post(url, b"x", "text/plain")[0] == 415
        assert post(url, b"x", headers={"Content-Encoding": "br"})[0] == 415
        assert post(url, otlp_json(agent_trace(1)), headers={"Host": "evil.example"})[0] == 421
        assert post(url, b"x" * 100, headers={"Content-Encoding": "gzip"})[0] == 400
        bomb = gzipped(b"0" * (17 << 20))  # 17 MiB once inflated, 17 KB sent
        assert post(url, bomb, headers={"Content-Encoding": "gzip"})[0] == 413
        wait_for(lambda: len(m.said) >= 5, what="five lines")
        assert post(url, otlp_json(agent_trace(1)))[0] == 200  # and it still acknowledges
        wait_for(lambda: m.monitor.metrics.trials == 1, what="the good request scored")
    assert all(line.startswith("agenteval monitor: HTTP ") for line in m.said)
    assert all("\n" not in line for line in m.said)
    # nothing refused reached the log or a window: only the one good request did
    logged = [f for p in sorted((tmp_path / ".monitor" / "wal").iterdir())
              for f in read_segment(p)[0]]  # fmt: skip
    assert len(logged) == 1
    assert [int(t["metadata"]["trace_id"], 16) for t in all_trials(tmp_path)] == [1]


def test_over_the_memory_bound_answers_429_with_retry_after(tmp_path: Path) -> None:
    with served(_config(tmp_path, max_pending_spans=3, max_wait_s=3.0, idle_s=3.0)) as m:
        url = m.endpoint + "/v1/traces"
        # 4 spans, over the bound of 3, but nothing is in flight: taken (else never)
        assert post(url, otlp_json(agent_trace(1) + agent_trace(2)))[0] == 200
        status, headers, _ = post(url, otlp_json(agent_trace(3)))
        assert status == 429 and headers["Retry-After"] == "1"
        got = _metrics(m.endpoint)
        assert got[("agenteval_monitor_pending_spans", ())] == 4
    assert got[("agenteval_monitor_requests_total", (("code", "429"), ("signal", "traces")))] == 1


def test_over_the_disk_bound_answers_503_with_retry_after(tmp_path: Path) -> None:
    one = len(otlp_json(agent_trace(1))) + 9  # a request's frame
    with served(_config(tmp_path, max_wal_bytes=one + one // 2, idle_s=0.5)) as m:
        url = m.endpoint + "/v1/traces"
        assert post(url, otlp_json(agent_trace(1)))[0] == 200
        status, headers, body = post(url, otlp_json(agent_trace(2)))
        assert status == 503 and headers["Retry-After"] == "1"
        assert f"over its bound of {one + one // 2}".encode() in body
        # once the first trace is scored and its segment released, there is room again
        wait_for(lambda: len(all_trials(tmp_path)) == 1, what="1 trial")
        body3 = otlp_json(agent_trace(3))
        wait_for(lambda: post(url, body3)[0] == 200, what="room in the log")
        wait_for(lambda: len(all_trials(tmp_path)) == 2, what="2 trials")


def test_logs_join_their_spans(tmp_path: Path) -> None:
    """An instrumentation that logs the answer as an event (openai-v2's event mode): the
    log record joins its span and the trial has the answer."""
    import json

    with served(_config(tmp_path)) as m:
        root = span(
            7,
            1,
            name="invoke_agent shop",
            **{"gen_ai.operation.name": "invoke_agent"},
        )
        chat = span(7, 2, 1, name="chat m", **{"gen_ai.operation.name": "chat"})
        record = {
            "timeUnixNano": chat["endTimeUnixNano"],
            "traceId": f"{7:032x}",
            "spanId": f"{2:016x}",
            "eventName": "gen_ai.choice",
            "attributes": [{"key": "gen_ai.system", "value": {"stringValue": "openai"}}],
            "body": {
                "kvlistValue": {
                    "values": [
                        {
                            "key": "message",
                            "value": {
                                "kvlistValue": {
                                    "values": [
                                        {"key": "role", "value": {"stringValue": "assistant"}},
                                        {"key": "content", "value": {"stringValue": "from a log"}},
                                    ]
                                }
                            },
                        },
                        {"key": "index", "value": {"intValue": "0"}},
                        {"key": "finish_reason", "value": {"stringValue": "stop"}},
                    ]
                }
            },
        }
        logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
        assert post(m.endpoint + "/v1/logs", json.dumps(logs).encode())[0] == 200
        assert post(m.endpoint + "/v1/traces", otlp_json([chat, root]))[0] == 200
        wait_for(lambda: len(all_trials(tmp_path)) == 1, what="1 trial")
    assert all_trials(tmp_path)[0]["output"] == "from a log"


def test_metrics_are_valid_prometheus_text_and_count_what_happened(tmp_path: Path) -> None:
    with served(_config(tmp_path)) as m:
        url = m.endpoint + "/v1/traces"
        for i in range(4):
            assert post(url, otlp_json(agent_trace(i + 1)))[0] == 200
        wait_for(lambda: m.monitor.metrics.trials == 4, what="4 trials counted")
        late = span(1, 99, 1, name="late")
        assert post(url, otlp_json([late]))[0] == 200
        assert post(url, b"{bad")[0] == 400
        wait_for(lambda: m.monitor.metrics.late_spans == 1, what="the late span")
        raw = get(m.endpoint + "/metrics")
        got = _metrics(m.endpoint)
    families = {f.name: f.type for f in text_string_to_metric_families(raw)}
    assert families["agenteval_monitor_score"] == "histogram"
    assert families["agenteval_monitor_spans"] == "counter"  # the parser drops _total
    assert families["agenteval_monitor_wal_bytes"] == "gauge"
    assert got[("agenteval_monitor_spans_late_total", ())] == 1
    assert got[("agenteval_monitor_trials_total", ())] == 4
    tf = (("scorer", "tool_faithfulness"), ("status", "passed"))
    assert got[("agenteval_monitor_scorer_results_total", tf)] == 4
    bucket = ("agenteval_monitor_score_bucket", (("le", "+Inf"), ("scorer", "pii_leakage")))
    assert got[bucket] == 4
    assert got[("agenteval_monitor_requests_total", (("code", "400"), ("signal", "traces")))] == 1
    assert got[("agenteval_monitor_pending_traces", ())] == 0


@pytest.mark.parametrize("path", ["/metrics", "/healthz"])
def test_get_routes_check_the_host(tmp_path: Path, path: str) -> None:
    import urllib.error
    import urllib.request

    with served(_config(tmp_path)) as m:
        req = urllib.request.Request(m.endpoint + path, headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=5)
        assert e.value.code == 421


def test_hostile_bodies_are_refused_and_the_endpoint_keeps_acknowledging(tmp_path: Path) -> None:
    """Random bytes, truncated and bit-flipped real requests, as JSON and protobuf: each
    is answered 200 or 400 (never a 500, never a crash), and a good request still is."""
    import random

    rng = random.Random(3)
    good_json = otlp_json(agent_trace(1))
    good_pb = _protobuf(otlp_json(agent_trace(2)))
    bodies: list[tuple[bytes, str]] = []
    for good, ctype in ((good_json, "application/json"), (good_pb, "application/x-protobuf")):
        for _ in range(40):
            b = bytearray(good)
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            bodies.append((bytes(b[: rng.randint(0, len(b))]), ctype))
        bodies += [(rng.randbytes(rng.randint(0, 300)), ctype) for _ in range(20)]
    bodies.append((b'{"resourceSpans": [{"scopeSpans": [{"spans": [{}]}]}]}', "application/json"))
    bodies.append((b"[" * 100_000, "application/json"))
    with served(_config(tmp_path)) as m:
        url = m.endpoint + "/v1/traces"
        codes = {post(url, b, ctype)[0] for b, ctype in bodies}
        assert codes <= {200, 400}
        assert post(url, otlp_json(agent_trace(99)))[0] == 200
        wait_for(
            lambda: any(int(t["metadata"]["trace_id"], 16) == 99 for t in all_trials(tmp_path))
        )
        time.sleep(0.3)
    assert not [x for x in m.said if "scoring failed" in x or "cannot be made" in x]
