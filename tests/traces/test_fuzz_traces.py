"""Fuzzing ``import-traces`` and the OTLP receiver with Hypothesis (issue 28): any
OTLP/JSON or OpenInference input gives exit 0, or exit 2 with one ``agenteval: error:``
line and no RUN_DIR; at the receiver, a 2xx, or a 4xx counted as refused with at most one
logged line; never a traceback or a 500. Bounded numbers of examples (seconds)."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import logging
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agenteval.cli import main
from agenteval.traces.receiver import OtlpReceiver

# -- strategies -------------------------------------------------------------------------

_odd_text = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", " ", "\ud83d", "a\udfffb", "=cmd", "\x1b[2J", "\u202e", "²", "٣"]),
)
_junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _odd_text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_odd_text, c, max_size=3),
    max_leaves=8,
)
_hex = st.integers(min_value=0, max_value=40).flatmap(
    lambda n: st.text(alphabet="0123456789abcdefABCDEF", min_size=n, max_size=n)
)
_bad_ids = st.one_of(_hex, st.just("0" * 32), st.just("0" * 16), st.just("AAAAAAAAAAA="), _junk)
_ids = _bad_ids
_trace_ids = st.one_of(*[st.sampled_from(["1" * 32, "2" * 32, "ab" * 16])] * 6, _bad_ids)
_span_ids = st.one_of(
    *[st.text(alphabet="0123456789abcdef", min_size=16, max_size=16)] * 6, _bad_ids
)
_good_times = st.integers(min_value=1, max_value=2**63).map(str)
_times = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=0, max_value=2**64 - 1).map(str),
    st.text(alphabet="0123456789²٣-", max_size=30),
    st.just("9" * 5000),
    _junk,
)
_any_value = st.recursive(
    st.one_of(
        st.builds(lambda v: {"stringValue": v}, _odd_text),
        st.builds(lambda v: {"intValue": v}, st.one_of(st.integers(), st.text(max_size=8))),
        st.builds(lambda v: {"doubleValue": v}, st.one_of(st.floats(), st.text(max_size=5))),
        st.builds(lambda v: {"boolValue": v}, _junk),
        st.builds(lambda v: {"bytesValue": v}, _odd_text),
        st.builds(lambda v: {"stringValue": v}, _odd_text),
        st.builds(lambda v: {"stringValue": v}, _odd_text),
        st.builds(lambda v: {"intValue": v}, st.integers()),
        _junk,
    ),
    lambda c: st.one_of(
        st.builds(lambda vs: {"arrayValue": {"values": vs}}, st.lists(c, max_size=3)),
        st.builds(
            lambda kvs: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in kvs]}},
            st.lists(st.tuples(_odd_text, c), max_size=3),
        ),
    ),
    max_leaves=6,
)
_keys = st.sampled_from(
    ["gen_ai.operation.name", "input.value", "output.value", "case", "session.id", "x"]
)
_good_attrs = st.lists(
    st.builds(lambda k, v: {"key": k, "value": {"stringValue": v}}, _keys, _odd_text), max_size=4
)
_attrs = st.one_of(
    _good_attrs,
    _good_attrs,
    _good_attrs,
    st.lists(
        st.builds(lambda k, v: {"key": k, "value": v}, _keys | _odd_text, _any_value), max_size=4
    ),
    st.just([{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]),
    _junk,
)


_otlp_span = st.fixed_dictionaries(
    {"traceId": _trace_ids, "spanId": _span_ids, "name": _odd_text},
    optional={
        "parentSpanId": _span_ids,
        "startTimeUnixNano": st.one_of(_good_times, _good_times, _times),
        "endTimeUnixNano": st.one_of(_good_times, _good_times, _times),
        "attributes": _attrs,
        "status": st.one_of(
            st.builds(lambda c: {"code": c}, st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR"])),
            st.builds(lambda c: {"code": c}, _junk),
            _junk,
        ),
        "events": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {"name": _odd_text}, optional={"timeUnixNano": _times, "attributes": _attrs}
                ),
                max_size=2,
            ),
            _junk,
        ),
    },
)
_otlp_doc = st.builds(
    lambda spans, res: {
        "resourceSpans": [{"resource": {"attributes": res}, "scopeSpans": [{"spans": spans}]}]
    },
    st.lists(_otlp_span, max_size=4),
    _attrs,
)
_iso = st.one_of(
    st.datetimes(timezones=st.timezones()).map(lambda t: t.isoformat()),
    st.sampled_from(["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59Z", "nope", ""]),
    st.integers(min_value=-(2**66), max_value=2**66),
    _junk,
)
_oi_span = st.fixed_dictionaries(
    {
        "context": st.one_of(
            *[st.fixed_dictionaries({"trace_id": _trace_ids, "span_id": _span_ids})] * 4, _junk
        )
    },
    optional={
        "name": _junk,
        "parent_id": _span_ids,
        "span_kind": st.sampled_from(["AGENT", "LLM", "TOOL", ""]) | _junk,
        "start_time": _iso,
        "end_time": _iso,
        "status_code": st.sampled_from(["OK", "ERROR", "UNSET"]) | _junk,
        "attributes": st.one_of(
            st.dictionaries(_keys | _odd_text, _junk, max_size=4),
            st.builds(lambda v: {"input": {"value": v}, "output": {"value": v}}, _odd_text),
            _junk,
        ),
        "events": _junk,
    },
)
_docs = st.one_of(
    st.lists(_otlp_doc, min_size=1, max_size=3),
    st.lists(_oi_span, min_size=1, max_size=4),
    st.lists(st.one_of(_otlp_doc, _oi_span, _junk), min_size=1, max_size=3),
)


def _file_bytes(docs: list[Any], one_document: bool) -> bytes:
    if one_document:
        return json.dumps(docs if len(docs) > 1 else docs[0], indent=1).encode()
    return "".join(json.dumps(d) + "\n" for d in docs).encode()


# -- import-traces ------------------------------------------------------------------------


def _one_line_refusal(err: str) -> bool:
    return err.startswith("agenteval: error: ") and err.count("\n") == 1


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)
@given(
    docs=_docs, one_document=st.booleans(), group=st.sampled_from(["invocation", "conversation"])
)
def test_import_traces_any_input_exits_0_or_2_in_one_line(
    capsys: Any, docs: list[Any], one_document: bool, group: str
) -> None:
    d = Path(tempfile.mkdtemp(prefix="fuzz-import-"))
    try:
        f = d / "t.jsonl"
        f.write_bytes(_file_bytes(docs, one_document))
        out = d / "out"
        argv = ["import-traces", str(f), "--out", str(out), "--quiet", "--group", group]
        code = main([*argv, "--case-id-attr", "case"])
        err = capsys.readouterr().err
        event(f"exit {code}" + (f": {err.rsplit(': ', 1)[-1][:40]}" if code else ""))
        assert code in (0, 2), (code, err)
        if code == 2:
            assert _one_line_refusal(err), err
            assert not out.exists(), "a RUN_DIR was left on exit 2"
        else:
            (out / "cases.jsonl").read_bytes().decode("utf-8")  # valid UTF-8
            (out / "trials.jsonl").read_bytes().decode("utf-8")
            assert main(["report", str(out)]) == 0
            capsys.readouterr()
    finally:
        shutil.rmtree(d, ignore_errors=True)


NASTY = [
    # surrogates, a blank case id, an all-zero id and times at the range's ends
    '{"resourceSpans":[{"scopeSpans":[{"spans":['
    '{"traceId":"' + "1" * 32 + '","spanId":"' + "2" * 16 + '","name":"invoke_agent \\ud83d",'
    '"startTimeUnixNano":"1","endTimeUnixNano":"18446744073709551615","attributes":['
    '{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}},'
    '{"key":"case","value":{"stringValue":" "}},'
    '{"key":"input.value","value":{"stringValue":"\\udfff"}}]},'
    '{"traceId":"' + "0" * 32 + '","spanId":"' + "3" * 16 + '"}]}]}]}\n',
    # OpenInference attributes 1,000 deep (json.loads reads it; the decoder refuses it)
    '{"context":{"trace_id":"'
    + "1" * 32
    + '","span_id":"'
    + "2" * 16
    + '"},"attributes":'
    + '{"k":' * 1000
    + '"v"'
    + "}" * 1000
    + "}\n",
    # a time of 10^25 ns, and a 5,000-digit number
    '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"'
    + "1" * 32
    + '","spanId":"'
    + "2" * 16
    + '","startTimeUnixNano":"'
    + "1"
    + "0" * 25
    + '","x":'
    + "9" * 5000
    + "}]}]}]}\n",
]


@pytest.mark.parametrize("text", NASTY, ids=["surrogates", "deep", "huge-numbers"])
def test_import_traces_as_a_real_process_on_nasty_files(
    cli: Any, tmp_path: Path, text: str
) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text(text, encoding="ascii")
    out = tmp_path / "out"
    r = cli("import-traces", f, "--out", out, "--case-id-attr", "case")
    assert r.returncode in (0, 2), r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    if r.returncode == 2:
        assert _one_line_refusal(r.stderr), r.stderr
        assert not out.exists()
    else:
        assert (out / "trials.jsonl").read_bytes().decode("utf-8")


# -- the receiver ---------------------------------------------------------------------------


class _Served:
    """An OtlpReceiver on 127.0.0.1 served from a thread's own event loop."""

    def __init__(self) -> None:
        self.logged: list[str] = []
        self.errors: list[str] = []
        handler = logging.Handler(logging.ERROR)
        handler.emit = lambda rec: self.errors.append(rec.getMessage())  # type: ignore[method-assign]
        logging.getLogger("aiohttp").addHandler(handler)
        self.loop = asyncio.new_event_loop()
        self.receiver = OtlpReceiver("127.0.0.1", 0, log=self.logged.append, max_body=1 << 20)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.receiver.start(), self.loop).result(10)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.receiver.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def served() -> Iterator[_Served]:
    s = _Served()
    yield s
    s.close()


