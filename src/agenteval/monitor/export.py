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
already ends in ``/v1/logs``), up to :data:`BATCH` a request.

``--export-phoenix URL`` (Arize Phoenix ingests OTLP traces only: ``/v1/logs`` answers
405): each score is a Phoenix **span annotation** on the root span of the trace scored,
posted to ``URL/v1/span_annotations`` (Phoenix's REST API) as ``{"data": [...]}``, up to
:data:`PHOENIX_BATCH` a request: ``name`` the scorer, ``annotator_kind`` ``CODE``,
``result`` ``{label: the status, score: the value (left out when None), explanation: the
reason}``, ``metadata`` ``{trace_id, case_id, window}``, and ``identifier``
``agenteval-monitor`` (Phoenix updates an annotation of the same name, span and
identifier in place, so a score sent twice is stored once). They are posted with
``?sync=true``: Phoenix answers 200 once they are stored, and 404 when it does not have a
span they name (not ingested yet, or never sent there), which is retried as any failure;
so a batch naming a span Phoenix never gets is dropped whole, after its retries.

Either way records go from a background task: a
connection error or a status other than 2xx is retried with exponential backoff (0.5 s,
doubling, at most 30 s, 6 attempts), then the batch is dropped and counted. At most
``max_queued`` records wait; beyond, the oldest are dropped and counted. Ingestion never
waits for the backend.
"""

from __future__ import annotations

import json
import time
from typing import Any

from agenteval._util.say import Say
from agenteval.errors import FieldName, NamedText
from agenteval.monitor._post import Poster
from agenteval.scoring.score import Score

__all__ = ["BATCH", "PHOENIX_BATCH", "EvaluationExport", "evaluation_attributes"]

BATCH = 512
"""Records per request at most."""
PHOENIX_BATCH = 100
"""Span annotations per request at most (to Phoenix)."""


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


def _annotation(
    trace_id: str, span_id: str, case_id: str, window: str, name: str, s: Score
) -> dict[str, Any]:
    """One score as a Phoenix span annotation (module docstring)."""
    result: dict[str, Any] = {"label": s.status, "explanation": s.reason}
    if s.value is not None:
        result["score"] = float(s.value)
    return {
        "span_id": span_id,
        "name": name,
        "annotator_kind": "CODE",
        "result": result,
        "metadata": {"trace_id": trace_id, "case_id": case_id, "window": window},
        "identifier": "agenteval-monitor",
    }


def _record(trace_id: str, span_id: str, attrs: dict[str, Any], now_ns: int) -> dict[str, Any]:
    return {
        "timeUnixNano": str(now_ns),
        "observedTimeUnixNano": str(now_ns),
        "traceId": trace_id,
        "spanId": span_id,
        "eventName": "gen_ai.evaluation.result",
        "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
    }


class EvaluationExport(Poster):
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
        phoenix: bool = False,
    ) -> None:
        self.phoenix = phoenix
        """Span annotations to Phoenix's REST API, not OTLP events (module docstring)."""
        path = "/v1/span_annotations" if phoenix else "/v1/logs"
        url = url if url.rstrip("/").endswith(path) else url.rstrip("/") + path
        if phoenix:  # 200 once stored; a span Phoenix lacks is 404, so retried
            url += "?sync=true"
        super().__init__(
            url,
            say,
            attempts=attempts,
            first_delay_s=first_delay_s,
            max_delay_s=max_delay_s,
            timeout_s=10.0,
            max_queued=max_queued,
        )
        self.setting = FieldName("export_phoenix" if phoenix else "export_otlp")
        """The setting that asked for this export (named in its log line)."""
        self.batch = PHOENIX_BATCH if phoenix else BATCH

    def add(
        self, trace_id: str, span_id: str, case_id: str, window: str, scores: dict[str, Score]
    ) -> None:
        """Queue the events of one trial's scores (never waits)."""
        if self.phoenix:
            items = [
                _annotation(trace_id, span_id, case_id, window, name, s)
                for name, s in scores.items()
            ]
        else:
            now = time.time_ns()
            items = []
            for name, s in scores.items():
                attrs = evaluation_attributes(name, s)
                attrs["agenteval.case.id"] = case_id
                attrs["agenteval.window"] = window
                items.append(_record(trace_id, span_id, attrs, now))
        self._enqueue(items)

    def body(self, items: list[Any]) -> bytes:
        doc = {"data": items} if self.phoenix else _otlp(items)
        return json.dumps(doc).encode()

    def gave_up(self, items: list[Any]) -> str:
        return NamedText(
            "agenteval monitor: ",
            self.setting,
            f" {self.url}: dropped {len(items)} evaluations after {self.attempts} attempts",
        )


def _otlp(batch: list[dict[str, Any]]) -> dict[str, Any]:
    """An ExportLogsServiceRequest (OTLP/JSON) of ``batch``."""
    return {
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
