"""A varied corpus of trace files and the run directories ``import-traces`` made of them
before the import was made fast (issue 30), so that tests/traces/test_import_golden.py
can check the fast readers, the log index and the spool change nothing a user sees.

The corpus: the recorded instrumentation fixtures (tests/traces/fixtures/genai, with their
log files; tests/fixtures/traces: PydanticAI lines, LangGraph protobuf), and files built
here from plain values: the bench's shop agent (OTLP/JSON lines and protobuf), one trace
of many invocations with log records, and one file of the shapes the fast JSON path hands
to the checked decoder (snake_case keys, base64 ids, events, errors, non-ASCII and lone
surrogates, big integers, doubles, arrays and key-value lists, empty values, second copies
of a span, parent ids in a cycle, conversations across traces).

Regenerate the expected outputs with the code they are to pin (run from the repository)::

    PYTHONPATH=<src> python tests/traces/import_corpus.py --write-golden

Each case's expected output is ``fixtures/import_golden/<case>.json``: the run's
``cases.jsonl`` and ``trials.jsonl`` text, ``run.json`` without what differs between two
imports (``run_id``, the times, the input paths) and the command's stderr.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
GOLDEN = HERE / "fixtures" / "import_golden"
T0 = 1_764_000_000_000_000_000
GENAI = HERE / "fixtures" / "genai"
RECORDED = REPO / "tests" / "fixtures" / "traces"


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def _bench() -> Any:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import import_traces  # bench/import_traces.py: the shop agent's spans
    finally:
        sys.path.pop(0)
    return import_traces


def _request(spans: list[dict[str, Any]], service: str = "shop") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", service)]},
                "scopeSpans": [{"scope": {"name": "corpus"}, "spans": spans}],
            }
        ]
    }


def _odd_spans() -> list[dict[str, Any]]:
    """Spans in the shapes the fast path of the JSON decoder leaves to the checked one."""
    b64 = base64.b64encode
    ms = 1_000_000
    out: list[dict[str, Any]] = []
    # 1: snake_case keys and base64 ids, an error status by name, an exception event
    out.append(
        {
            "trace_id": b64(bytes.fromhex("1f" * 16)).decode(),
            "span_id": b64(bytes.fromhex("2e" * 8)).decode(),
            "name": "invoke_agent snake",
            "start_time_unix_nano": T0,
            "end_time_unix_nano": T0 + 300 * ms,
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"string_value": "invoke_agent"}},
                {"key": "input.value", "value": {"string_value": "snake prompt"}},
            ],
            "status": {"code": "STATUS_CODE_ERROR", "message": "ValueError: bad"},
            "events": [
                {
                    "name": "exception",
                    "time_unix_nano": T0 + 200 * ms,
                    "attributes": [
                        _attr("exception.type", "builtins.ValueError"),
                        _attr("exception.message", "bad"),
                    ],
                }
            ],
        }
    )
    # 2: non-ASCII, a lone surrogate, big integers, doubles, arrays, kvlists, bytes, empties
    tid = "3c" * 16
    out.append(
        {
            "traceId": tid,
            "spanId": "4b" * 8,
            "name": "invoke_agent \u00e9t\u00e9 \ud800",
            "startTimeUnixNano": str(T0 + 1000 * ms),
            "endTimeUnixNano": T0 + 1900 * ms,
            "kind": 2,
            "attributes": [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr(
                    "gen_ai.input.messages", json.dumps([{"role": "user", "content": "h\u00e9"}])
                ),
                _attr("output.value", "r\u00e9ponse \udc00 fin"),
                {"key": "big", "value": {"intValue": "123456789012345678901234567890"}},
                {"key": "bignum", "value": {"intValue": 98765432109876543210987654321}},
                {"key": "neg", "value": {"intValue": -9223372036854775809}},
                {"key": "d", "value": {"doubleValue": 0.1}},
                {"key": "dint", "value": {"doubleValue": 3}},
                {"key": "dstr", "value": {"doubleValue": "2.5"}},
                {"key": "arr", "value": {"arrayValue": {"values": [{"intValue": "1"}, {}]}}},
                {
                    "key": "kv",
                    "value": {
                        "kvlistValue": {
                            "values": [{"key": "k\u00fc", "value": {"boolValue": True}}]
                        }
                    },
                },
                {"key": "raw", "value": {"bytesValue": b64(b"\x00\x01").decode()}},
                {"key": "empty", "value": {}},
                {"key": "two", "value": {"stringValue": "s", "intValue": "1"}},
                {"key": "\u00fcber", "value": {"stringValue": "x"}},
                {"key": "session.id", "value": {"stringValue": "conv-1"}},
            ],
            "status": {"code": 1},
            "events": [{"name": "note", "attributes": [], "timeUnixNano": "0"}],
        }
    )
    # 3: a child tool span with a JSON-text result holding a big integer and an error result
    out.append(
        {
            "traceId": tid,
            "spanId": "5a" * 8,
            "parentSpanId": "4b" * 8,
            "name": "execute_tool lookup",
            "startTimeUnixNano": str(T0 + 1100 * ms),
            "endTimeUnixNano": str(T0 + 1200 * ms),
            "attributes": [
                _attr("gen_ai.operation.name", "execute_tool"),
                _attr("gen_ai.tool.name", "lookup"),
                _attr("gen_ai.tool.call.arguments", '{"id": 184467440737095516160, "x": 1e400}'),
                _attr("gen_ai.tool.call.result", "Error: RuntimeError: no such id"),
            ],
        }
    )
    # 4: a second copy of span 3; 5-6: two spans whose parents form a cycle
    out.append(dict(out[-1]))
    for me, parent in (("6a", "7a"), ("7a", "6a")):
        out.append(
            {
                "traceId": tid,
                "spanId": me * 8,
                "parentSpanId": parent * 8,
                "name": "orphan",
                "startTimeUnixNano": str(T0),
            }
        )
    # 7: the same conversation in another trace, upper-case hex ids, status as an empty object
    out.append(
        {
            "traceId": ("8D" * 16),
            "spanId": ("9C" * 8),
            "name": "invoke_agent shop",
            "startTimeUnixNano": str(T0 + 5000 * ms),
            "endTimeUnixNano": str(T0 + 5400 * ms),
            "attributes": [
                _attr("gen_ai.operation.name", "invoke_agent"),
                _attr("input.value", "second turn"),
                _attr("output.value", "second answer"),
                _attr("session.id", "conv-1"),
                _attr("gen_ai.usage.input_tokens", 7),
            ],
            "status": {},
        }
    )
    # 8: no ids at all (skipped and counted); 9: all-zero parent id (a root)
    out.append({"name": "no ids", "attributes": []})
    out.append(
        {
            "traceId": "ad" * 16,
            "spanId": "be" * 8,
            "parentSpanId": "0" * 16,
            "name": "plain root",
            "startTimeUnixNano": 0,
            "endTimeUnixNano": "",
            "attributes": None,
            "events": [],
        }
    )
    return out


def write_corpus(folder: Path) -> dict[str, list[Path]]:
    """Write the built inputs under ``folder``; the cases (name → files to import)."""
    folder.mkdir(parents=True, exist_ok=True)
    bench = _bench()
    cases: dict[str, list[Path]] = {}
    for traces in sorted(GENAI.glob("*.traces.json")):
        name = traces.name.removesuffix(".traces.json")
        logs = GENAI / f"{name}.logs.json"
        cases[f"genai-{name}"] = [traces, logs] if logs.exists() else [traces]
    cases["pydantic_ai"] = [RECORDED / "pydantic_ai.jsonl"]
    cases["langgraph-pb"] = [RECORDED / "langgraph.pb"]
    shop = folder / "shop.jsonl"
    bench.write_traces(shop, 100)
    cases["shop"] = [shop]
    pb = bench.write_protobuf(folder / "shop-pb", 100)
    cases["shop-pb"] = pb
    many, many_logs = folder / "many.jsonl", folder / "many.logs.json"
    bench.write_traces(many, 40 * bench.SPANS_PER_TRACE, trace_of="ab" * 16)
    bench.write_logs(many_logs, 40, "ab" * 16)
    cases["many-invocations"] = [many, many_logs]
    odd = folder / "odd.jsonl"
    spans = _odd_spans()
    odd.write_text(
        "".join(json.dumps(_request(spans[i : i + 3])) + "\n" for i in range(0, len(spans), 3)),
        encoding="utf-8",
    )
    cases["odd"] = [odd]
    pretty = folder / "odd-pretty.json"  # one pretty-printed document
    pretty.write_text(json.dumps(_request(spans), indent=2), encoding="utf-8")
    cases["odd-pretty"] = [pretty]
    return cases


_VARYING = frozenset(("run_id", "created_at", "finished_at"))


def stable_run(node: Any) -> Any:
    """``run.json`` without what differs between two imports of the same files: the run
    id and the times (at any depth: the summary repeats them), the input files' folders."""
    if isinstance(node, dict):
        out = {k: stable_run(v) for k, v in node.items() if k not in _VARYING}
        if isinstance(out.get("path"), str) and "sha256" in out:
            out["path"] = Path(out["path"]).name
        return out
    if isinstance(node, list):
        return [stable_run(v) for v in node]
    return node