def _post(port: int, body: bytes, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.request("POST", "/v1/traces", body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(
    docs=st.one_of(st.lists(_otlp_doc, min_size=1, max_size=1), _docs),
    ctype=st.sampled_from(["application/json"] * 6 + ["application/x-protobuf", "text/plain"]),
    encoding=st.sampled_from(["", "", "", "gzip", "zstd", "deflate", "br", "gzip, br"]),
    garble=st.sampled_from([0, 0, 0, 0, 1, 2]),
)
def test_the_receiver_answers_any_body_with_a_2xx_or_a_counted_4xx(
    served: _Served, docs: list[Any], ctype: str, encoding: str, garble: int
) -> None:
    body = json.dumps(docs[0] if len(docs) == 1 else docs).encode()
    if encoding == "gzip":
        body = gzip.compress(body)
    elif encoding == "zstd":
        import zstandard

        body = zstandard.ZstdCompressor().compress(body)
    if garble == 1:
        body = body[: len(body) // 2]
    elif garble == 2:
        body = b"\xff\xfe" + body
    headers = {"Content-Type": ctype}
    if encoding:
        headers["Content-Encoding"] = encoding
    before = served.receiver.stats.malformed
    status = _post(served.receiver.port, body, headers)
    event(f"HTTP {status}")
    assert status < 500, status
    refused = served.receiver.stats.malformed - before
    assert refused == (1 if status >= 400 else 0), (status, refused)
    assert all("\n" not in line for line in served.logged)
    assert len(served.logged) <= 5
    assert served.errors == [], served.errors  # aiohttp logs a handler's traceback
