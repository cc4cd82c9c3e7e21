"""A hostile or careless sender, and a careless user of the monitor's directory."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from monitor_harness import agent_trace, all_trials, otlp_json, post, served, wait_for

from agenteval.monitor import MonitorConfig
from agenteval.rundir import read_header
from agenteval.rundir.lock import RunLock

HOUR_NS = 3600 * 10**9


def _config(out: Path, **kw: object) -> MonitorConfig:
    base: dict[str, object] = dict(out=out, idle_s=0.1, max_wait_s=1.0, tick_s=0.05)
    return MonitorConfig(**{**base, **kw})  # type: ignore[arg-type]


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_traffic_stamped_with_many_hours_holds_few_windows_open_and_closes_them_all(
    tmp_path: Path,
) -> None:
    """One request whose traces start in 20 different hours (a backfill, or a sender
    making up timestamps): every trace is scored, at most ``max_open_windows`` windows
    hold files open at once (else each window holds 3 descriptors: 20,000 hours in one
    16 MiB request exhaust ``ulimit -n``, and from then on the monitor scored nothing),
    and every window is closed with its summary."""
    n, cap = 20, 4
    spans = [s for i in range(n) for s in agent_trace(i + 1, start_ns=i * HOUR_NS + 10**9)]
    with served(_config(tmp_path, max_open_windows=cap)) as m:
        before = _open_fds()
        assert post(m.endpoint + "/v1/traces", otlp_json(spans))[0] == 200
        wait_for(lambda: m.monitor.metrics.trials == n, what=f"{n} trials")
        assert len(m.monitor.windows) <= cap
        assert _open_fds() - before <= 3 * cap + 4
        wait_for(lambda: m.monitor.metrics.windows_closed == n, what=f"{n} windows closed")
        assert not m.monitor.windows and not m.monitor.parked
    windows = [d for d in tmp_path.iterdir() if not d.name.startswith(".")]
    assert len(windows) == n
    assert all(read_header(d).finished_at is not None for d in windows)
    assert sorted(int(t["metadata"]["trace_id"], 16) for t in all_trials(tmp_path)) == list(
        range(1, n + 1)
    )
    assert not [x for x in m.said if "cannot" in x or "failed" in x]


def test_a_window_another_process_holds_delays_its_traces_and_loses_none(tmp_path: Path) -> None:
    """A closed window reopened for a late trace while another agenteval process holds
    its lock: the trace waits (one line says why) and is written once the lock is free,
    instead of being dropped unscored."""
    old = 10**9  # 1970-01-01T00: the window closes once its last write is 1.2 s old
    with served(_config(tmp_path)) as m:
        url = m.endpoint + "/v1/traces"
        assert post(url, otlp_json(agent_trace(1, start_ns=old)))[0] == 200
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the window closed")
        lock = RunLock.acquire(tmp_path / "1970-01-01T00", "agenteval rescore")
        try:
            assert post(url, otlp_json(agent_trace(2, start_ns=old)))[0] == 200
            wait_for(lambda: any("cannot write the windows" in x for x in m.said), what="a line")
            assert m.monitor.metrics.trials == 1
        finally:
            lock.release()
        wait_for(lambda: m.monitor.metrics.trials == 2, what="the held trace written")
    assert sorted(int(t["metadata"]["trace_id"], 16) for t in all_trials(tmp_path)) == [1, 2]
    assert sum("cannot write the windows" in x for x in m.said) == 1
    assert "another agenteval process" in next(x for x in m.said if "cannot write" in x)


def test_a_window_that_cannot_be_read_back_names_its_problem_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """A window whose trials.jsonl a user broke by hand: a trace for it waits, one line
    names the file's own problem (not "another agenteval process is writing this run",
    which a reopen that failed halfway and kept its lock would say from then on), and it
    is written once the file is repaired, instead of being dropped unscored."""
    old = 10**9
    with served(_config(tmp_path)) as m:
        url = m.endpoint + "/v1/traces"
        assert post(url, otlp_json(agent_trace(1, start_ns=old)))[0] == 200
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the window closed")
        trials = tmp_path / "1970-01-01T00" / "trials.jsonl"
        good = trials.read_bytes()
        trials.write_bytes(b'{"not": "a trial"}\n' + good)
        assert post(url, otlp_json(agent_trace(2, start_ns=old)))[0] == 200
        wait_for(lambda: any("cannot write the windows" in x for x in m.said), what="a line")
        line = next(x for x in m.said if "cannot write the windows" in x)
        assert "another agenteval process" not in line and "trials.jsonl" in line
        trials.write_bytes(good)  # repaired: the waiting trace goes in
        wait_for(lambda: m.monitor.metrics.trials == 2, what="the held trace written")
    assert sorted(int(t["metadata"]["trace_id"], 16) for t in all_trials(tmp_path)) == [1, 2]
    assert all("\n" not in x for x in m.said)
    json.dumps(m.said)  # plain strings


def _no_trace_id(trace: int) -> list[dict[str, object]]:
    spans = agent_trace(trace)
    for s in spans:
        s["traceId"] = "" if trace % 2 else "0" * 32  # missing, or all zeros: both invalid
    return spans


def test_spans_without_a_trace_id_are_rejected_as_a_partial_success_not_merged(
    tmp_path: Path,
) -> None:
    """Spans with an empty or all-zero trace id cannot be joined to a trace: each request
    says how many it rejected (OTLP's partial success), the rest of the request is kept,
    and they are not lumped into one trace "" (which, once done, made every later span
    without an id "late" for ten minutes)."""
    from google.protobuf.json_format import Parse
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    with served(_config(tmp_path)) as m:
        url = m.endpoint + "/v1/traces"
        status, _, body = post(url, otlp_json(_no_trace_id(1) + agent_trace(5)))
        assert status == 200
        part = json.loads(body)["partialSuccess"]
        assert part["rejectedSpans"] == "2" and "trace id" in part["errorMessage"]
        wait_for(lambda: m.monitor.metrics.trials == 1, what="the good trace scored")
        status, _, body = post(url, otlp_json(_no_trace_id(2)))  # nothing else: not logged
        assert status == 200 and json.loads(body)["partialSuccess"]["rejectedSpans"] == "2"
        spans = _no_trace_id(3)
        for sp in spans:  # protobuf's JSON has base64 ids
            for k in ("spanId", "parentSpanId"):
                if k in sp:
                    sp[k] = base64.b64encode(bytes.fromhex(str(sp[k]))).decode()
        pb = Parse(otlp_json(spans), ExportTraceServiceRequest()).SerializeToString()
        status, _, body = post(url, pb, "application/x-protobuf")
        assert status == 200
        assert ExportTraceServiceResponse.FromString(body).partial_success.rejected_spans == 2
        assert post(url, otlp_json(agent_trace(6)))[0] == 200  # no partial success: "{}"
        wait_for(lambda: m.monitor.metrics.trials == 2, what="the second good trace")
        assert m.monitor.metrics.rejected_spans == 6
        assert m.monitor.metrics.late_spans == 0
        assert not m.monitor.tracker.pending
    assert sorted(int(t["metadata"]["trace_id"], 16) for t in all_trials(tmp_path)) == [5, 6]


def test_requests_that_are_not_http_are_one_line_each_never_a_traceback(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A control character in a header, a bad chunk size, two Content-Lengths: aiohttp
    answers 400 and used to print its traceback on the monitor's stderr (any client could
    flood the terminal with them). Now each is one refusal line, counted."""
    import socket

    bad = [
        b"Content-Type: application/json\r\nContent-Encoding: \x1b[2Jx\r\nContent-Length: 2",
        b"Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz",
        b"Content-Length: 2\r\nContent-Length: 7",
    ]
    with served(_config(tmp_path)) as m:
        port = int(m.endpoint.rsplit(":", 1)[1])
        for head in bad:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(
                    b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head + b"\r\n\r\n{}"
                )
                assert sock.recv(100).split(b"\r\n")[0].endswith(b" 400 Bad Request")
        wait_for(lambda: len(m.said) == 3, what="three lines")
        assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(1)))[0] == 200
        assert m.monitor.metrics.requests[("http", 400)] == 3
    assert all(x.startswith("agenteval monitor: HTTP 400: request not read: ") for x in m.said)
    assert not [x for x in m.said if "\n" in x or "\x1b" in x]
    assert "Traceback" not in capfd.readouterr().err


