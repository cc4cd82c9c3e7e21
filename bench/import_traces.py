"""Speed and peak memory of ``agenteval import-traces``, side by side with another copy
of the code (issue 30).

    python bench/import_traces.py [--spans 200000] [--format json protobuf]
        [--baseline-src ../base/src] [--rounds 3] [--many 2000 8000]
        [--no-builtin-scorers] [--smoke] [--json]

**Input.** For OTLP/JSON, one lines file of N spans as an OTel Collector's file exporter
writes it (one ``ExportTraceServiceRequest`` per line, a batch of 20 traces per line, hex
ids); for protobuf, the same spans as serialized ``ExportTraceServiceRequest`` files of
20,000 spans each (a request cannot be split without decoding it, so a real export is
many files). Each trace is one agent invocation with GenAI attributes, 5 spans:
``invoke_agent`` (input, output, tool definitions), ``chat`` (model, tokens),
``execute_tool`` x 2 (name, call id, arguments, result) and a last ``chat``. ``--many N``
adds the case of one trace holding N invocations (5N spans under one trace id) with an
OTLP/JSON logs file beside it (one log record per invocation, joined to its ``chat`` span).

**What runs.** The real CLI in a subprocess: ``python -m agenteval import-traces FILE...
--out DIR --quiet`` (the default scorers unless ``--no-builtin-scorers``), with
``PYTHONPATH`` set to the ``src`` under test (``src`` of this checkout, and the one given
by ``--baseline-src``), so the installed copy does not matter. The two alternate for
``--rounds`` rounds; each row prints the median and the spread (min-max) of:

- **CPU s**: user + system CPU of the import process (``resource.getrusage
  (RUSAGE_CHILDREN)`` in a fresh wrapper process per measurement), the number the "one
  core" targets are about: the machine is shared, so wall time is noisy;
- **wall s** and **spans/s** (spans over CPU seconds);
- **peak RSS MiB** (``ru_maxrss`` of that process).

``--smoke`` runs tiny sizes once (a test runs it so the script never rots; nothing is
timed there).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SPANS_PER_TRACE = 5
TRACES_PER_LINE = 20
SPANS_PER_PB_FILE = 20_000
T0 = 1_763_884_800_000_000_000  # 2025-11-23T08:00:00Z in ns

_MEASURE = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(p.returncode, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss)
sys.stderr.write(p.stderr[-2000:])
"""


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(
    trace: str, span: str, parent: str | None, name: str, start: int, end: int, **attrs: Any
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
        "status": {},
    }
    if parent:
        s["parentSpanId"] = parent
    return s


_TOOLS = json.dumps(
    [
        {
            "type": "function",
            "name": "get_order",
            "description": "Look up an order by id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
        {
            "type": "function",
            "name": "get_customer",
            "description": "Look up a customer by id.",
            "parameters": {
                "type": "object",
                "properties": {"customer_id": {"type": "string"}},
                "required": ["customer_id"],
            },
        },
    ]
)


def trace_spans(i: int) -> list[dict[str, Any]]:
    """The 5 spans of invocation ``i``: an agent answering about one order."""
    trace = f"{i + 1:032x}"
    ids = [f"{i * SPANS_PER_TRACE + k + 1:016x}" for k in range(SPANS_PER_TRACE)]
    start = T0 + i * 2_000_000_000
    ms = 1_000_000
    order, customer = f"O-{1000 + i % 9000}", f"C-{100 + i % 900}"
    question = f"What is the status of order {order}, and who placed it?"
    answer = f"Order {order} was shipped; it was placed by customer {customer}."
    root = _span(
        trace,
        ids[0],
        None,
        "invoke_agent shop",
        start,
        start + 900 * ms,
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "shop",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": question}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
            "gen_ai.tool.definitions": _TOOLS,
            "session.id": f"s-{i // 3}",
        },
    )

    def chat(k: int, t: int, tin: int, tout: int) -> dict[str, Any]:
        return _span(
            trace,
            ids[k],
            ids[0],
            "chat gpt-4o-mini",
            t,
            t + 250 * ms,
            **{
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": tin,
                "gen_ai.usage.output_tokens": tout,
            },
        )

    def tool(k: int, t: int, name: str, args: dict[str, str], result: dict[str, Any]) -> Any:
        return _span(
            trace,
            ids[k],
            ids[0],
            f"execute_tool {name}",
            t,
            t + 40 * ms,
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": f"call_{i}_{k}",
                "gen_ai.tool.call.arguments": json.dumps(args),
                "gen_ai.tool.call.result": json.dumps(result),
            },
        )

    return [
        root,
        chat(1, start + 10 * ms, 412, 38),
        tool(2, start + 270 * ms, "get_order", {"order_id": order}, {"status": "shipped"}),
        tool(3, start + 320 * ms, "get_customer", {"customer_id": customer}, {"name": "Ada"}),
        chat(4, start + 370 * ms, 530, 22),
    ]


