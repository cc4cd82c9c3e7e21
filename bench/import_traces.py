"""Speed and peak memory of ``agenteval import-traces`` as the input grows.

    python bench/import_traces.py [--spans 10000 100000 1000000] [--old REF] [--json]

Writes an OTLP/JSON lines file of N spans as an OTel Collector's file exporter does (one
``ExportTraceServiceRequest`` per line, a batch of 20 traces per line, hex ids) and runs
the real CLI on it in a subprocess: ``agenteval import-traces FILE --out DIR --quiet``
with the default scorers. Each trace is one agent invocation with GenAI attributes, 5
spans: ``invoke_agent`` (input, output, tool definitions), ``chat`` (model, tokens),
``execute_tool`` x 2 (name, call id, arguments, result) and a last ``chat``.

Per row: wall time, spans per second and the peak RSS of the import process
(``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``, measured in a fresh wrapper process
per row so one row's peak does not hide the next). ``--old REF`` also runs the code of a
git ref (``git archive REF src`` into a temporary directory) side by side, e.g.
``--old f6c62db``, the commit before the import streamed.

The subprocess runs ``python -m agenteval`` with ``PYTHONPATH`` set to the ``src`` under
test, so the installed copy does not matter.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SPANS_PER_TRACE = 5
TRACES_PER_LINE = 20
T0 = 1_763_884_800_000_000_000  # 2025-11-23T08:00:00Z in ns

_MEASURE = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(p.returncode, wall, rss)
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


def write_traces(path: Path, spans: int) -> int:
    """Write ``spans`` spans (rounded up to whole traces); returns the spans written."""
    traces = -(-spans // SPANS_PER_TRACE)
    resource = {"attributes": [_attr("service.name", "shop-assistant")]}
    scope = {"name": "bench", "version": "1"}
    with open(path, "w", encoding="utf-8") as f:
        for first in range(0, traces, TRACES_PER_LINE):
            batch = [
                s
                for i in range(first, min(first + TRACES_PER_LINE, traces))
                for s in trace_spans(i)
            ]
            doc = {
                "resourceSpans": [
                    {"resource": resource, "scopeSpans": [{"scope": scope, "spans": batch}]}
                ]
            }
            f.write(json.dumps(doc, separators=(",", ":")) + "\n")
    return traces * SPANS_PER_TRACE


def measure(src: Path, trace_file: Path, out: Path, *extra: str) -> dict[str, Any]:
    """Run the CLI of ``src`` on ``trace_file`` (and ``extra`` options): wall seconds,
    peak RSS (MiB) and the stderr summary."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [
        sys.executable,
        "-m",
        "agenteval",
        "import-traces",
        str(trace_file),
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]
    p = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cmd], env=env, capture_output=True, text=True, check=False
    )
    rc, wall, rss = p.stdout.split()
    if int(rc) != 0:
        raise RuntimeError(f"import-traces failed (exit {rc}):\n{p.stderr}")
    return {"seconds": float(wall), "peak_rss_mib": int(rss) / 1024, "stderr": p.stderr.strip()}


def old_src(ref: str, into: Path) -> Path:
    """``src`` of git ref ``ref``, unpacked under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--spans", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--old", metavar="REF", help="also run the code of this git ref")
    ap.add_argument("--old-max-spans", type=int, default=None, help="skip the old code above this")
    ap.add_argument("--json", action="store_true", help="print one JSON line of results at the end")
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        t = Path(tmp)
        codes = [("new", REPO / "src")]
        if args.old:
            codes.append((f"old {args.old}", old_src(args.old, t)))
        head = ("code", "spans", "file MiB", "seconds", "spans/s", "peak RSS MiB")
        print("{:<14} {:>10} {:>9} {:>8} {:>9} {:>13}".format(*head))
        for n in args.spans:
            f = t / f"traces-{n}.jsonl"
            spans = write_traces(f, n)
            size = f.stat().st_size / 2**20
            for name, src in codes:
                if name != "new" and args.old_max_spans is not None and n > args.old_max_spans:
                    continue
                out = t / f"run-{n}-{name.split()[0]}"
                m = measure(src, f, out)
                rate = spans / m["seconds"]
                print(
                    f"{name:<14} {spans:>10,} {size:>9.1f} {m['seconds']:>8.1f} {rate:>9,.0f}"
                    f" {m['peak_rss_mib']:>13.0f}",
                    flush=True,
                )
                rows.append({"code": name, "spans": spans, "file_mib": round(size, 1), **m})
            f.unlink()
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
