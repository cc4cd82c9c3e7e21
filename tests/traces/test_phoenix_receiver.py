"""export-otel received by a real tracing backend: Arize Phoenix (``phoenix serve``).

Phoenix is not in the ``dev`` extra (850 MB; docs/traces.md): ``.ci/run`` installs it in a
venv of its own and sets ``AGENTEVAL_PHOENIX``. The test runs when a ``phoenix``
executable is found:
``AGENTEVAL_PHOENIX=/path/to/venv/bin/phoenix`` (Phoenix in a venv of its own), or
``phoenix`` on PATH; otherwise it is skipped, saying why.

It uses the session's Phoenix (the ``phoenix`` fixture, tests/phoenix_server.py: started
once, on free ports with a fresh working directory), exports the demo's careful run to
its OTLP/HTTP endpoint, reads the spans back through Phoenix's REST API
(``/v1/projects/default/spans``, OpenInference span JSON), and imports that export:
the trajectories and scores are those of the run.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from agenteval.rundir import iter_trials


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def test_phoenix_receives_the_export_and_gives_it_back(
    tmp_path: Path, cli: Any, phoenix: str
) -> None:
    base = phoenix  # the session's Phoenix (tests/phoenix_server.py)
    demo = tmp_path / "demo"
    assert cli("demo", "--dir", demo).returncode == 0
    run = demo / "runs" / "careful"
    e = cli("export-otel", run, "--otlp-endpoint", base)
    assert e.returncode == 0, e.stderr
    m = re.match(r"exported (\d+) traces \((\d+) spans\)", e.stdout)
    assert m, e.stdout
    n_traces, n_spans = int(m.group(1)), int(m.group(2))
    assert n_traces == sum(1 for _ in iter_trials(run))
    spans: list[Any] = []
    deadline = time.monotonic() + 30
    while len(spans) < n_spans and time.monotonic() < deadline:  # ingestion is asynchronous
        time.sleep(0.5)
        spans, cursor = [], None
        while True:
            q = f"&cursor={cursor}" if cursor else ""
            page = _get(f"{base}/v1/projects/default/spans?limit=100{q}")
            spans.extend(page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                break
    assert len(spans) == n_spans
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == n_traces and {s["span_kind"] for s in roots} == {"AGENT"}
    names = {
        e["attributes"]["gen_ai.evaluation.name"]
        for s in roots
        for e in s["events"]
        if e["name"] == "gen_ai.evaluation.result"
    }
    assert {"exact_match", "tool_call_match", "pii_leakage"} <= names
    exported = tmp_path / "phoenix-spans.jsonl"
    exported.write_text("".join(json.dumps(s) + "\n" for s in spans))
    back = tmp_path / "back"
    i = cli(
        "import-traces", exported, "--out", back,
        "--dataset", demo / "cases.jsonl", "--join-attr", "agenteval.case.id",
    )  # fmt: skip
    assert i.returncode == 0, i.stderr
    before = {t.key: t for t in iter_trials(run)}
    after = {t.key: t for t in iter_trials(back)}
    assert set(before) == set(after)
    for k, t in before.items():
        u = after[k]
        assert [c.model_dump(exclude={"started_at", "duration_s"}) for c in t.tool_calls] == [
            c.model_dump(exclude={"started_at", "duration_s"}) for c in u.tool_calls
        ]
        assert (t.output, t.tools) == (u.output, u.tools)
        assert {n: s.to_dict() for n, s in t.scores.items()} == {
            n: s.to_dict() for n, s in u.scores.items()
        }
