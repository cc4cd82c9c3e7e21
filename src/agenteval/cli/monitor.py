"""``agenteval monitor --listen HOST:PORT --out DIR``: score live OpenTelemetry traffic.

An OTLP/HTTP endpoint (``/v1/traces``, ``/v1/logs``; protobuf or JSON; gzip, deflate,
zstd) for an exporter or the OpenTelemetry Collector to send to. Each request is answered
200 only once it is durable in DIR's write-ahead log. Each trace, once done (its root span
ended and nothing arrived for --idle seconds, or --max-wait seconds after its first span),
is mapped to cases and trials as import-traces maps a file, scored by every deterministic
scorer, and appended to its window: an ordinary run directory under DIR (DIR/2026-12-02T01
for --window 1h), which report, view, gate and rescore read. With --rubric, a sample of
the trials (--judge-sample RATE, by trace id) is also graded by the LLM judge, within
--judge-max-usd-per-hour. With --group conversation the traces of one conversation make
one trial once the conversation is done (--conversation-idle, --conversation-max-wait).
Each closed window is gated (unpaired) against the same window a week earlier when it is
there, else against --baseline RUN, at alpha-per-day / windows-per-day; an alert is a
line on stderr, a JSON line in DIR/alerts.jsonl and an optional webhook POST.
GET /metrics serves Prometheus counters. Killed (even with SIGKILL) and started again on
the same DIR, it replays the log: every acknowledged span is scored exactly once.

Prints ``listening on http://HOST:PORT`` once it answers (--listen 127.0.0.1:0 picks a
free port); stops on Ctrl-C or SIGTERM (exit 0). Exit 2: unusable arguments, a port that
cannot be bound, DIR used by another monitor, a --judge-* option without --rubric, a
--judge-max-usd-per-hour for a model the price table does not price; exit 5: DIR cannot
be written.
See docs/monitor.md.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agenteval.cli._common import add_scorer_args, build_scorers, flagged, say
from agenteval.cli._units import duration, size
from agenteval.cli.judge_args import add_judge_args, judge_config_from_args
from agenteval.errors import EXIT_OK, InputError, cannot_write


def said(text: str) -> None:
    """A line of the monitor's log on stderr, the settings it names shown as their flags
    (``max_pending_spans`` as ``--max-pending-spans``)."""
    say(flagged(text))


_REPLICA = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "monitor",
        help="score live OpenTelemetry traffic into hourly runs, with metrics and alerts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--listen",
        default="127.0.0.1:4318",
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:4318, OTLP/HTTP's port; port 0: any free one)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="where windows and the log go")
    p.add_argument(
        "--replica",
        metavar="NAME",
        help="write shard NAME of each window (DIR/WINDOW/NAME/), for several monitors behind"
        " the Collector's trace-id routing; give each a stable name (letters, digits, . _ -)",
    )
    p.add_argument("--window", default="1h", metavar="DURATION", help="window length (1h)")
    p.add_argument(
        "--idle",
        default="5s",
        metavar="DURATION",
        help="quiet time that ends a trace once its root span has ended (5s)",
    )
    p.add_argument(
        "--max-wait",
        default="5m",
        metavar="DURATION",
        help="a trace is done at the latest this long after its first span (5m)",
    )
    p.add_argument(
        "--group",
        choices=("invocation", "conversation"),
        default="invocation",
        help="one trial per agent invocation (default), or per conversation"
        " (gen_ai.conversation.id, session.id) once it is done",
    )
    p.add_argument(
        "--conversation-idle",
        default="5m",
        metavar="DURATION",
        help="with --group conversation: a conversation is done when no trace of it was"
        " done for this long (5m)",
    )
    p.add_argument(
        "--conversation-max-wait",
        default="30m",
        metavar="DURATION",
        help="... or at the latest this long after its first trace was done (30m)",
    )
    p.add_argument("--case-id-attr", metavar="ATTR", help="as import-traces")
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="ATTR=VALUE",
        help="only invocations whose root span (or resource) has ATTR=VALUE",
    )
    p.add_argument("--dataset", metavar="FILE", help="join traces to this dataset's cases")
    p.add_argument("--join-attr", metavar="ATTR", help="span attribute holding the case id")
    p.add_argument(
        "--baseline",
        metavar="RUN",
        help="gate each closed window against RUN (when no window a week earlier is there)",
    )
    p.add_argument(
        "--baseline-week-earlier",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="gate each closed window against DIR's window a week earlier when it exists"
        " and is closed, before --baseline (default: on when no --baseline is given)",
    )
    p.add_argument(
        "--alpha-per-day",
        type=float,
        default=0.05,
        metavar="A",
        help="bound on false alarms per day of unchanged traffic (0.05)",
    )
    p.add_argument("--alert-webhook", metavar="URL", help="POST each alert's JSON here")
    p.add_argument(
        "--export-otlp",
        metavar="URL",
        help="send each score as a gen_ai.evaluation.result event on its trace (OTLP/HTTP)",
    )
    p.add_argument(
        "--export-phoenix",
        metavar="URL",
        help="send each score to Arize Phoenix at URL as a span annotation on its trace's root"
        " span (Phoenix's REST API: Phoenix does not take OTLP logs)",
    )
    p.add_argument(
        "--max-pending-spans",
        type=int,
        default=1_000_000,
        metavar="N",
        help="answer 429 beyond this many spans in flight (1000000)",
    )
    p.add_argument(
        "--max-wal-bytes",
        default="1G",
        metavar="SIZE",
        help="answer 503 once the write-ahead log holds this much (1G)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests whose Host header is NAME",
    )
    add_scorer_args(p)
    add_judge_args(p)
    g = p.add_argument_group("the judge in the monitor")
    g.add_argument(
        "--judge-sample",
        type=float,
        default=1.0,
        metavar="RATE",
        help="judge this share of the traces, chosen by trace id (0 < RATE <= 1; default 1)",
    )
    g.add_argument(
        "--judge-max-usd-per-hour",
        type=float,
        metavar="USD",
        help="stop judging while the judge's cost over the last hour is this much",
    )
    g.add_argument("--prices", metavar="FILE", help="price table (YAML/JSON) per 1M tokens")
    p.set_defaults(func=run)


def _where(pairs: list[str]) -> list[tuple[str, str]]:
    out = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InputError(f"--where '{pair}' must look like ATTR=VALUE")
        out.append((name, value))
    return out


def _url(value: str | None, option: str) -> None:
    """``http://HOST[:PORT][/PATH]`` or ``https://...``; else an InputError naming the
    option (a URL the client cannot use would only fail at the first alert or score)."""
    if value is None:
        return
    parts = urlsplit(value)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise InputError(f"{option} must be an http:// or https:// URL, got {value!r}")


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT``, ``:PORT``) → (host, port)."""
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError(f"--listen must be HOST:PORT (port 0-65535), got {value!r}")
    return host, int(port)


