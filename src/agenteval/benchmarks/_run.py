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
from typing import Any

from rich.console import Console

from agenteval.benchmarks.builtin import default_registry
from agenteval.benchmarks.declarative import load_benchmark_file
from agenteval.benchmarks.registry import Benchmark, Registry
from agenteval.errors import InputError
from agenteval.scorers import BUILTIN_SCORER_NAMES, builtin_scorers, make_pii_leakage
from agenteval.scorers.config import load_scorer
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import ScorerFn


def registry_from_args(args: argparse.Namespace) -> Registry:
    """The default registry, plus the benchmarks of every ``--benchmark-file``."""
    files = list(getattr(args, "benchmark_file", None) or [])
    if not files:
        return default_registry()
    reg = default_registry().copy()
    for f in files:
        load_benchmark_file(f, reg)
    return reg


def benchmark_scorers(bench: Benchmark, pii_kinds: list[str] | None = None) -> list[ScorerFn]:
    """The suite's scorers: its built-in ones (configured with its tools), then its own."""
    unknown = set(bench.builtin_scorers) - set(BUILTIN_SCORER_NAMES)
    if unknown:
        raise InputError(f"benchmark '{bench.name}' names unknown scorer(s) {sorted(unknown)}")
    try:
        if pii_kinds is not None:
            make_pii_leakage(pii_kinds)  # checked even when the suite does not run it
        fns: list[ScorerFn] = list(
            builtin_scorers(
                suite_tools=list(bench.tools) or None,
                pii_kinds=pii_kinds,
                names=bench.builtin_scorers,
            )
        )
    except ValueError as e:
        raise InputError(str(e), field="--pii-kinds") from None
    return fns + list(bench.scorers)


def run_benchmarks(
    args: argparse.Namespace,
    build_agent: Callable[[argparse.Namespace], Any],
    build_scorers: Callable[..., Scorers],
    console: Console,
    *,
    run_session: Callable[..., int],
) -> int:
    """Run every benchmark named by ``args.benchmark``; the exit code (0, or 130 interrupted).

    ``build_agent(args)`` makes the agent (it reads ``args.prompt_template`` as a file
    path). ``build_scorers`` is accepted for symmetry with ``run`` but the suite decides
    its scorers; ``--scorer`` ones are added. ``run_session(ns, dataset=, agent=, scorers=,
    out=, extra_settings=)`` runs one suite and returns its exit code (the command line's
    ``run`` passes its own, so this package never imports the command line). Every name,
    the dataset override and the judge options are checked before any agent is called.
    """
    del build_scorers  # the suite chooses its scorers; --scorer ones are added below
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
    build_agent: Callable[[argparse.Namespace], Any],
    kinds: list[str] | None,
    extra: list[ScorerFn],
    console: Console,
    run_session: Callable[..., int],
) -> int:
    scorers = Scorers([*benchmark_scorers(b, kinds), *extra])
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
