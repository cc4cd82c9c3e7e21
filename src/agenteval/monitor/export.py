"""``--export-otlp URL``: each score back to the tracing backend, linked to its trace.

For every trial the monitor writes, each of its scores is sent as one OTel **event** (a
log record with an ``eventName``) named ``gen_ai.evaluation.result``, carrying the
**original** trace id and root span id (so a backend shows it on the trace that was
scored) and the attributes ``export-otel`` puts on its evaluation events:
``gen_ai.evaluation.name`` (the scorer), ``gen_ai.evaluation.score.value`` (left out when
None), ``gen_ai.evaluation.score.label`` (the status) and ``gen_ai.evaluation.explanation``
(the reason); plus ``agenteval.case.id`` and ``agenteval.window`` (the window's run
directory name). The resource has ``service.name = agenteval-monitor``.

Records are posted as OTLP/JSON (hex ids) to ``URL/v1/logs`` (``URL`` as given when it
already ends in ``/v1/logs``), up to :data:`BATCH` a request, from a background task: a
connection error or a status other than 2xx is retried with exponential backoff (0.5 s,
doubling, at most 30 s, 6 attempts), then the batch is dropped and counted. At most
``max_queued`` records wait; beyond, the oldest are dropped and counted. Ingestion never
waits for the backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from agenteval._util.say import Say
from agenteval.monitor._post import post_json
from agenteval.scoring.score import Score

__all__ = ["BATCH", "EvaluationExport", "evaluation_attributes"]

BATCH = 512
"""Records per request at most."""


def evaluation_attributes(name: str, s: Score) -> dict[str, Any]:
    """The attributes of one score's ``gen_ai.evaluation.result`` event, as ``export-otel``
    writes them (tests/monitor/test_monitor_export.py holds the two equal)."""
    ev: dict[str, Any] = {
        "gen_ai.evaluation.name": name,
        "gen_ai.evaluation.score.label": s.status,
        "gen_ai.evaluation.explanation": s.reason,
    }
    if s.value is not None:
        ev["gen_ai.evaluation.score.value"] = float(s.value)
    return ev


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def _record(trace_id: str, span_id: str, attrs: dict[str, Any], now_ns: int) -> dict[str, Any]:
    return {
        "timeUnixNano": str(now_ns),
        "observedTimeUnixNano": str(now_ns),
        "traceId": trace_id,
        "spanId": span_id,
        "eventName": "gen_ai.evaluation.result",
        "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
    }


class EvaluationExport:
    """The background sender (module docstring)."""

    def __init__(
        self,
        url: str,
        say: Say,
        *,
        attempts: int = 6,
        first_delay_s: float = 0.5,
        max_delay_s: float = 30.0,
        max_queued: int = 100_000,
    ) -> None:
        self.url = url if url.rstrip("/").endswith("/v1/logs") else url.rstrip("/") + "/v1/logs"
        self._say = say
        self.attempts = attempts
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.max_queued = max_queued
        self._queue: list[dict[str, Any]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.dropped = 0

    def add(
        self, trace_id: str, span_id: str, case_id: str, window: str, scores: dict[str, Score]
    ) -> None:
        """Queue the events of one trial's scores (never waits)."""
        now = time.time_ns()
        for name, s in scores.items():
            attrs = evaluation_attributes(name, s)
            attrs["agenteval.case.id"] = case_id
            attrs["agenteval.window"] = window
            self._queue.append(_record(trace_id, span_id, attrs, now))
        over = len(self._queue) - self.max_queued
        if over > 0:
            del self._queue[:over]
            self.dropped += over
        self._wake.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        import aiohttp  # the exporter's client, only when --export-otlp is given

        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            while True:
                if not self._queue:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                batch, self._queue = self._queue[:BATCH], self._queue[BATCH:]
                if await self._post(session, batch):
                    self.sent += len(batch)
                else:
                    self.dropped += len(batch)
                    self._say(
                        f"agenteval monitor: --export-otlp {self.url}: dropped {len(batch)}"
                        f" evaluation events after {self.attempts} attempts"
                    )

    async def _post(self, session: Any, batch: list[dict[str, Any]]) -> bool:
        doc = {
            "resourceLogs": [
                {
                    "resource": {
                        "attributes": [
                            {"key": "service.name", "value": {"stringValue": "agenteval-monitor"}}
                        ]
                    },
                    "scopeLogs": [{"scope": {"name": "agenteval.monitor"}, "logRecords": batch}],
                }
            ]
        }
        body = json.dumps(doc).encode()
        return await post_json(
            session,
            self.url,
            body,
            attempts=self.attempts,
            first_delay_s=self.first_delay_s,
            max_delay_s=self.max_delay_s,
        )

    async def close(self, wait_s: float = 2.0) -> None:
        """Give queued events ``wait_s`` to go out, then stop."""
        if self._task is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while self._queue and loop.time() < deadline:
            await asyncio.sleep(0.05)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