def _docs(spans: int, trace_of: Any = None) -> Any:
    """OTLP/JSON requests (dicts) of ``spans`` spans (whole traces), 20 traces each."""
    traces = -(-spans // SPANS_PER_TRACE)
    resource = {"attributes": [_attr("service.name", "shop-assistant")]}
    scope = {"name": "bench", "version": "1"}
    for first in range(0, traces, TRACES_PER_LINE):
        batch = []
        for i in range(first, min(first + TRACES_PER_LINE, traces)):
            for s in trace_spans(i):
                if trace_of is not None:
                    s["traceId"] = trace_of
                batch.append(s)
        yield {
            "resourceSpans": [
                {"resource": resource, "scopeSpans": [{"scope": scope, "spans": batch}]}
            ]
        }


def write_traces(path: Path, spans: int, trace_of: str | None = None) -> int:
    """Write ``spans`` spans (rounded up to whole traces) as OTLP/JSON lines; returns the
    spans written. ``trace_of``: one trace id for every span (one trace of many
    invocations)."""
    with open(path, "w", encoding="utf-8") as f:
        for doc in _docs(spans, trace_of):
            f.write(json.dumps(doc, separators=(",", ":")) + "\n")
    return -(-spans // SPANS_PER_TRACE) * SPANS_PER_TRACE


def write_logs(path: Path, invocations: int, trace_id: str) -> None:
    """One OTLP/JSON log record per invocation, joined to its first ``chat`` span (a
    ``gen_ai.choice`` event, as the OpenAI instrumentation emits with content on logs)."""
    records = []
    for i in range(invocations):
        records.append(
            {
                "timeUnixNano": str(T0 + i * 2_000_000_000 + 200_000_000),
                "traceId": trace_id,
                "spanId": f"{i * SPANS_PER_TRACE + 2:016x}",
                "eventName": "gen_ai.choice",
                "attributes": [_attr("gen_ai.system", "openai")],
                "body": {"kvlistValue": {"values": [{"key": "index", "value": {"intValue": "0"}}]}},
            }
        )
    doc = {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {}, "logRecords": records}]}]}
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")


def _to_protobuf(docs: list[dict[str, Any]]) -> bytes:
    """OTLP/JSON requests (hex ids) as one serialized protobuf request."""
    import base64

    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    req = ExportTraceServiceRequest()
    for doc in docs:
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    for k in ("traceId", "spanId", "parentSpanId"):
                        if k in s:
                            s[k] = base64.b64encode(bytes.fromhex(s[k])).decode()
            ParseDict(rs, req.resource_spans.add())
    return req.SerializeToString()


def write_protobuf(folder: Path, spans: int) -> list[Path]:
    """The spans of :func:`write_traces` as protobuf request files of
    :data:`SPANS_PER_PB_FILE` spans each."""
    folder.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    batch: list[dict[str, Any]] = []
    held = 0
    per_doc = TRACES_PER_LINE * SPANS_PER_TRACE
    for doc in _docs(spans):
        batch.append(doc)
        held += per_doc
        if held >= SPANS_PER_PB_FILE:
            files.append(folder / f"part-{len(files):04d}.pb")
            files[-1].write_bytes(_to_protobuf(batch))
            batch, held = [], 0
    if batch:
        files.append(folder / f"part-{len(files):04d}.pb")
        files[-1].write_bytes(_to_protobuf(batch))
    return files