_TLS_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32)) + b"\x00" * 40


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (_TLS_HELLO, "Received HTTPS traffic on an HTTP port"),
        (b"\x1b[2J\x1b[31mPWNED\x07 /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", ""),
    ],
    ids=["tls-handshake", "bad-method"],
)
def test_a_tls_handshake_or_a_bad_first_line_is_one_escaped_line_as_at_the_receiver(
    tmp_path: Path, raw: bytes, said: str
) -> None:
    """aiohttp logs these at debug level: the monitor's own copy of the receiver's log
    reader heard only warnings, so an exporter given https:// for this port was answered
    400 with no line and no count. The monitor now reads aiohttp's log with the receiver's
    (agenteval._util.net.request_error_log): one line, counted, control characters
    escaped."""
    import socket

    with served(_config(tmp_path)) as m:
        port = int(m.endpoint.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(raw)
            assert b" 400 " in sock.recv(100).split(b"\r\n")[0]
        wait_for(lambda: len(m.said) == 1, what="one line")
        assert m.monitor.metrics.requests[("http", 400)] == 1
    (line,) = m.said
    assert line.startswith(f"agenteval monitor: HTTP 400: request not read: {said}"), line
    assert all(32 <= ord(c) < 127 for c in line), line  # no escape reaches a terminal


@pytest.mark.parametrize("kind", ["symlink", "directory"])
def test_a_log_segment_that_is_not_a_regular_file_is_refused_and_nothing_is_cut(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A segment name in .monitor/wal that is a symlink (to a file elsewhere) or a
    directory: the command refuses to start, one line naming it, exit 2. Before, the
    symlink's target was read as a torn segment and cut to nothing, then deleted."""
    from agenteval.cli import main

    wal = tmp_path / "out" / ".monitor" / "wal"
    wal.mkdir(parents=True)
    precious = tmp_path / "notes.txt"
    precious.write_text("not a log segment\n")
    seg = wal / "000000000004.wal"
    if kind == "symlink":
        seg.symlink_to(precious)
    else:
        seg.mkdir()
    argv = ["monitor", "--listen", "127.0.0.1:0", "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(seg) in err and "not a regular file" in err
    assert precious.read_text() == "not a log segment\n"
    assert seg.is_symlink() if kind == "symlink" else seg.is_dir()
