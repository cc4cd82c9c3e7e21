"""The fast path of the OTLP/JSON decoder (``otlp_plain.plain_span``) reads every span as
the checked decoder (``otlp._span``) does: the same record, or it leaves the span to the
checked decoder, whose refusal (field path and message) the import shows. Spans are
built from the shapes real exporters write and the ones they should not."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.traces.otlp import _span, _walk_json
from agenteval.traces.otlp_plain import NotPlain, plain_span
from agenteval.traces.records import BadSpan

ids16 = st.sampled_from(["ab" * 8, "AB" * 8, "0" * 16, "", "xyz", "ab" * 4])
ids32 = st.sampled_from(
    ["cd" * 16, "Cd" * 16, "0" * 32, "", base64.b64encode(b"\x01" * 16).decode()]
)
b64_8 = st.just(base64.b64encode(b"\x02" * 8).decode())
times = st.one_of(
    st.integers(min_value=-5, max_value=2**64 + 5),
    st.sampled_from(["1764000000000000000", "0", "", "00001", "12a", "\u00b2", "1" * 21, "-1"]),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, max_value=1e20, min_value=-1),
)
text = st.text(alphabet="ab\u00e9\ud800 .", max_size=6)
scalar_any = st.one_of(
    st.builds(lambda x: {"stringValue": x}, st.one_of(text, st.integers(0, 3))),
    st.builds(
        lambda x: {"intValue": x},
        st.one_of(st.integers(), st.sampled_from(["7", " 8", "1_0", "x", "9" * 30]), st.booleans()),
    ),
    st.builds(lambda x: {"boolValue": x}, st.one_of(st.booleans(), st.integers(0, 1))),
    st.builds(
        lambda x: {"doubleValue": x},
        st.one_of(st.floats(), st.integers(), st.just(10**400), st.just("2.5")),
    ),
    st.builds(lambda x: {"bytesValue": x}, st.sampled_from(["AAE=", "??"])),
    st.sampled_from(
        [{}, {"string_value": "s"}, {"stringValue": "a", "intValue": "1"}, {"other": 1}, None, "x"]
    ),
)
any_value = st.recursive(
    scalar_any,
    lambda inner: st.one_of(
        st.builds(lambda v: {"arrayValue": {"values": v}}, st.lists(inner, max_size=3)),
        st.builds(
            lambda kv: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in kv]}},
            st.lists(st.tuples(text, inner), max_size=3),
        ),
        st.just({"arrayValue": {"values": "no"}}),
        st.just({"kvlistValue": []}),
    ),
    max_leaves=6,
)
kv = st.one_of(
    st.builds(lambda k, v: {"key": k, "value": v}, text, any_value),
    st.sampled_from([{"key": 1, "value": {}}, {"value": {"stringValue": "x"}}, {"key": "k"}, "kv"]),
)
attributes = st.one_of(st.lists(kv, max_size=4), st.none(), st.just({}), st.just("x"))
status = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "code": st.sampled_from([0, 1, 2, 3, "STATUS_CODE_ERROR", "ERR", True, None]),
            "message": st.one_of(text, st.none(), st.integers(0, 1)),
        },
    ),
    st.just("bad"),
)
event = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.one_of(text, st.integers(0, 2)),
            "attributes": attributes,
            "timeUnixNano": times,
            "time_unix_nano": times,
        },
    ),
    st.just("e"),
)
span = st.fixed_dictionaries(
    {},
    optional={
        "traceId": ids32,
        "trace_id": st.one_of(ids32, st.just(base64.b64encode(b"\x03" * 16).decode())),
        "spanId": st.one_of(ids16, b64_8, st.integers(0, 1)),
        "span_id": ids16,
        "parentSpanId": st.one_of(ids16, st.none()),
        "name": st.one_of(text, st.integers(0, 1)),
        "kind": st.integers(0, 5),
        "startTimeUnixNano": times,
        "endTimeUnixNano": times,
        "start_time_unix_nano": times,
        "attributes": attributes,
        "events": st.one_of(st.lists(event, max_size=2), st.just({}), st.just(0), st.just("x")),
        "status": status,
        "links": st.just([]),
        "extra": st.just(1),
    },
)


def checked(s: Any) -> Any:
    try:
        return _span(s, "p", {"service.name": "x"})
    except BadSpan as e:
        return ("refused", e.path, e.message)
    except Exception as e:  # a crash must be the same crash
        return ("crash", type(e))


@settings(max_examples=300, deadline=None)
@given(span)
def test_the_fast_path_reads_a_span_as_the_checked_decoder_does(s: dict[str, Any]) -> None:
    want = checked(s)
    try:
        got = plain_span(s, {"service.name": "x"})
    except NotPlain:
        return  # left to the checked decoder
    assert got == want


@settings(max_examples=100, deadline=None)
@given(st.lists(span, max_size=3))
def test_a_request_reads_as_span_by_span_checked_decoding(spans: list[dict[str, Any]]) -> None:
    doc = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}
    want: list[Any] = []
    for k, s in enumerate(spans):
        w = checked(s)
        if isinstance(w, tuple):
            want.append(
                (w[0], w[1].replace("p", f"resourceSpans[0].scopeSpans[0].spans[{k}]", 1), w[2])
                if w[0] == "refused"
                else w
            )
            break
        want.append(w)
    got: list[Any] = []
    try:
        got.extend(_walk_json(doc))
    except BadSpan as e:
        got.append(("refused", e.path, e.message))
    except Exception as e:
        got.append(("crash", type(e)))
    for g, w in zip(got, want, strict=True):
        if isinstance(w, tuple):
            assert g == w
        else:
            assert g.__class__ is w.__class__ and (
                g.name,
                g.span_id,
                g.trace_id,
                g.parent_id,
                g.start_ns,
                g.end_ns,
                g.attributes,
                g.events,
                g.status,
                g.status_message,
            ) == (
                w.name,
                w.span_id,
                w.trace_id,
                w.parent_id,
                w.start_ns,
                w.end_ns,
                w.attributes,
                w.events,
                w.status,
                w.status_message,
            )


def test_the_common_shape_takes_the_fast_path() -> None:
    s = {
        "traceId": "cd" * 16,
        "spanId": "ab" * 8,
        "parentSpanId": "",
        "name": "chat",
        "kind": 3,
        "startTimeUnixNano": "1764000000000000000",
        "endTimeUnixNano": 1764000000500000000,
        "attributes": [
            {"key": "s", "value": {"stringValue": "\u00e9"}},
            {"key": "i", "value": {"intValue": "42"}},
            {"key": "b", "value": {"boolValue": False}},
            {"key": "d", "value": {"doubleValue": 0.5}},
            {"key": "a", "value": {"arrayValue": {"values": [{"intValue": 1}]}}},
            {
                "key": "m",
                "value": {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}},
            },
        ],
        "events": [{"name": "e", "timeUnixNano": "5", "attributes": []}],
        "status": {"code": 2, "message": "boom"},
    }
    assert plain_span(s, {}) == _span(s, "p", {})