GROUPS = {"invocation": [], "conversation": ["--group", "conversation"]}


def import_case(
    files: list[Path], out: Path, extra: list[str], src: Path | None = None
) -> dict[str, Any]:
    """Run ``import-traces`` on ``files`` (the code of ``src``, else this checkout's):
    what the golden file holds."""
    env = {**os.environ, "PYTHONPATH": str(src or REPO / "src")}
    cmd = [sys.executable, "-m", "agenteval", "import-traces", *map(str, files)]
    p = subprocess.run(
        [*cmd, "--out", str(out), "--quiet", *extra],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    got: dict[str, Any] = {"exit": p.returncode, "stderr": p.stderr}
    if p.returncode == 0:
        got["run"] = stable_run(json.loads((out / "run.json").read_text(encoding="utf-8")))
        for name in ("cases.jsonl", "trials.jsonl"):
            got[name] = (out / name).read_text(encoding="utf-8")
    return got


def main() -> int:
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        src = Path(os.environ["PYTHONPATH"]) if os.environ.get("PYTHONPATH") else None
        for name, files in write_corpus(t / "in").items():
            for group, extra in GROUPS.items():
                got = import_case(files, t / f"out-{name}-{group}", extra, src)
                path = GOLDEN / f"{name}.{group}.json"
                path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
                print(path.name, got["exit"])
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-golden"]:
        sys.exit(__doc__)
    sys.exit(main())
