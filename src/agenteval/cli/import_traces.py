"""``agenteval import-traces FILE... --out RUN_DIR``: recorded traces → a scored run.

Reads OpenTelemetry traces — OTLP/JSON lines (one ExportTraceServiceRequest per line, as
the Collector's file exporter writes), one OTLP/JSON document, or an OTLP/protobuf request
file; ids in hex or base64 — from OTel GenAI or OpenInference instrumentation (PydanticAI,
LangGraph, ...). Each agent invocation (a root ``invoke_agent`` / AGENT span, else the
whole trace) becomes one trial, or each conversation with ``--group conversation``; the
case is the recorded prompt. The result is an ordinary run directory: ``rescore``,
``judge``, ``report`` and ``gate`` work on it. See docs/traces.md.

Every file is read and checked before RUN_DIR is created: a file that cannot be used
stops the command with exit code 2 and one line naming the file (and line and field);
spans that cannot be placed (parent ids in a cycle, no ids, a second copy of a span) are
skipped and counted. Exit 2 also when nothing is left to import.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.cli._common import (
    add_scorer_args,
    build_scorers,
    console_for,
    finish_run,
    plain,
    say,
)
from agenteval.errors import InputError, writing_run

if TYPE_CHECKING:  # the parser is built without the run modules (start-up)
    from agenteval.rundir import RunWriter
    from agenteval.traces.importer import ImportResult


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "import-traces",
        help="turn recorded OpenTelemetry traces (OTLP files) into a run to score and gate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="OTLP/JSON(L) or OTLP/protobuf file")
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory to create")
    p.add_argument(
        "--group",
        choices=("invocation", "conversation"),
        default="invocation",
        help="one trial per agent invocation (default), or per conversation"
        " (gen_ai.conversation.id, session.id)",
    )
    p.add_argument(
        "--case-id-attr",
        metavar="ATTR",
        help="case id from this span attribute (default: a hash of the trace and span ids)",
    )
    p.add_argument(
        "--dataset",
        metavar="FILE",
        help="join traces to this dataset's cases (expected answers...) with --join-attr",
    )
    p.add_argument(
        "--join-attr",
        metavar="ATTR",
        help="span attribute holding the dataset case id (with --dataset)",
    )
    p.add_argument(
        "--sample",
        type=float,
        metavar="RATE",
        help="keep this fraction of traces (0 < RATE <= 1), chosen by trace id hash",
    )
    p.add_argument("--seed", type=int, default=0, metavar="N", help="seed of --sample (default 0)")
    p.add_argument("--since", metavar="TIME", help="only invocations started at or after (ISO)")
    p.add_argument("--until", metavar="TIME", help="only invocations started before (ISO)")
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="ATTR=VALUE",
        help="only invocations whose root span (or resource) has ATTR=VALUE (repeatable)",
    )
    p.add_argument("--quiet", action="store_true", help="no summary on stdout")
    add_scorer_args(p)
    p.set_defaults(func=run)


def _iso(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(
            f"{option} '{value}' is not an ISO date or time (2026-11-23 or 2026-11-23T08:00Z)"
        ) from None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _where(pairs: list[str]) -> list[tuple[str, str]]:
    out = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InputError(f"--where '{pair}' must look like ATTR=VALUE")
        out.append((name, value))
    return out


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as e:
        raise InputError(f"cannot read ({e.strerror or e})", file=path) from None
    return h.hexdigest()


def run(args: argparse.Namespace) -> int:
    # imported when this command runs: the other commands start without it
    from agenteval.run.signals import exit_on_stop_signals

    with exit_on_stop_signals(say):  # the spool is removed on SIGTERM/SIGHUP too
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    # imported when this command runs: the other commands start without it
    from agenteval._util.gc import frozen_heap
    from agenteval._util.outpaths import check_out_dir
    from agenteval.dataset import canonical_case_json, load_case_index, scan_dataset
    from agenteval.rundir import TRIALS, DatasetRef, RunHeader, RunWriter, cases_path, write_header
    from agenteval.rundir.writer import case_line
    from agenteval.traces.importer import ImportOptions, ImportResult, iter_import

    out = Path(args.out)
    inputs = [("trace file", f) for f in args.files] + [("dataset", args.dataset)]
    check_out_dir(args.out, inputs)
    if (args.dataset is None) != (args.join_attr is None):
        raise InputError("--dataset and --join-attr go together")
    if args.sample is not None and not 0.0 < args.sample <= 1.0:
        raise InputError(f"--sample must be within (0, 1], got {args.sample}")
    scorers = build_scorers(args)
    dataset = load_case_index(args.dataset) if args.dataset else None
    opts = ImportOptions(
        group=args.group,
        case_id_attr=args.case_id_attr,
        dataset=dataset,
        join_attr=args.join_attr,
        sample=args.sample,
        seed=args.seed,
        since=_iso(args.since, "--since"),
        until=_iso(args.until, "--until"),
        where=_where(args.where),
    )
    files = [{"path": str(f), "sha256": _sha256(f)} for f in args.files]
    res = ImportResult()
    # every file is read into the spool before the first trial comes out of the stream,
    # so an unusable file (exit 2) stops the command before RUN_DIR is created
    with contextlib.closing(iter_import(args.files, opts, res)) as stream:
        first = next(stream, None)
        if res.spans == 0:
            raise InputError("hold no spans", file=", ".join(args.files))
        if first is None:
            filtered = _flagged(res.filtered).items()
            dropped = ", ".join(f"{n} {why}" for why, n in filtered) or "none found"
            raise InputError(f"no agent invocation left to import ({res.units} found; {dropped})")
        joined = scan_dataset(args.dataset).model_dump() if args.dataset else None
        header = RunHeader(
            kind="score",
            agent={"type": "imported-traces", "files": files},
            dataset=DatasetRef(path=None),  # completed once every case is known
            scorers=scorers.specs,
            settings=_settings(args, res),
        )
        with (
            writing_run(out / TRIALS, "what was written is kept"),
            RunWriter.create(out, header, command="agenteval import-traces") as writer,
        ):
            digest = hashlib.sha256()
            try:
                with open(cases_path(out), "w", encoding="utf-8") as cases, frozen_heap():
                    for case, new, trial in itertools.chain([first], stream):
                        if new:  # cases.jsonl in first-use order, each before its first trial
                            cases.write(case_line(case))
                            cases.flush()
                            digest.update((canonical_case_json(case) + "\n").encode())
                        writer.append(trial, scorers.apply(case, trial))
            except (InputError, ValueError) as e:  # a unit no decoder check caught
                _remove_run(writer)
                if isinstance(e, InputError):
                    raise
                raise InputError(f"a trace cannot be imported ({e}); nothing was written") from None
            # the cases written are those used; the joined file is named beside
            ref = DatasetRef(path=None, sha256=digest.hexdigest(), cases=res.case_count)
            if joined is not None:
                ref = DatasetRef(path=None, sha256=ref.sha256, cases=ref.cases, joined=joined)
            header.dataset = ref
            header.settings = _settings(args, res)
            write_header(out, header)
            _say(args, res)
            finish_run(writer, console_for(args), show=not args.quiet)
    return 0


def _remove_run(writer: RunWriter) -> None:
    """An import is all or nothing: remove the run begun (the directory if the writer
    made it, else the run's files) so that no half-written RUN_DIR is left."""
    from agenteval.rundir import RUN_FILES  # (start-up: on first use)

    writer.close()
    if writer.created_dir:
        shutil.rmtree(writer.run_dir, ignore_errors=True)
        return
    for name in RUN_FILES:
        with contextlib.suppress(OSError):
            (writer.run_dir / name).unlink()


def _settings(args: argparse.Namespace, res: ImportResult) -> dict[str, Any]:
    return {
        "import": {
            "group": args.group,
            "case_id_attr": args.case_id_attr,
            "join_attr": args.join_attr,
            "sample": args.sample,
            "seed": args.seed if args.sample is not None else None,
            "since": args.since,
            "until": args.until,
            "where": list(args.where),
            "spans": res.spans,
            "skipped_spans": res.skipped_spans,
            "filtered": _flagged(res.filtered),
            "unmatched": res.unmatched_count,
        }
    }


_FILTER_FLAGS = {
    "before since": "before --since",
    "at or after until": "at or after --until",
    "where": "--where",
}
"""The importer's reasons for leaving a unit out that name an option, in the flag's words
(as printed and as run.json has always recorded them)."""


def _flagged(filtered: dict[str, int]) -> dict[str, int]:
    return {_FILTER_FLAGS.get(why, why): n for why, n in filtered.items()}


def _say(args: argparse.Namespace, res: ImportResult) -> None:
    """What was read and left out, on stderr (one line each)."""
    print(
        f"import-traces: {res.spans} spans, {res.units}"
        f" {'conversations' if args.group == 'conversation' else 'invocations'};"
        f" {res.trial_count} trials of {res.case_count} cases",
        file=sys.stderr,
    )
    if res.skipped_spans:
        why = ", ".join(f"{n} ({reason})" for reason, n in res.skipped_spans.items())
        print(f"import-traces: skipped spans: {why}", file=sys.stderr)
    if res.filtered:
        why = ", ".join(f"{n} {reason}" for reason, n in _flagged(res.filtered).items())
        print(f"import-traces: left out: {why}", file=sys.stderr)
    if res.unmatched_count:
        shown = ", ".join(plain(v) for v in res.unmatched[:5])
        more = ", ..." if res.unmatched_count > 5 else ""
        print(
            f"import-traces: {res.unmatched_count} not in the dataset by {args.join_attr}"
            f" ({shown}{more}); kept with their recorded input",
            file=sys.stderr,
        )
    if res.not_recorded:
        print(
            f"import-traces: {res.not_recorded} trials lack recorded content"
            " (metadata.not_recorded); scorers that need it are not applicable",
            file=sys.stderr,
        )
