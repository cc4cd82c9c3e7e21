"""OTLP decoding: payloads written by the official OpenTelemetry encoder read back as the
same spans the in-process capture sees, in protobuf, OTLP/JSON (hex ids) and a generic
protobuf JSON mapping (base64 ids); malformed payloads give one InputError naming the field."""

from __future__ import annotations

import base64
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("opentelemetry.proto")

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from agenteval.errors import InputError
from agenteval.traces.capture import span_record
from agenteval.traces.mapping import trajectory_from_spans
from agenteval.traces.otlp import decode_body, decode_json, decode_protobuf
from agenteval.traces.tracefile import read_file


def _spans() -> list[Any]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent shop") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        with tracer.start_as_current_span("chat gpt-x") as m:
            m.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-x",
                    "gen_ai.usage.input_tokens": 12,
                    "gen_ai.usage.output_tokens": 3,
                    "scores": [1.5, 2.0],
                    "flags": [True, False],
                }
            )
        with tracer.start_as_current_span("execute_tool find_customer") as t:
            t.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "find_customer",
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.arguments": '{"email": "a@b.c"}',
                    "gen_ai.tool.call.result": '{"id": 7}',
                }
            )
        with tracer.start_as_current_span("execute_tool refund") as t:
            t.set_attributes(
                {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund"}
            )
            t.record_exception(ValueError("order 9 is closed"))
            t.set_status(Status(StatusCode.ERROR, "order 9 is closed"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def _hex_ids(doc: Any) -> Any:
    """A MessageToDict document with ids rewritten from base64 to hex (the OTLP/JSON form)."""
    if isinstance(doc, dict):
        out = {}
        for k, v in doc.items():
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
                out[k] = base64.b64decode(v).hex()
            else:
                out[k] = _hex_ids(v)
        return out
    if isinstance(doc, list):
        return [_hex_ids(v) for v in doc]
    return doc


def _comparable(records: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            r.name,
            r.span_id,
            r.trace_id,
            r.parent_id,
            r.start_ns,
            r.end_ns,
            {k: list(v) if isinstance(v, tuple) else v for k, v in r.attributes.items()},
            [(e.name, dict(e.attributes), e.time_ns) for e in r.events],
            r.status,
            r.status_message,
        )
        for r in records
    )


def test_every_encoding_reads_back_as_the_in_process_spans(tmp_path: Path) -> None:
    spans = _spans()
    expected = _comparable([span_record(s) for s in spans])
    request = encode_spans(spans)
    pb = request.SerializeToString()
    as_b64 = MessageToDict(request)
    as_hex = _hex_ids(as_b64)
    for records in (
        decode_protobuf(pb),
        decode_body(pb, "application/x-protobuf"),
        decode_json(as_b64),
        decode_json(as_hex),
        decode_body(json.dumps(as_hex).encode(), "application/json; charset=utf-8"),
    ):
        assert _comparable(records) == expected
        assert {r.resource["service.name"] for r in records} == {"shop-agent"}

    # files: protobuf, one JSON document, JSON lines (the Collector's file exporter)
    (tmp_path / "t.pb").write_bytes(pb)
    (tmp_path / "t.json").write_text(json.dumps(as_hex, indent=2))
    (tmp_path / "t.jsonl").write_text(f"{json.dumps(as_hex)}\n\n{json.dumps(as_b64)}\n")
    assert _comparable(list(read_file(tmp_path / "t.pb"))) == expected
    assert _comparable(list(read_file(tmp_path / "t.json"))) == expected
    assert _comparable(list(read_file(tmp_path / "t.jsonl"))) == sorted(expected * 2)


def test_decoded_spans_map_to_the_trajectory() -> None:
    traj = trajectory_from_spans(decode_protobuf(encode_spans(_spans()).SerializeToString()))
    calls = [(c.name, c.id, c.arguments, c.result, c.error) for c in traj.tool_calls]
    assert calls == [
        ("find_customer", "call_1", {"email": "a@b.c"}, {"id": 7}, None),
        ("refund", None, {}, None, "ValueError: order 9 is closed"),
    ]
    assert [(u.model, u.input_tokens, u.output_tokens) for u in traj.usage] == [("gpt-x", 12, 3)]


def test_snake_case_keys_status_names_and_old_scope_key() -> None:
    doc = {
        "resource_spans": [
            {
                "instrumentationLibrarySpans": [
                    {
                        "spans": [
                            {
                                "trace_id": "0" * 31 + "1",
                                "span_id": "0" * 15 + "2",
                                "parent_span_id": "",
                                "name": "x",
                                "start_time_unix_nano": "1000",
                                "end_time_unix_nano": 2000,
                                "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
                                "attributes": [
                                    {"key": "n", "value": {"int_value": "5"}},
                                    {
                                        "key": "kv",
                                        "value": {
                                            "kvlistValue": {
                                                "values": [
                                                    {"key": "a", "value": {"doubleValue": 1.5}}
                                                ]
                                            }
                                        },
                                    },
                                    {"key": "b", "value": {"bytesValue": "AAE="}},
                                    {"key": "empty", "value": {}},
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (r,) = decode_json(doc)
    assert (r.trace_id, r.span_id, r.parent_id) == ("0" * 31 + "1", "0" * 15 + "2", None)
    assert (r.start_ns, r.end_ns, r.status, r.status_message) == (1000, 2000, "error", "boom")
    assert r.attributes == {"n": 5, "kv": {"a": 1.5}, "b": b"\x00\x01", "empty": None}


@pytest.mark.parametrize(
    ("doc", "field", "message"),
    [
        ({}, "resourceSpans", "missing"),
        ({"resourceSpans": {}}, "resourceSpans", "must be a list"),
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "zz", "traceId": "a"}]}]}]},
            "resourceSpans[0].scopeSpans[0].spans[0].spanId",
            "not a hex or base64 id",
        ),
        (
            {
                "resourceSpans": [
                    {"scopeSpans": [{"spans": [{"spanId": "AAAAAAAAAAE=", "traceId": "AAE="}]}]}
                ]
            },
            "resourceSpans[0].scopeSpans[0].spans[0].traceId",
            "16-byte id is expected, got 2 bytes",
        ),
        (
            {
                "resourceSpans": [
                    {
                        "scopeSpans": [
                            {
                                "spans": [
                                    {
                                        "spanId": "0000000000000001",
                                        "traceId": "0" * 31 + "1",
                                        "attributes": [{"key": "k", "value": {"intValue": "x"}}],
                                    }
                                ]
                            }
                        ]
                    }
                ]
            },
            "resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value",
            "intValue must be an integer",
        ),
        (
            {
                "resourceSpans": [
                    {
                        "scopeSpans": [
                            {
                                "spans": [
                                    {
                                        "spanId": "0000000000000001",
                                        "traceId": "0" * 31 + "1",
                                        "status": {"code": 7},
                                    }
                                ]
                            }
                        ]
                    }
                ]
            },
            "resourceSpans[0].scopeSpans[0].spans[0].status.code",
            "must be 0, 1, 2",
        ),
    ],
)
def test_malformed_json_names_the_field(doc: Any, field: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        decode_json(doc, "traces.json")
    assert e.value.field == field
    assert message in str(e.value)
    assert str(e.value).startswith("traces.json: field ")


def test_bad_files_name_file_and_line(tmp_path: Path) -> None:
    good = json.dumps(_hex_ids(MessageToDict(encode_spans(_spans()))))
    p = tmp_path / "t.jsonl"
    p.write_text(f"{good}\n{{not json\n")
    with pytest.raises(InputError, match=r"t\.jsonl:2: not JSON"):
        list(read_file(p))
    p.write_text(f'{good}\n{{"resourceSpans": 3}}\n')
    with pytest.raises(InputError, match=r"t\.jsonl:2: field 'resourceSpans': must be a list"):
        list(read_file(p))
    p.write_bytes(b"\x00\xff garbage")
    with pytest.raises(InputError, match="not an OTLP protobuf"):
        list(read_file(p))
    with pytest.raises(InputError, match="cannot read"):
        list(read_file(tmp_path / "missing.pb"))


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda kids: (
            st.lists(kids, max_size=4)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "resourceSpans",
                        "scopeSpans",
                        "spans",
                        "spanId",
                        "traceId",
                        "attributes",
                        "key",
                        "value",
                        "stringValue",
                        "intValue",
                        "arrayValue",
                        "values",
                        "status",
                        "code",
                        "events",
                        "name",
                        "startTimeUnixNano",
                        "resource",
                    ]
                ),
                kids,
                max_size=5,
            )
        ),
        max_leaves=30,
    )
)
def test_any_json_is_spans_or_one_input_error(doc: Any) -> None:
    with contextlib.suppress(InputError):
        decode_json(doc)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_are_spans_or_one_input_error(data: bytes) -> None:
    with contextlib.suppress(InputError):
        decode_protobuf(data)