def _config(args: argparse.Namespace) -> Any:
    # imported when this command runs: the other commands start without it
    from agenteval.monitor import MapOptions, MonitorConfig
    from agenteval.rundir import read_header

    window = duration(args.window, "--window")
    if window < 1 or window != int(window) or (86400 % int(window) and int(window) % 86400):
        raise InputError(
            f"--window must be whole seconds dividing a day (or whole days), got {args.window!r}"
        )
    idle = duration(args.idle, "--idle")
    max_wait = duration(args.max_wait, "--max-wait")
    if max_wait < idle:
        raise InputError(f"--max-wait ({args.max_wait}) must be at least --idle ({args.idle})")
    if max_wait >= window:
        raise InputError(f"--max-wait ({args.max_wait}) must be shorter than --window")
    if args.max_pending_spans < 1:
        raise InputError("--max-pending-spans must be at least 1")
    if not 0.0 < args.alpha_per_day < 1.0:
        raise InputError(f"--alpha-per-day must be within (0, 1), got {args.alpha_per_day}")
    _url(args.alert_webhook, "--alert-webhook")
    _url(args.export_otlp, "--export-otlp")
    _url(args.export_phoenix, "--export-phoenix")
    if args.export_otlp and args.export_phoenix:
        raise InputError("--export-otlp and --export-phoenix: give one")
    if (args.dataset is None) != (args.join_attr is None):
        raise InputError("--dataset and --join-attr go together")
    conv_idle = duration(args.conversation_idle, "--conversation-idle")
    conv_wait = duration(args.conversation_max_wait, "--conversation-max-wait")
    if conv_wait < conv_idle:
        raise InputError(
            f"--conversation-max-wait ({args.conversation_max_wait}) must be at least"
            f" --conversation-idle ({args.conversation_idle})"
        )
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError("is not a directory", file=out)
    if (out / "run.json").exists():
        raise InputError(
            "is a run directory; --out is the monitor's directory of windows", file=out
        )
    if args.replica is not None and not _REPLICA.fullmatch(args.replica):
        raise InputError(
            f"--replica must be 1-64 letters, digits, '.', '_' or '-' (not first), got"
            f" {args.replica!r}"
        )
    baseline = Path(args.baseline) if args.baseline else None
    if baseline is not None:
        read_header(baseline)  # not a run: exit 2 now, not at the first window's end
    dataset = None
    if args.dataset:
        from agenteval.dataset import load_case_index  # only with --dataset

        dataset = load_case_index(args.dataset)
    mapping = MapOptions(
        case_id_attr=args.case_id_attr,
        where=tuple(_where(args.where)),
        dataset=dataset,
        join_attr=args.join_attr,
        group=args.group,
    )
    settings = {
        "window_s": int(window),
        "idle_s": idle,
        "max_wait_s": max_wait,
        "case_id_attr": args.case_id_attr,
        "where": list(args.where),
        "join_attr": args.join_attr,
        "group": args.group,
        "baseline_week_earlier": args.baseline_week_earlier,
    }
    if args.group == "conversation":
        settings.update(conversation_idle_s=conv_idle, conversation_max_wait_s=conv_wait)
    return MonitorConfig(
        out=out,
        window_s=int(window),
        idle_s=idle,
        max_wait_s=max_wait,
        max_pending_spans=args.max_pending_spans,
        max_wal_bytes=size(args.max_wal_bytes, "--max-wal-bytes"),
        mapping=mapping,
        baseline=baseline,
        week_earlier=args.baseline_week_earlier,
        alpha_per_day=args.alpha_per_day,
        conversation_idle_s=conv_idle,
        conversation_max_wait_s=conv_wait,
        settings=settings,
        replica=args.replica,
    )


