"""``agenteval benchmarks`` (list the suites) and ``agenteval import-dataset`` (convert).

``agenteval benchmarks`` prints every registered suite with a one-line description, its
case count and whether it needs an LLM judge (``--json`` for a machine-readable list;
``--benchmark-file FILE.yaml`` adds your own declared suites).

``agenteval import-dataset FILE --from datarobot|bfcl --out CASES.jsonl`` converts a case
file written for another tool into agenteval's JSONL (see ``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from agenteval.cli._common import console_for


def register(sub: Any) -> None:
    """Add the ``benchmarks`` and ``import-dataset`` subcommands."""
    p: argparse.ArgumentParser = sub.add_parser(
        "benchmarks",
        help="list the built-in benchmark suites (and yours)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.add_argument(
        "--benchmark-file",
        action="append",
        default=[],
        metavar="FILE.yaml",
        help="also list the benchmarks declared in this file (repeatable)",
    )
    p.set_defaults(func=list_benchmarks)

    i: argparse.ArgumentParser = sub.add_parser(
        "import-dataset",
        help="convert a DataRobot- or BFCL-style case file to agenteval JSONL",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    i.add_argument("file", metavar="FILE", help="the file to convert (JSONL or JSON array)")
    i.add_argument("--from", dest="source", required=True, choices=("datarobot", "bfcl"))
    i.add_argument("--out", required=True, metavar="CASES.jsonl", help="file to write")
    i.add_argument("--answers", metavar="FILE", help="bfcl: the ground-truth file, when not inline")
    kind = i.add_mutually_exclusive_group()
    kind.add_argument(
        "--injection",
        dest="injection",
        action="store_true",
        default=None,
        help="datarobot: an injection suite (canary -> must_not_contain)",
    )
    kind.add_argument(
        "--no-injection",
        dest="injection",
        action="store_false",
        help="datarobot: not an injection suite (canary stays canary)",
    )
    i.set_defaults(func=import_dataset)


def list_benchmarks(args: argparse.Namespace) -> int:
    """Print the registered suites; exit code 0."""
    # imported when this command runs: the other commands start without it
    from agenteval.cli._run_benchmarks import registry_from_args

    rows = [
        {
            "name": b.name,
            "description": b.description,
            "cases": b.case_count(),
            "judge": b.needs_judge,
            "scorers": b.scorer_names,
            "rubric": b.rubric,
            "source": b.source,
        }
        for b in registry_from_args(args)
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.table import Table

    table = Table(title="benchmarks", title_justify="left")
    for col in ("name", "cases", "judge", "description"):
        table.add_column(col, justify="right" if col == "cases" else "left")
    for r in rows:
        table.add_row(
            str(r["name"]), str(r["cases"]), "yes" if r["judge"] else "no", str(r["description"])
        )
    console_for(args).print(table)
    return 0


def import_dataset(args: argparse.Namespace) -> int:
    """Convert ``args.file`` and write ``args.out``; exit code 0."""
    # imported when this command runs: the other commands start without it
    from agenteval._util.outpaths import check_out_files
    from agenteval.benchmarks.importers import import_bfcl, import_datarobot, write_jsonl
    from agenteval.errors import InputError

    inputs = [("input file", args.file), ("answers file", args.answers)]
    check_out_files([("--out", args.out)], inputs)  # never over what it converts
    if args.source == "bfcl":
        if args.injection is not None:
            raise InputError("--injection/--no-injection apply to --from datarobot only")
        n = write_jsonl(import_bfcl(args.file, args.answers), args.out)
    else:
        if args.answers:
            raise InputError("--answers applies to --from bfcl only")
        n = write_jsonl(import_datarobot(args.file, injection=args.injection), args.out)
    print(f"agenteval: wrote {n} case(s) to {args.out}")
    return 0
