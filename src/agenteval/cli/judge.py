"""``agenteval judge`` and ``agenteval judge-agreement``: the LLM judge from the command line.

``agenteval judge RUN_DIR --rubric NAME ... --out NEW_RUN_DIR`` adds LLM-judge scores to an
existing run without calling the agent. The new run keeps every score of the old one and
adds ``judge_<rubric>`` per rubric (a score of that name already in the run is replaced).
Its header has ``kind: judge`` and ``source_run``; the cases snapshot is copied.

--tag, --where, --cases/--cases-file and --sample judge only the selected cases' trials
(docs/selection.md); the new run holds only those and records the selection.

``agenteval judge-agreement LABELS.jsonl --rubric NAME`` judges human-labelled items and
reports accuracy, Cohen's kappa, the confusion matrix and every disagreement.

A rubric is a built-in name (correctness, groundedness, answer_relevance,
context_relevance, faithfulness) or the path of a template file; append ``:binary``,
``:partial`` or ``:likert`` to choose its scale (``--rubric tone.txt:likert``).

``agenteval judge --processes N`` (or ``--executor ray [--ray-address ADDR]``) asks the
judge from worker processes, each with ``--judge-concurrency`` requests in flight, and
writes the same ``trials.jsonl``, line for line (when trials share one prompt, which of
them is the paid call and which the cache hit may differ). A judge that fails or is interrupted
removes its new run; exit code 6 when every worker was lost. Exit code 4 when no judge
score got a verdict (every one inconclusive, an error or not applicable: e.g. the judge
endpoint answered nonsense); the message gives the count of each, and the run is kept.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.cli._common import console_for, finish_run, plain
from agenteval.cli._executor_args import executor_from_args
from agenteval.cli._selection_args import (
    add_selection_args,
    select_run_cases,
    selection_from_args,
)
from agenteval.cli.cache_args import add_cache_args
from agenteval.cli.judge_args import add_judge_args, judge_config_from_args
from agenteval.cli.rescore import _remove_new_run
from agenteval.errors import EXIT_NO_ANSWERS, InputError, writing_run

if TYPE_CHECKING:  # the parsers are built without the judge and the models (start-up)
    import asyncio

    from agenteval.cases.case import Case
    from agenteval.judge import Judge
    from agenteval.rundir import RunWriter, TrialRecord
    from agenteval.scoring.score import Score


def register(sub: Any) -> None:
    """Add the ``judge`` and ``judge-agreement`` subcommands."""
    p: argparse.ArgumentParser = sub.add_parser(
        "judge",
        help="add LLM-judge scores to an existing run (the agent is not called)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run to judge (left untouched)")
    p.add_argument("--out", required=True, metavar="NEW_RUN_DIR", help="run directory to create")
    p.add_argument("--quiet", action="store_true", help="no summary on stdout")
    add_judge_args(p, required=True)
    add_selection_args(p)
    # imported when this command runs: the other commands start without it
    from agenteval.cli._executor_args import add_executor_args

    add_executor_args(p)
    p.set_defaults(func=run_judge)
    add_cache_args(p)

    a: argparse.ArgumentParser = sub.add_parser(
        "judge-agreement",
        help="measure an LLM judge against human labels (accuracy, Cohen's kappa)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    a.add_argument(
        "labels",
        metavar="LABELS.jsonl",
        help='lines of {case fields..., "output", "tool_calls", "label"}',
    )
    a.add_argument("--json", action="store_true", help="print the report as JSON")
    add_judge_args(a, required=True)
    a.set_defaults(func=run_agreement)
    add_cache_args(a)


def _stats_line(judge: Judge) -> str:
    s = judge.stats
    return (
        f"judge: {s.calls} calls, {s.cache_hits} cache hits, {s.errors} errors,"
        f" {s.inconclusive} inconclusive, {s.not_applicable} not applicable,"
        f" {s.input_tokens:,} input / {s.output_tokens:,} output tokens"
    )


async def _judge_records(
    judge: Judge,
    records: Iterable[TrialRecord],
    cases: dict[str, Case],
    writer: RunWriter,
    window: int,
) -> None:
    """Judge trials with up to ``window`` in flight, writing them in their original order."""
    import asyncio  # (start-up: on first use, like the judge)

    from agenteval.cli.judge_parallel import judged_scores  # (start-up: on first use)

    pending: deque[tuple[TrialRecord, asyncio.Task[dict[str, Score]]]] = deque()

    async def drain(keep: int) -> None:
        while len(pending) > keep:
            rec, task = pending.popleft()
            writer.append(rec, judged_scores(rec, await task))

    try:
        for rec in records:
            task = asyncio.ensure_future(judge.score(cases[rec.case_id], rec))
            pending.append((rec, task))
            await drain(window)
        await drain(0)
    finally:
        for _, task in pending:
            task.cancel()


def run_judge(args: argparse.Namespace) -> int:
    """``agenteval judge``: see the module docstring."""
    import asyncio  # (start-up: on first use, like the judge)

    # imported when the command runs: --help starts without the judge (aiohttp) and the models
    from agenteval._util.outpaths import check_out_dir
    from agenteval.judge import Judge
    from agenteval.rundir import TRIALS, RunHeader, RunWriter, cases_path, iter_trials, read_header
    from agenteval.rundir.cases import load_run_cases
    from agenteval.rundir.lock import refuse_if_being_written

    src = Path(args.run_dir)
    out = Path(args.out)
    check_out_dir(args.out, [("source run", args.run_dir)])  # judge never modifies its source
    refuse_if_being_written(src, "agenteval judge")  # a copy of it would look whole
    old = read_header(src)
    cases = load_run_cases(src)
    config = judge_config_from_args(args)
    assert config is not None  # --rubric is required
    for rec in iter_trials(src):  # validate before writing anything
        if rec.case_id not in cases:
            raise InputError(f"trial for unknown case '{rec.case_id}'", file=src / "trials.jsonl")
    sel = selection_from_args(args)
    settings, snapshot = old.settings, cases_path(src).read_bytes()
    if sel is not None:  # only the selected cases' trials (docs/selection.md)
        # imported when this command runs: the other commands start without it
        from agenteval.dataset import canonical_case_json

        chosen, settings = select_run_cases(
            sel, cases, old, parallel=executor_from_args(args) is not None
        )
        cases = {c.id: c for c in chosen}
        snapshot = "".join(canonical_case_json(c) + "\n" for c in chosen).encode("utf-8")
    judge = Judge(config)
    scorers = [s for s in old.scorers if s.name not in judge.names] + judge.specs
    header = RunHeader(
        kind="judge",
        agent=old.agent,
        dataset=old.dataset,
        scorers=scorers,
        prices=old.prices,
        settings={**settings, "judge": judge.describe()},
        source_run=str(src),
    )
    console = console_for(args)
    executor = executor_from_args(args)
    if executor is not None:
        # imported when this command runs: the other commands start without it
        from agenteval.cli.judge_parallel import judge_job_spec, judge_parallel

        spec = judge_job_spec(src, config)  # refused before anything is written

    async def go(writer: RunWriter) -> None:
        async with judge:
            records = (r for r in iter_trials(src) if r.case_id in cases)
            await _judge_records(judge, records, cases, writer, config.concurrency * 2)

    created = not out.exists()
    with writing_run(out / TRIALS, "the new run was removed: judge again"):
        try:
            with RunWriter.create(out, header, command="agenteval judge") as writer:
                (out / "cases.jsonl").write_bytes(snapshot)
                if executor is None:
                    asyncio.run(go(writer))
                else:
                    judge_parallel(src, writer, judge, executor, spec)
                try:
                    finish_run(writer, console, show=not args.quiet)
                except ImportError:  # the report package is optional at this layer
                    writer.finish(None)
                    if not args.quiet:
                        console.print(f"run written to {out}", markup=False)
        except BaseException:  # a judge run cannot be resumed: leave no half-written run
            _remove_new_run(out, created)
            raise
    if not args.quiet:
        console.print(_stats_line(judge), markup=False)
    return _verdicts_reached(out, judge.names)


def _verdicts_reached(out: Path, names: Iterable[str]) -> int:
    """0 when some judge score of the new run got a verdict (passed or failed); else say
    how many did not, and why, and return EXIT_NO_ANSWERS (4): CI must not read a judge
    that answered nonsense every time as success. The new run is kept (rescore or judge
    it again)."""
    from agenteval.rundir import iter_trials  # (start-up: on first use)

    wanted = set(names)
    counts: dict[str, int] = {}
    for rec in iter_trials(out):
        for name, sc in rec.scores.items():
            if name in wanted:
                counts[sc.status] = counts.get(sc.status, 0) + 1
    if counts.get("passed", 0) + counts.get("failed", 0):
        return 0
    total = sum(counts.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no judge score"
    print(
        f"agenteval: judge: no verdict on any of {total} judge score(s) ({detail});"
        f" the run is in {out} (exit {EXIT_NO_ANSWERS})",
        file=sys.stderr,
    )
    return EXIT_NO_ANSWERS


def run_agreement(args: argparse.Namespace) -> int:
    """``agenteval judge-agreement``: see the module docstring."""
    import asyncio  # (start-up: on first use, like the judge)

    # imported when the command runs: --help starts without the judge (aiohttp)
    from agenteval.judge import Judge, measure_agreement, read_labels, render_agreement

    config = judge_config_from_args(args)
    assert config is not None  # --rubric is required
    if len(config.rubrics) != 1:
        raise InputError("give exactly one rubric to measure agreement on", field="--rubric")
    rubric = config.rubrics[0]
    items = read_labels(args.labels, rubric)
    judge = Judge(config)

    async def go() -> Any:
        async with judge:
            return await measure_agreement(judge, rubric, items)

    report = asyncio.run(go())
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(plain(render_agreement(report)), end="")
        print(_stats_line(judge))
    return 0
