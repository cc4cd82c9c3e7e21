"""Trace files for the hostile-input tests: OTLP/JSON and OpenInference spans built from
plain values, so each test states the one field it breaks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

T0 = 1_764_000_000_000_000_000  # 2025-11-24, in nanoseconds


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    else:
        v = {"stringValue": value}
    return {"key": key, "value": v}


def otlp_span(n: int, **over: Any) -> dict[str, Any]:
    """An ``invoke_agent`` root span (its own trace) with a prompt and an answer."""
    span: dict[str, Any] = {
        "traceId": f"{n + 1:032x}",
        "spanId": f"{n + 1:016x}",
        "name": "invoke_agent shop",
        "startTimeUnixNano": str(T0 + n * 1_000_000_000),
        "endTimeUnixNano": str(T0 + n * 1_000_000_000 + 500_000_000),
        "attributes": [
            attr("gen_ai.operation.name", "invoke_agent"),
            attr("input.value", f"question {n}"),
            attr("output.value", f"answer {n}"),
            attr("case", f"c{n}"),
        ],
    }
    for k, v in over.items():
        if v is None:
            span.pop(k, None)
        else:
            span[k] = v
    return span


def otlp_request(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", "shop")]},
                "scopeSpans": [{"spans": list(spans)}],
            }
        ]
    }


def oi_span(n: int, **over: Any) -> dict[str, Any]:
    """An OpenInference AGENT span (Phoenix's export) with a prompt and an answer."""
    span: dict[str, Any] = {
        "name": "agent",
        "context": {"trace_id": f"{n + 1:032x}", "span_id": f"{n + 1:016x}"},
        "parent_id": None,
        "span_kind": "AGENT",
        "start_time": "2025-11-24T10:00:00+00:00",
        "end_time": "2025-11-24T10:00:01+00:00",
        "status_code": "OK",
        "attributes": {"input": {"value": f"question {n}"}, "output": {"value": f"answer {n}"}},
    }
    span.update(over)
    return span


def write_lines(path: Path, docs: list[Any]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def spool_fd(pid: int) -> str | None:
    """Where the open import spool of process ``pid`` is (``/proc/PID/fd``; Linux), with
    `` (deleted)`` once unlinked; None before it is open."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if "agenteval-import-" in target:
            return target
    return None
