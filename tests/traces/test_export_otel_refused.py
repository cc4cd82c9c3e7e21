"""docs/traces.md: ``export-otel --otlp-endpoint``: "When the receiver cannot be reached
or answers with an error (...) the command stops with exit 5 and one line." Unreachable
(exit 5) is checked in test_export_otel.py; here also its one line, and a real receiver on
127.0.0.1 that answers 400 (not retried) or 500 (retried until ``--timeout``). The OTLP
exporter's own log line used to come first."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from agenteval.cases.case import Case
from agenteval.rundir import RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial


@pytest.fixture
def refusing() -> Iterator[tuple[str, list[str]]]:
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            paths.append(self.path)
            status = 500 if "/err500" in self.path else 400
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", paths
    srv.shutdown()
    srv.server_close()


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    with RunWriter.create(run, RunHeader(scorers=["exact_match"])) as w:
        write_cases(run, [Case(id="a", input="q", expected="x")])
        w.append(Trial(case_id="a", output="x"), {"exact_match": Score(1.0, "ok")})
    return run


@pytest.mark.parametrize("path", ["/v1/traces", "/err500/v1/traces", "unreachable"])
def test_a_receiver_answering_an_error_is_exit_5_with_one_line(
    tmp_path: Path, cli: Any, refusing: tuple[str, list[str]], path: str
) -> None:
    url, seen = refusing
    endpoint = "http://127.0.0.1:9/v1/traces" if path == "unreachable" else url + path
    r = cli("export-otel", _run(tmp_path), "--otlp-endpoint", endpoint, "--timeout", "1")
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("agenteval: error: "), r.stderr
    assert "Traceback" not in r.stderr
    assert set(seen) == (set() if path == "unreachable" else {path})
