"""Jaeger JSON (the UI's export, the query API) as an import-traces input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval.errors import InputError
from agenteval.traces.importer import ImportOptions, import_traces

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _tags(**kw: object) -> list[dict[str, object]]:
    return [{"key": k.replace("__", "."), "type": "string", "value": v} for k, v in kw.items()]


def _doc() -> dict[str, object]:
    spans = [
        {
            "traceID": TRACE,
            "spanID": "b7ad6b7169203331",
            "operationName": "invoke_agent shop",
            "references": [],
            "startTime": 1_700_000_000_000_000,
            "duration": 2_000_000,
            "processID": "p1",
            "tags": [
                {"key": "gen_ai.operation.name", "type": "string", "value": "invoke_agent"},
                {
                    "key": "gen_ai.input.messages",
                    "type": "string",
                    "value": json.dumps([{"role": "user", "content": "ship beta"}]),
                },
            ],
        },
        {
            "traceID": TRACE,
            "spanID": "00f067aa0ba902b7",
            "operationName": "execute_tool ship",
            "references": [{"refType": "CHILD_OF", "traceID": TRACE, "spanID": "b7ad6b7169203331"}],
            "startTime": 1_700_000_000_500_000,
            "duration": 1000,
            "processID": "p1",
            "tags": [
                *_tags(gen_ai__operation__name="execute_tool", gen_ai__tool__name="ship"),
                *_tags(gen_ai__tool__call__arguments='{"order": "beta"}'),
                {"key": "otel.status_code", "type": "string", "value": "ERROR"},
            ],
            "logs": [
                {
                    "timestamp": 1_700_000_000_500_500,
                    "fields": [
                        {"key": "event", "type": "string", "value": "exception"},
                        {"key": "exception.type", "type": "string", "value": "RuntimeError"},
                        {"key": "exception.message", "type": "string", "value": "shipped"},
                    ],
                }
            ],
        },
    ]
    return {
        "data": [{"traceID": TRACE, "spans": spans, "processes": {"p1": {"serviceName": "shop"}}}]
    }


@pytest.mark.parametrize("shape", ["export", "data-list", "one-trace"])
def test_jaeger_json_imports(tmp_path: Path, shape: str) -> None:
    doc: object = _doc()
    if shape == "data-list":
        doc = _doc()["data"]
    elif shape == "one-trace":
        doc = _doc()["data"][0]  # type: ignore[index]
    f = tmp_path / "jaeger.json"
    f.write_text(json.dumps(doc, indent=2))
    res = import_traces([f], ImportOptions())
    assert len(res.trials) == 1
    t = res.trials[0]
    assert [(c.name, c.arguments, c.error) for c in t.tool_calls] == [
        ("ship", {"order": "beta"}, "RuntimeError: shipped")
    ]
    assert t.metadata["tool_errors"] == [{"call": 0, "rule": "exception"}]
    assert t.metadata["service"] == "shop" and t.latency.total_s == 2.0
    assert res.cases[t.case_id].input == "ship beta"


def test_a_bad_jaeger_id_names_the_field(tmp_path: Path) -> None:
    doc = _doc()
    doc["data"][0]["spans"][1]["spanID"] = "not-hex"  # type: ignore[index]
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError) as e:
        import_traces([f], ImportOptions())
    assert "data[0].spans[1].spanID" in str(e.value)
