"""``agenteval run DATASET --out RUN_DIR``: call the agent on every case and score it.

The agent is one of: ``--agent package.module:function`` (a Python callable),
``--endpoint URL --model NAME`` (an OpenAI-compatible chat endpoint, black box), or
``--http-config FILE`` (any HTTP/JSON endpoint). Several ``--model`` or ``--agent`` values,
or ``--matrix FILE``, run a matrix: one run per cell under ``--out DIR/<cell>``, then the
cells side by side and, with ``--baseline-cell NAME``, the gate of every other cell against
it (docs/selection.md). The dataset is validated completely before
the agent is called once. Trials are appended to RUN_DIR/trials.jsonl as they finish, so
``--resume`` continues a run that was interrupted or killed.

Ctrl-C once (or SIGTERM, SIGHUP): no new trials start, those in flight finish. Twice:
those in flight are recorded as cancelled (a later --resume runs them again) and judge
calls in flight give inconclusive scores. Either way the summary is written; the exit code
is 130 (Ctrl-C), 143 (SIGTERM) or 129 (SIGHUP).

Exit codes: 0 done; 2 unusable input; 4 no trial got an answer, or the share of failed
trials is above --max-failure-rate (the summary is written); 5 the run could not be
written (disk full, permission denied: what was written is kept, --resume continues);
6 every worker was lost (--processes, --executor ray: what was written is kept, --resume
continues); 130/143/129 interrupted. A matrix with a baseline cell exits with the gate's
code (1 a cell is blocked, else 3 a cell is underpowered, else 0); without one, with the first
non-zero code of its cells' runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.cli import _tool_loop_args as tool_loop_args
from agenteval.cli import cache_args
from agenteval.cli._agent_args import build_agent, receiver_settings
from agenteval.cli._benchmark_args import add_benchmark_args
from agenteval.cli._common import (
    add_scorer_args,
    build_scorers,
    console_for,
    flagged,
    render_summary,
    say,
)
from agenteval.cli._selection_args import add_selection_args, selection_from_args
from agenteval.cli.judge_args import add_judge_args, judge_config_from_args
from agenteval.cli.user_args import add_user_args, user_from_args
from agenteval.errors import EXIT_NO_ANSWERS, InputError

if TYPE_CHECKING:  # the parser is built without the run modules (start-up)
    from agenteval.agents.base import Agent
    from agenteval.scoring.apply import Scorers


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "run",
        help="run an agent over a dataset, record every trial, score it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dataset", metavar="DATASET", nargs="?", help="cases: JSONL, JSON, YAML or CSV")
    p.add_argument("--out", metavar="RUN_DIR", help="run directory (default runs/<time>)")
    a = p.add_argument_group("agent under test (choose one)")
    a.add_argument(
        "--agent",
        action="append",
        metavar="MODULE:FN",
        help="a Python callable taking the case, as package.module:fn or path/to/file.py:fn,"
        " or 'tool-loop' (the built-in tool-calling agent: --endpoint/--model plus"
        " --tools/--mcp); several: a matrix, one run per agent",
    )
    a.add_argument("--endpoint", metavar="BASE_URL", help="OpenAI-compatible base URL (.../v1)")
    a.add_argument(
        "--model",
        action="append",
        help="model name for --endpoint; several: a matrix, one run per model",
    )
    a.add_argument("--http-config", metavar="FILE", help="generic HTTP/JSON agent config")
    a.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY; optional)",
    )
    a.add_argument(
        "--capture",
        choices=("auto", "otel", "openai-agents", "off"),
        default="auto",
        help="--agent MODULE:FN: record the agent's OpenTelemetry or OpenAI Agents SDK"
        " spans (auto: whichever is installed and used; docs/agents/)",
    )
    a.add_argument(
        "--capture-proxy",
        metavar="UPSTREAM_BASE_URL",
        help="--agent MODULE:FN / --http-config: give each trial its own base URL of a"
        " recording proxy in front of this OpenAI-compatible API, and record the model"
        " calls and tool calls made through it (docs/agents/proxy.md)",
    )
    a.add_argument("--prompt-template", metavar="FILE", help="template with {input}, {context}...")
    a.add_argument(
        "--otlp-receiver",
        metavar="HOST:PORT",
        help="--http-config/--endpoint: receive the agent service's OpenTelemetry spans"
        " (OTLP/HTTP at /v1/traces) and record them on the trial whose traceparent they"
        " carry; 'auto': a free loopback port, printed and exported as"
        " AGENTEVAL_OTLP_ENDPOINT (docs/agents/http.md)",
    )
    a.add_argument(
        "--otlp-wait",
        type=_nonneg_float,
        default=2.0,
        metavar="S",
        help="after an answer, wait at most S seconds for its late spans (2; ends early"
        " once the trace's root span has arrived)",
    )
    tool_loop_args.add_arguments(a)
    a.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra request parameter for --endpoint, e.g. temperature=0 (repeatable)",
    )
    mx = p.add_argument_group("matrix (docs/selection.md)")
    mx.add_argument(
        "--matrix",
        metavar="FILE",
        help="YAML: agents/options x parameters (axes: every combination, or cells: a"
        " list); one run per cell under --out DIR/<cell>",
    )
    mx.add_argument(
        "--baseline-cell",
        metavar="NAME",
        help="gate every other cell of the matrix against this one (exit code: the gate's)",
    )
    r = p.add_argument_group("running")
    r.add_argument("--concurrency", type=_positive_int, default=8, help="trials at once (8)")
    r.add_argument("--timeout", type=_positive_float, metavar="S", help="per-trial timeout")
    r.add_argument("--repeats", type=_positive_int, default=1, metavar="K", help="trials per case")
    r.add_argument(
        "--limit",
        type=_positive_int,
        metavar="N",
        help="only the first N cases (of the selection, with the options below)",
    )
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
    r.add_argument(
        "--max-failure-rate",
        type=_rate,
        metavar="R",
        help="exit 4 when more than this share of trials failed, e.g. 0.05 (a run where no"
        " trial got an answer always exits 4)",
    )
    r.add_argument("--resume", action="store_true", help="continue the run in --out")
    r.add_argument("--prices", metavar="FILE", help="price table (YAML/JSON) per 1M tokens")
    r.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar, only the summary (a matrix: only its table)",
    )
    add_selection_args(p)
    add_scorer_args(p)
    add_judge_args(p)
    add_user_args(p)
    add_benchmark_args(p)
    # imported when this command runs: the other commands start without it
    from agenteval.cli._executor_args import add_executor_args

    add_executor_args(p)
    p.set_defaults(func=run)
    cache_args.add_cache_args(p)


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


def _rate(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number within [0, 1], got {s}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be within [0, 1], got {s}")
    return v


def _positive_float(s: str) -> float:
    v = float(s)
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {s}")
    return v


def _nonneg_float(s: str) -> float:
    v = float(s)
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {s}")
    return v


def run(args: argparse.Namespace) -> int:
    from agenteval.cli._matrix import matrix_from_args  # also makes --model/--agent single

    if args.judge_endpoint and not args.rubric and not args.benchmark:
        raise InputError(
            "--judge-endpoint without --rubric: no judge would run; add --rubric NAME"
            " (correctness, groundedness, ... or a template file)"
        )

    matrix = matrix_from_args(args)
    if matrix is not None:
        # imported when this command runs: the other commands start without it
        from agenteval.cli._matrix import run_matrix

        if not args.dataset:
            raise InputError("give a DATASET file")
        dataset = Path(args.dataset)

        def run_cell(ns: argparse.Namespace, agent: Agent, out: Path, extra: dict[str, Any]) -> int:
            scorers = build_scorers(ns)
            return run_session(ns, dataset=dataset, agent=agent, scorers=scorers, out=out,
                               extra_settings=extra, show=not ns.quiet)  # fmt: skip

        out = Path(args.out or f"runs/matrix-{datetime.now(UTC):%Y%m%d-%H%M%S}")
        return run_matrix(
            matrix, args, out, build_agent=build_agent, run_cell=run_cell,
            console=console_for(args),
        )  # fmt: skip
    if args.benchmark:
        from agenteval.cli._run_benchmarks import run_benchmarks  # suites load when asked for

        return run_benchmarks(args, build_agent, console_for(args), run_session=run_session)
    if not args.dataset:
        raise InputError("give a DATASET file")
    out = Path(args.out or f"runs/run-{datetime.now(UTC):%Y%m%d-%H%M%S}")
    scorers = build_scorers(args)
    return run_session(
        args, dataset=Path(args.dataset), agent=build_agent(args), scorers=scorers, out=out
    )


def run_session(
    args: argparse.Namespace,
    *,
    dataset: Path,
    agent: Agent,
    scorers: Scorers,
    out: Path,
    extra_settings: dict[str, Any] | None = None,
    show: bool = True,
) -> int:
    """Run one evaluation as the ``run`` options describe; return the exit code.

    Shared by ``run``, ``run --benchmark`` (one call per suite) and a matrix (one call per
    cell; ``show=False``: no summary, the matrix prints its table).
    """
    agent = cache_args.apply_cache(agent, args)
    # imported when this command runs: the other commands start without it
    from agenteval.cli._executor_args import executor_from_args
    from agenteval.llm.pricing import PriceTable, load_prices
    from agenteval.run.runner import RunSettings, failure_problem
    from agenteval.run.session import Session

    prices = (load_prices(args.prices) if args.prices else PriceTable.default()).to_dict()
    judge = None
    judge_config = judge_config_from_args(args)
    if judge_config is not None:
        # imported when this command runs: the other commands start without it
        from agenteval.judge import Judge

        judge = Judge(judge_config)
    session = Session(
        dataset=dataset,
        agent=agent,
        scorers=scorers,
        out=out,
        settings=RunSettings(
            concurrency=args.concurrency, timeout_s=args.timeout, repeats=args.repeats
        ),
        limit=args.limit,
        resume=args.resume,
        prices=prices,
        judge=judge,
        executor=executor_from_args(args),
        user=user_from_args(args),
        selection=selection_from_args(args),
        extra_settings={
            **(extra_settings or {}),
            "max_retries": args.max_retries,
            "retry_base_s": args.retry_base,
            "request_timeout_s": args.request_timeout,
            **receiver_settings(agent),
        },
        inputs=[
            (what, Path(v) if v else None)
            for what, v in (
                # imported when this command runs: the other commands start without it
                ("prompt template", args.prompt_template),
                ("price table", args.prices),
                ("HTTP config", args.http_config),
                ("tool definitions", getattr(args, "suite_tools", None)),
            )
        ],
    )
    from agenteval.cli._progress import Mode, progress_display

    mode: Mode
    if args.quiet:
        mode = "none"
    elif sys.stderr.isatty() and not os.environ.get("CI"):
        mode = "bar"
    else:
        mode = "lines"
    result = session.run(
        progress=progress_display(mode),
        say=say,
        console=console_for(args) if show else None,
        render=render_summary,
    )
    if session.selected is not None:
        # imported when this command runs: the other commands start without it
        from agenteval.dataset.selection import describe_selection

        print(f"agenteval: selection: {describe_selection(session.selected)}", file=sys.stderr)
    receiver = getattr(agent, "receiver", None)
    if receiver is not None:  # what the OTLP receiver attributed and dropped
        print(flagged(receiver.stats.line(getattr(agent, "wait_s", 0.0))), file=sys.stderr)
    if result.interrupted:
        return result.exit_code
    problem = failure_problem(
        result.summary or {}, args.max_failure_rate, name="--max-failure-rate"
    )
    if problem is not None:
        print(f"agenteval: error: {problem}", file=sys.stderr)
        return EXIT_NO_ANSWERS
    return result.exit_code
