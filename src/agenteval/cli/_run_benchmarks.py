"""``agenteval run --benchmark NAME[,NAME...]``: run built-in or user suites.

Each benchmark runs as its own :class:`~agenteval.run.session.Session` into
``<out>/<benchmark name>/``, with its dataset (or ``--dataset FILE``), its prompt template
(unless ``--prompt-template`` is given), its scorers (plus any ``--scorer``) and its judge
rubric (unless ``--rubric`` is given). A suite graded by a judge needs ``--judge-endpoint``
and ``--judge-model``.
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from agenteval.agents.base import Agent
from agenteval.benchmarks import Benchmark, Registry, benchmark_scorers, registry_with
from agenteval.errors import InputError
from agenteval.scorers.config import load_scorer
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import ScorerFn

RunSession = Callable[..., int]
"""``run_session(ns, dataset=, agent=, scorers=, out=, extra_settings=)``: one suite's run,
its exit code (:func:`agenteval.cli.run.run_session`)."""


def registry_from_args(args: argparse.Namespace) -> Registry:
    """The default registry, plus the benchmarks of every ``--benchmark-file``."""
    return registry_with(list(getattr(args, "benchmark_file", None) or []))


def run_benchmarks(
    args: argparse.Namespace,
    build_agent: Callable[[argparse.Namespace], Agent],
    console: Console,
    *,
    run_session: RunSession,
) -> int:
    """Run every benchmark named by ``args.benchmark``; the exit code (0, or 130 interrupted).

    ``build_agent(args)`` makes the agent (it reads ``args.prompt_template`` as a file
    path). The suite decides its scorers; ``--scorer`` ones are added. Every name, the
    dataset override and the judge options are checked before any agent is called.
    """
    reg = registry_from_args(args)
    names = [n.strip() for n in str(args.benchmark).split(",") if n.strip()]
    if not names:
        raise InputError("--benchmark needs at least one name")
    benches = [reg.get(n) for n in names]
    override = getattr(args, "benchmark_dataset", None) or getattr(args, "dataset", None)
    if override and len(benches) > 1:
        raise InputError("--dataset replaces one suite's cases: give a single --benchmark")
    for b in benches:
        if b.needs_judge and not (args.judge_endpoint and args.judge_model):
            raise InputError(
                f"benchmark '{b.name}' is graded by an LLM judge: give --judge-endpoint URL"
                " and --judge-model NAME"
            )
    kinds = [k.strip() for k in args.pii_kinds.split(",")] if args.pii_kinds else None
    extra: list[ScorerFn] = [load_scorer(t) for t in args.scorer]
    base = Path(args.out or f"runs/bench-{datetime.now(UTC):%Y%m%d-%H%M%S}")
    with tempfile.TemporaryDirectory(prefix="agenteval-bench-") as tmp:
        for b in benches:
            ns = _namespace_for(args, b, Path(tmp))
            dataset = Path(override) if override else b.dataset
            code = _run_one(
                ns, b, dataset, base / b.name, build_agent, kinds, extra, console, run_session
            )
            if code != 0:
                return code
    return 0


def _namespace_for(args: argparse.Namespace, b: Benchmark, tmp: Path) -> argparse.Namespace:
    ns = copy.copy(args)
    if not args.prompt_template and b.prompt is not None:
        path = tmp / f"{b.name}.prompt.txt"
        path.write_text(b.prompt, encoding="utf-8")
        ns.prompt_template = str(path)
    ns.rubric = list(args.rubric) or ([b.rubric] if b.rubric else [])
    return ns


def _run_one(
    ns: argparse.Namespace,
    b: Benchmark,
    dataset: Path,
    out: Path,
    build_agent: Callable[[argparse.Namespace], Agent],
    kinds: list[str] | None,
    extra: list[ScorerFn],
    console: Console,
    run_session: RunSession,
) -> int:
    scorers = Scorers([*benchmark_scorers(b, kinds), *extra])  # field pii_kinds: FIELD_FLAGS
    agent = build_agent(ns)
    if not ns.quiet:
        console.print(f"benchmark {b.name}", markup=False, highlight=False)
    return run_session(
        ns,
        dataset=dataset,
        agent=agent,
        scorers=scorers,
        out=out,
        extra_settings={"benchmark": b.name},
    )
