"""``agenteval export-otel RUN (--otlp-endpoint URL | --file OUT.jsonl)``: a run as traces.

Each trial becomes one OpenTelemetry trace in the GenAI conventions — an ``invoke_agent``
span with ``chat`` and ``execute_tool`` child spans timed from the trial, and every score
as a ``gen_ai.evaluation.result`` event — so a run can be looked at in any tracing UI
(Jaeger, Phoenix, Langfuse, logfire...). ``--otlp-endpoint`` sends them with the official
OTLP/HTTP exporter (``http://host:4318`` gets ``/v1/traces``; headers from
``OTEL_EXPORTER_OTLP_HEADERS``); ``--file`` writes OTLP/JSON lines, one trace per line,
which ``agenteval import-traces`` reads back. The file must not exist: it is never
overwritten. Needs the ``otel`` extra. See docs/traces.md.

Exit codes: 0 exported; 2 unusable input (not a run, a file that exists...); 5 the
receiver did not accept a trace (unreachable or an error answer) or the file could not be
written.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

from agenteval._util.outpaths import check_out_files
from agenteval.errors import InputError, RunWriteError


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "export-otel",
        help="export a run as OpenTelemetry traces (OTLP/HTTP endpoint or OTLP/JSON file)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run", metavar="RUN", help="the run directory")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--otlp-endpoint", metavar="URL", help="OTLP/HTTP receiver")
    where.add_argument("--file", metavar="OUT.jsonl", help="new OTLP/JSON lines file")
    p.add_argument(
        "--service-name",
        default="agenteval",
        metavar="NAME",
        help="service.name of the exported resource (default agenteval)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds the exporter waits for the endpoint, retries included (default 10)",
    )
    p.set_defaults(func=run)


def _need_otel() -> None:
    try:
        import opentelemetry.exporter.otlp.proto.http
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise InputError(
            "export-otel needs the OpenTelemetry SDK and OTLP exporter: pip install -e '.[otel]'"
        ) from None


def run(args: argparse.Namespace) -> int:
    # imported when this command runs: the other commands start without it
    from agenteval._util.secrets import redact_urls
    from agenteval.rundir import read_header

    read_header(args.run)  # not a run: exit 2 before anything else
    _need_otel()
    # imported when this command runs: the other commands start without it
    from agenteval.report.otel import OtlpJsonFile, export_run, otlp_http_sink

    if args.otlp_endpoint is not None:
        # the exporter logs its own line on failure; ours (exit 5) is the one line
        logging.getLogger("opentelemetry.exporter.otlp").setLevel(logging.CRITICAL + 1)
        sink = otlp_http_sink(args.otlp_endpoint, args.timeout)
        stats = export_run(args.run, sink, service_name=args.service_name)
        where = redact_urls(args.otlp_endpoint)
    else:
        out = check_out_files([("--file", args.file)], [("run", args.run)])[0]
        if out.exists() or out.is_symlink():
            raise InputError(f"--file {out}: exists; export-otel never overwrites a file")
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "x", encoding="utf-8") as fh:
                stats = export_run(args.run, OtlpJsonFile(fh), service_name=args.service_name)
            os.link(tmp, out)  # fails, rather than replace, if the file appeared meanwhile
        except FileExistsError:
            raise InputError(f"--file {out}: exists; export-otel never overwrites a file") from None
        except OSError as e:
            raise RunWriteError(f"cannot write {out}: {e.strerror or e}") from None
        finally:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
        where = str(out)
    print(f"exported {stats.traces} traces ({stats.spans} spans) to {where}", file=sys.stdout)
    return 0