def measure(src: Path, files: list[Path], out: Path, *extra: str) -> dict[str, Any]:
    """Run the CLI of ``src`` on ``files`` (and ``extra`` options): wall and CPU seconds,
    peak RSS (MiB) and the stderr summary."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "agenteval", "import-traces", *map(str, files)]
    cmd += ["--out", str(out), "--quiet", *extra]
    p = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cmd], env=env, capture_output=True, text=True, check=False
    )
    rc, wall, cpu, rss = p.stdout.split()
    if int(rc) != 0:
        raise RuntimeError(f"import-traces failed (exit {rc}):\n{p.stderr}")
    return {
        "seconds": float(wall),
        "cpu_s": float(cpu),
        "peak_rss_mib": int(rss) / 1024,
        "stderr": p.stderr.strip(),
    }


def _row(name: str, spans: int, got: list[dict[str, Any]]) -> dict[str, Any]:
    cpu = [g["cpu_s"] for g in got]
    wall = [g["seconds"] for g in got]
    rss = [g["peak_rss_mib"] for g in got]
    return {
        "code": name,
        "spans": spans,
        "cpu_s": statistics.median(cpu),
        "cpu_spread": [min(cpu), max(cpu)],
        "wall_s": statistics.median(wall),
        "spans_per_cpu_s": spans / statistics.median(cpu),
        "peak_rss_mib": max(rss),
        "stderr": got[-1]["stderr"],
    }


def _print(case: str, r: dict[str, Any], base: dict[str, Any] | None) -> None:
    lo, hi = r["cpu_spread"]
    ratio = f"{base['cpu_s'] / r['cpu_s']:>6.1f}x" if base is not None else " " * 7
    print(
        f"{case:<28} {r['code']:<9} {r['spans']:>9,} {r['cpu_s']:>7.2f} ({lo:.2f}-{hi:.2f})"
        f" {r['wall_s']:>7.2f} {r['spans_per_cpu_s']:>9,.0f} {r['peak_rss_mib']:>8.0f} {ratio}",
        flush=True,
    )


def compare(
    case: str,
    spans: int,
    files: list[Path],
    codes: list[tuple[str, Path]],
    tmp: Path,
    rounds: int,
    extra: list[str],
) -> list[dict[str, Any]]:
    """Alternate the codes for ``rounds`` rounds on one input; print a row per code."""
    got: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in codes}
    for k in range(rounds):
        for name, src in codes if k % 2 == 0 else codes[::-1]:
            out = tmp / f"run-{name}-{k}"
            got[name].append(measure(src, files, out, *extra))
            _rm(out)
    rows = [_row(name, spans, got[name]) for name, _ in codes]
    base = rows[1] if len(rows) > 1 else None
    for r in rows:
        _print(case, r, base if r is not base else None)
    return rows


def _rm(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--spans", type=int, nargs="*", default=[200_000])
    ap.add_argument(
        "--format", nargs="+", choices=("json", "protobuf"), default=["json", "protobuf"]
    )
    ap.add_argument("--baseline-src", type=Path, help="src of the code to compare with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--many",
        type=int,
        nargs="*",
        default=[],
        metavar="N",
        help="also one trace of N invocations (with a logs file)",
    )
    ap.add_argument(
        "--no-builtin-scorers",
        action="store_true",
        help="import without scoring (what the reading and mapping cost)",
    )
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    ap.add_argument("--json", action="store_true", help="print one JSON line of results at the end")
    args = ap.parse_args(argv)
    if args.smoke:
        args.spans, args.rounds, args.many = [200], 1, [20]
    extra = ["--no-builtin-scorers"] if args.no_builtin_scorers else []
    codes = [("new", REPO / "src")]
    if args.baseline_src:
        codes.append(("baseline", args.baseline_src.resolve()))
    rows: list[dict[str, Any]] = []
    head = ("case", "code", "spans", "CPU s (spread)", "wall s", "spans/s", "RSS MiB", "speedup")
    print("{:<28} {:<9} {:>9} {:>19} {:>7} {:>9} {:>8} {:>7}".format(*head))
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        t = Path(tmp)
        for n in args.spans:
            for fmt in args.format:
                if fmt == "json":
                    files = [t / f"traces-{n}.jsonl"]
                    spans = write_traces(files[0], n)
                else:
                    files = write_protobuf(t / f"pb-{n}", n)
                    spans = -(-n // SPANS_PER_TRACE) * SPANS_PER_TRACE
                case = f"{fmt}, {len(files)} file(s)"
                rows += compare(case, spans, files, codes, t, args.rounds, extra)
                for f in files:
                    f.unlink()
        trace = "ab" * 16
        for n in args.many:
            f, logs = t / f"many-{n}.jsonl", t / f"many-{n}.logs.json"
            spans = write_traces(f, n * SPANS_PER_TRACE, trace_of=trace)
            write_logs(logs, n, trace)
            rows += compare(
                f"1 trace, {n:,} invocations", spans, [f, logs], codes, t, args.rounds, extra
            )
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
