"""The case-selection options of ``run``, ``rescore`` and ``judge`` (docs/selection.md).

``--tag``, ``--where``, ``--cases`` / ``--cases-file`` and ``--sample`` / ``--seed`` /
``--stratify`` become one :class:`~agenteval.dataset.selection.Selection`; the rules are in
:mod:`agenteval.dataset.selection`. The fields its errors name (``cases``, ``where``,
``sample``, ``stratify``) are mapped to these flags by ``agenteval.cli.FIELD_FLAGS``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.errors import InputError

if TYPE_CHECKING:  # the parsers are built without the models (start-up)
    from agenteval.cases.case import Case
    from agenteval.dataset.selection import Selection
    from agenteval.rundir import RunHeader

__all__ = ["add_selection_args", "select_run_cases", "selection_from_args"]


def _sample(text: str) -> int | float:
    if re.fullmatch(r"\d+", text.strip()):
        n = int(text)
        if n < 1:
            raise argparse.ArgumentTypeError(f"a count must be >= 1, got {text}")
        return n
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"give a count (10) or a rate between 0 and 1 (0.2), got {text!r}"
        ) from None
    if not 0.0 < rate < 1.0:
        raise argparse.ArgumentTypeError(f"a rate must be between 0 and 1, got {text}")
    return rate


def _where(text: str) -> tuple[str, str]:
    field, sep, value = text.partition("=")
    if not sep or not field.strip():
        raise argparse.ArgumentTypeError(
            f"expects FIELD=VALUE (e.g. metadata.tier=gold), got {text!r}"
        )
    return field.strip(), value


def add_selection_args(p: argparse.ArgumentParser) -> None:
    """Add the selection options (an argument group) to ``p``."""
    g = p.add_argument_group(
        "case selection (combined: a case must satisfy all of them; docs/selection.md)"
    )
    g.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only cases with this tag (repeatable: a case with any of them)",
    )
    g.add_argument(
        "--where",
        action="append",
        default=[],
        type=_where,
        metavar="FIELD=VALUE",
        help="only cases whose FIELD (a case field, or metadata.KEY) equals VALUE: text as"
        " is, numbers and booleans as JSON (3, true), a list when any element does"
        " (repeatable: all must hold)",
    )
    g.add_argument(
        "--cases",
        action="append",
        default=[],
        metavar="ID,...",
        help="only these case ids (comma-separated, repeatable); an id not in the dataset"
        " is an error",
    )
    g.add_argument(
        "--cases-file",
        metavar="FILE",
        help="only the case ids listed in FILE, one a line (blank lines and # comments"
        " skipped); with --cases, the ids of both",
    )
    g.add_argument(
        "--sample",
        type=_sample,
        metavar="N|RATE",
        help="a seeded random sample of the cases the other options kept: N cases, or a"
        " RATE in (0, 1) of them (rounded, at least 1)",
    )
    g.add_argument("--seed", type=int, default=0, metavar="S", help="the seed of --sample (0)")
    g.add_argument(
        "--stratify",
        choices=("tag",),
        help="--sample within each case's first tag: every tag keeps at least one case",
    )


def _read_ids(path: str) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=path) from None
    return [s for line in text.splitlines() if (s := line.strip()) and not s.startswith("#")]


def selection_from_args(args: argparse.Namespace) -> Selection | None:
    """The selection the options give; None when none was given."""
    ids: list[str] | None = None
    if args.cases or args.cases_file:
        ids = [i.strip() for item in args.cases for i in item.split(",") if i.strip()]
        if args.cases_file:
            ids += _read_ids(args.cases_file)
        if not ids:
            flag = "--cases-file" if args.cases_file else "--cases"
            raise InputError("no case id given", field=flag)
        ids = list(dict.fromkeys(ids))
    if args.stratify and args.sample is None:
        raise InputError("--stratify applies to --sample: give --sample N|RATE too")
    # imported when the command runs: --help starts without the models
    from agenteval.dataset.selection import Selection

    sel = Selection(
        tags=tuple(dict.fromkeys(args.tag)),
        where=tuple(args.where),
        ids=tuple(ids) if ids is not None else None,
        sample=args.sample,
        seed=args.seed,
        stratify=bool(args.stratify),
    )
    return None if sel.empty else sel


def select_run_cases(
    sel: Selection, cases: dict[str, Case], source: RunHeader, *, parallel: bool
) -> tuple[list[Case], dict[str, Any]]:
    """``rescore`` / ``judge`` over a selection of a run's cases: the chosen cases (in the
    snapshot's order) and the new run's ``settings`` (``selection`` recorded; a source
    run's own selection kept under ``selection.within``)."""
    if parallel:
        raise InputError(
            "a case selection (--tag, --where, --cases, --sample) is not supported with"
            " --processes / --executor yet; leave one of them out"
        )
    chosen = sel.apply(list(cases.values()))
    recorded = sel.record(len(chosen), len(cases))
    within = source.settings.get("selection")
    if within is not None:
        recorded["within"] = within
    return chosen, {**source.settings, "selection": recorded}
