"""``agenteval run DATASET --out RUN_DIR``: call the agent on every case and score it.

The agent is one of: ``--agent package.module:function`` (a Python callable),
``--endpoint URL --model NAME`` (an OpenAI-compatible chat endpoint, black box), or
``--http-config FILE`` (any HTTP/JSON endpoint). The dataset is validated completely before
the agent is called once. Trials are appended to RUN_DIR/trials.jsonl as they finish, so
``--resume`` continues a run that was interrupted or killed.

Ctrl-C once: no new trials start, those in flight finish. Twice: those in flight are
recorded as cancelled (a later --resume runs them again). Either way the summary is
written and the exit code is 130.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agenteval.agents.base import Agent
from agenteval.case import Case
from agenteval.cli._common import add_scorer_args, build_scorers, console_for, finish_run
from agenteval.dataset import iter_cases, scan_dataset
from agenteval.errors import EXIT_INTERRUPTED, InputError
from agenteval.rundir import RunHeader, RunWriter, read_header, write_cases
from agenteval.runner import RunProgress, RunSettings, _Control, run_trials, work_items
from agenteval.trial import Trial


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="run an agent over a dataset, record every trial, score it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dataset", metavar="DATASET", help="cases: JSONL, JSON, YAML or CSV")
    p.add_argument("--out", metavar="RUN_DIR", help="run directory (default runs/<time>)")
    a = p.add_argument_group("agent under test (choose one)")
    a.add_argument("--agent", metavar="MODULE:FN", help="a Python callable taking the case")
    a.add_argument("--endpoint", metavar="BASE_URL", help="OpenAI-compatible base URL (.../v1)")
    a.add_argument("--model", help="model name for --endpoint")
    a.add_argument("--http-config", metavar="FILE", help="generic HTTP/JSON agent config")
    a.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY; optional)",
    )
    a.add_argument("--prompt-template", metavar="FILE", help="template with {input}, {context}...")
    a.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra request parameter for --endpoint, e.g. temperature=0 (repeatable)",
    )
    r = p.add_argument_group("running")
    r.add_argument("--concurrency", type=_positive_int, default=8, help="trials at once (8)")
    r.add_argument("--timeout", type=_positive_float, metavar="S", help="per-trial timeout")
    r.add_argument("--repeats", type=_positive_int, default=1, metavar="K", help="trials per case")
    r.add_argument("--limit", type=_positive_int, metavar="N", help="only the first N cases")
    r.add_argument("--max-retries", type=_nonneg_int, default=4, help="per request (4)")
    r.add_argument(
        "--retry-base",
        type=_positive_float,
        default=0.5,
        metavar="S",
        help="first back-off ceiling, doubled each retry, full jitter (0.5)",
    )
    r.add_argument(
        "--request-timeout",
        type=_positive_float,
        metavar="S",
        help="per-request timeout; a timed-out request is retried",
    )
    r.add_argument("--resume", action="store_true", help="continue the run in --out")
    r.add_argument("--prices", metavar="FILE", help="price table (YAML/JSON) per 1M tokens")
    r.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")
    add_scorer_args(p)
    p.set_defaults(func=run)


def _positive_int(s: str) -> int:
    v = int(s)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {s}")
    return v


def _nonneg_int(s: str) -> int:
    v = int(s)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {s}")
    return v


def _positive_float(s: str) -> float:
    v = float(s)
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {s}")
    return v


def _params(pairs: list[str]) -> dict[str, Any]:
    import json

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--param '{pair}' must look like key=value")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def build_agent(args: argparse.Namespace) -> Agent:
    """The adapter the arguments name; InputError when they name none or several."""
    chosen = [x for x in (args.agent, args.endpoint, args.http_config) if x]
    if len(chosen) != 1:
        raise InputError(
            "choose exactly one agent: --agent MODULE:FN, --endpoint URL, or --http-config FILE"
        )
    if args.agent:
        from agenteval.agents.python import PythonAgent

        return PythonAgent(args.agent)
    policy = retry_policy(args)
    if args.http_config:
        from agenteval.agents.http_json import HttpJsonAgent

        return HttpJsonAgent(args.http_config, policy=policy, limit=args.concurrency)
    if not args.model:
        raise InputError("--endpoint needs --model NAME")
    from agenteval.agents.openai_chat import OpenAIChatAgent

    template = None
    if args.prompt_template:
        try:
            template = Path(args.prompt_template).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot be read ({e})", file=args.prompt_template) from None
    return OpenAIChatAgent(
        args.endpoint,
        args.model,
        api_key=os.environ.get(args.api_key_env) or None,
        prompt_template=template,
        policy=policy,
        limit=args.concurrency,
        params=_params(args.param),
    )


def retry_policy(args: argparse.Namespace) -> Any:
    from agenteval.http import RetryPolicy

    return RetryPolicy(
        max_retries=args.max_retries,
        base_s=args.retry_base,
        request_timeout_s=args.request_timeout,
    )


def run(args: argparse.Namespace) -> int:
    out = Path(args.out or f"runs/run-{datetime.now(UTC):%Y%m%d-%H%M%S}")
    ref = scan_dataset(args.dataset)
    total_cases = min(ref.cases, args.limit) if args.limit else ref.cases
    scorers = build_scorers(args)
    agent = build_agent(args)
    prices = None
    if args.prices:
        from agenteval.pricing import load_prices

        prices = load_prices(args.prices).to_dict()
    settings = RunSettings(
        concurrency=args.concurrency, timeout_s=args.timeout, repeats=args.repeats
    )
    console = console_for(args)
    done: set[tuple[str, int]] = set()
    if args.resume:
        old = read_header(out)
        if old.dataset.sha256 != ref.sha256:
            raise InputError(
                "the dataset changed since this run started; start a new run", file=args.dataset
            )
        writer, done, notes = RunWriter.open_resume(out)
        for note in notes:
            print(f"agenteval: resume: {note}", file=sys.stderr)
        print(f"agenteval: resume: {len(done)} trial(s) already recorded", file=sys.stderr)
    else:
        header = RunHeader(
            kind="run",
            agent=agent.describe(),
            dataset=ref,
            scorers=scorers.names,
            prices=prices,
            settings={
                **settings.to_dict(),
                "limit": args.limit,
                "max_retries": args.max_retries,
                "retry_base_s": args.retry_base,
                "request_timeout_s": args.request_timeout,
            },
        )
        writer = RunWriter.create(out, header)
        write_cases(out, _limited(iter_cases(args.dataset), args.limit))
    remaining = total_cases * args.repeats - len(done)
    items = work_items(_limited(iter_cases(args.dataset), args.limit), args.repeats, done)
    show_progress = not args.quiet and sys.stderr.isatty() and not os.environ.get("CI")
    with writer:
        interrupted = _run_loop(agent, items, settings, scorers, writer, remaining, show_progress)
        finish_run(writer, console)
    return EXIT_INTERRUPTED if interrupted else 0


def _limited(cases: Iterator[Case], limit: int | None) -> Iterator[Case]:
    return islice(cases, limit) if limit else cases


def _run_loop(
    agent: Agent,
    items: Iterator[tuple[Case, int]],
    settings: RunSettings,
    scorers: Any,
    writer: RunWriter,
    total: int,
    show_progress: bool,
) -> bool:
    """Run the trials on one event loop; return True when interrupted by Ctrl-C."""
    ctl = _Control()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        ctl.stop = True
        if interrupts == 1:
            print(
                "\nagenteval: interrupted: finishing trials in flight (Ctrl-C again to"
                " cancel them)",
                file=sys.stderr,
            )
        else:
            for t in list(ctl.in_flight):
                t.cancel()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on POSIX
            loop.add_signal_handler(signal.SIGINT, on_sigint)
        await agent.start()
        try:
            with _progress(total, show_progress) as prog:
                await run_trials(
                    agent,
                    items,
                    settings=settings,
                    scorers=scorers,
                    writer=writer,
                    progress=prog,
                    control=ctl,
                )
        finally:
            await agent.close()

    _event_loop_run(main())
    return interrupts > 0


def _event_loop_run(coro: Any) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(coro)


class _progress:
    """A rich progress bar on a terminal, else a plain line every 10% or 10 seconds."""

    def __init__(self, total: int, live: bool) -> None:
        self.total = total
        self.live = live
        self.state = RunProgress(on_trial=self._tick)
        self._bar: Progress | None = None
        self._task: Any = None
        self._t0 = time.monotonic()
        self._next_line = time.monotonic() + 10
        self._step = max(1, total // 10)

    def __enter__(self) -> RunProgress:
        if self.live:
            self._bar = Progress(
                TextColumn("[bold]trials"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failed]} failed"),
                TextColumn("{task.fields[rate]}/s"),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("run", total=self.total, failed=0, rate="0.0")
        return self.state

    def _tick(self, p: RunProgress, trial: Trial) -> None:
        if self._bar is not None:
            rate = p.done / max(1e-9, time.monotonic() - self._t0)
            self._bar.update(self._task, completed=p.done, failed=p.failed, rate=f"{rate:.1f}")
            return
        now = time.monotonic()
        if p.done % self._step == 0 or p.done == self.total or now >= self._next_line:
            self._next_line = now + 10
            rate = p.done / max(1e-9, now - self._t0)
            print(
                f"agenteval: {p.done}/{self.total} trials, {p.failed} failed, {rate:.1f}/s",
                file=sys.stderr,
                flush=True,
            )

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