def _judge(args: argparse.Namespace) -> Any:
    """The judge stage the options ask for (None without --rubric); refused before
    anything starts: a budget needs the judge model's price."""
    if not args.rubric:
        for flag, given in (
            ("--judge-endpoint", args.judge_endpoint),
            ("--judge-max-usd-per-hour", args.judge_max_usd_per_hour is not None),
            ("--judge-sample", args.judge_sample != 1.0),
        ):
            if given:
                raise InputError(f"{flag} without --rubric: no judge would run; add --rubric NAME")
        return None
    if not 0.0 < args.judge_sample <= 1.0:
        raise InputError(f"--judge-sample must be within (0, 1], got {args.judge_sample}")
    budget = args.judge_max_usd_per_hour
    if budget is not None and not budget > 0:
        raise InputError(f"--judge-max-usd-per-hour must be positive, got {budget}")
    # imported when this command runs: the other commands start without it
    from agenteval.judge import Judge
    from agenteval.llm.pricing import PriceTable, load_prices
    from agenteval.monitor.judging import JudgeStage

    prices = load_prices(args.prices) if args.prices else PriceTable.default()
    config = judge_config_from_args(args)
    assert config is not None
    if budget is not None and prices.lookup(config.model) is None:
        raise InputError(
            f"--judge-max-usd-per-hour needs the judge model's price: '{config.model}' is"
            " not in the price table; give --prices FILE"
        )
    return JudgeStage(
        Judge(config), sample=args.judge_sample, max_usd_per_hour=budget, prices=prices
    )


def run(args: argparse.Namespace) -> int:
    # imported when this command runs: the other commands start without it
    from agenteval.monitor import Monitor
    from agenteval.monitor.serve import serve

    host, port = parse_listen(args.listen)
    config = _config(args)
    judge = _judge(args)
    scorers = build_scorers(args)
    try:
        config.out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise cannot_write(e, config.out, "the monitor's directory") from None
    monitor = Monitor(config, scorers, said, judge=judge)

    def ready(endpoint: str) -> None:
        print(f"listening on {endpoint}", flush=True)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve(
            monitor,
            host,
            port,
            stop,
            allow_hosts=tuple(args.allow_host),
            webhook=args.alert_webhook,
            export_otlp=args.export_otlp,
            export_phoenix=args.export_phoenix,
            ready=ready,
            say=said,
        )

    try:
        asyncio.run(main())
    except OSError as e:
        raise cannot_write(e, config.out, "the monitor's files") from None
    print("agenteval monitor: stopped", file=sys.stderr)
    return EXIT_OK
