"""--export-otlp: each score as a gen_ai.evaluation.result event on the trace it scored.

A real OTLP/HTTP logs receiver (aiohttp on 127.0.0.1) that answers 503 to the first
request (the exporter retries), decoded with agenteval's own OTLP logs decoder; the events'
attributes are held equal to those ``export-otel`` writes for the same window.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from monitor_harness import agent_trace, all_trials, otlp_json, post, served, wait_for

from agenteval.cli import main
from agenteval.monitor import MonitorConfig
from agenteval.traces.logs import LogRecord, decode_logs_body


class _Backend:
    def __init__(self) -> None:
        self.records: list[LogRecord] = []
        self.calls = 0
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.calls += 1
        if self.calls == 1:
            return web.Response(status=503)
        body = await request.read()
        self.records += decode_logs_body(body, request.content_type)
        return web.json_response({})


@pytest.fixture
def backend() -> Iterator[_Backend]:
    b = _Backend()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    runners: list[web.AppRunner] = []

    async def start() -> None:
        app = web.Application()
        app.router.add_post("/v1/logs", b.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        b.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        runners.append(runner)
        ready.set()

    t = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()))
    t.start()
    ready.wait(10)
    yield b
    asyncio.run_coroutine_threadsafe(runners[0].cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    t.join(10)


def _events_of_export_otel(run: Path, tmp: Path) -> dict[str, list[dict[str, Any]]]:
    """case id → the attributes of its gen_ai.evaluation.result events, from export-otel."""
    out = tmp / "exported.jsonl"
    assert main(["export-otel", str(run), "--file", str(out)]) == 0
    got: dict[str, list[dict[str, Any]]] = {}
    for line in out.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    attrs = {a["key"]: a["value"] for a in s.get("attributes", [])}
                    if "agenteval.case.id" not in attrs:
                        continue
                    cid = attrs["agenteval.case.id"]["stringValue"]
                    for ev in s.get("events", []):
                        if ev["name"] == "gen_ai.evaluation.result":
                            got.setdefault(cid, []).append(
                                {a["key"]: _plain(a["value"]) for a in ev["attributes"]}
                            )
    return got


def _plain(v: dict[str, Any]) -> Any:
    ((kind, x),) = v.items()
    return float(x) if kind == "doubleValue" else int(x) if kind == "intValue" else x


def test_scores_go_to_the_backend_on_their_own_traces_as_export_otel_words_them(
    tmp_path: Path, backend: _Backend
) -> None:
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=1.0, tick_s=0.05)
    with served(cfg, export_otlp=backend.url) as m:
        for i in range(3):
            answer = "I do not know" if i == 0 else "The answer is 42"
            assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(i + 1, answer)))[0] == 200
        wait_for(lambda: len(all_trials(out)) == 3, what="3 trials")
        n_scores = sum(len(t["scores"]) for t in all_trials(out))
        wait_for(lambda: len(backend.records) == n_scores, timeout=15, what="the events")
    assert backend.calls >= 2  # the first answer was 503: retried
    trials = {t["case_id"]: t for t in all_trials(out)}
    mine: dict[str, list[dict[str, Any]]] = {}
    for r in backend.records:
        assert r.name == "gen_ai.evaluation.result"
        a = dict(r.attributes)
        t = trials[a.pop("agenteval.case.id")]
        assert (r.trace_id, r.span_id) == (t["metadata"]["trace_id"], t["metadata"]["span_id"])
        assert a.pop("agenteval.window") == next(d.name for d in out.iterdir() if d.name[0] != ".")
        mine.setdefault(t["case_id"], []).append(a)
    window = next(d for d in out.iterdir() if not d.name.startswith("."))
    theirs = _events_of_export_otel(window, tmp_path)

    def canon(d: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
        return {k: sorted(json.dumps(e, sort_keys=True) for e in v) for k, v in d.items()}

    assert canon(mine) == canon(theirs)


@pytest.mark.parametrize(
    ("phoenix", "flag"), [(False, "--export-otlp"), (True, "--export-phoenix")]
)
def test_the_give_up_line_names_the_setting_and_the_cli_shows_its_flag(
    phoenix: bool, flag: str
) -> None:
    from agenteval.cli._common import flagged
    from agenteval.monitor.export import EvaluationExport

    export = EvaluationExport("http://collector:4318", print, attempts=3, phoenix=phoenix)
    line = export.gave_up([{}, {}])
    field = flag.removeprefix("--").replace("-", "_")
    path = "/v1/span_annotations?sync=true" if phoenix else "/v1/logs"
    tail = f" http://collector:4318{path}: dropped 2 evaluations after 3 attempts"
    assert line == f"agenteval monitor: {field}{tail}"  # a library caller's words
    assert flagged(line) == f"agenteval monitor: {flag}{tail}"  # the command line's
