"""``agenteval export RUN --format csv|parquet``: one table of a run as a CSV or Parquet file.

``--table trials`` (default: one row per trial, a column per scorer), ``scores`` (one row
per score) or ``tool_calls`` (one row per tool call); the columns and their types are those
of ``agenteval.frames`` (docs/view.md). Needs the ``frames`` extra (pandas, pyarrow).

The file goes to --out, else to RUN_NAME.TABLE.csv (or .parquet) in the current folder. It
is never written inside the run directory, never replaces an existing file unless
--overwrite is given, and appears whole or not at all (written beside, then renamed). Exit
2 for an unusable run, a missing extra or a refused path; 5 when the file cannot be written.

CSV cells are data, never formulas: a text cell that begins with = + - @, a tab or a
carriage return (an answer, a case id or a tool result could hold =HYPERLINK(...)) is
written with a single quote before it, which spreadsheets show as text;
--keep-formulas writes such cells as they are. Every cell holding a line break (CR or LF)
is quoted, so a bare CR cannot start a row of its own in a reader.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from agenteval.errors import EXIT_IO, EXIT_OK, InputError

TABLES = ("trials", "scores", "tool_calls")


def register(sub: Any) -> None:
    """Add the ``export`` subcommand."""
    p: argparse.ArgumentParser = sub.add_parser(
        "export",
        help="write a run's trials, scores or tool calls as CSV or Parquet",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN", help="a run directory")
    p.add_argument("--format", required=True, choices=("csv", "parquet"), help="file format")
    p.add_argument("--table", default="trials", choices=TABLES, help="which table (trials)")
    p.add_argument("--out", metavar="PATH", help="file to write (RUN_NAME.TABLE.FORMAT here)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument(
        "--keep-formulas",
        action="store_true",
        help="CSV: write text cells beginning with = + - @ as they are (default: prefixed"
        " with ' so a spreadsheet shows them as text)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the paths, build the frame, write it; print the path written."""
    # imported when this command runs: the other commands start without it
    from agenteval import frames
    from agenteval._util.outpaths import check_out_files, real, relation
    from agenteval.rundir import RUN_FILES, read_header

    run_dir = Path(args.run_dir)
    read_header(run_dir)  # not a run: exit 2 before anything else
    out = Path(args.out or f"{real(run_dir).name}.{args.table}.{args.format}")
    check_out_files(
        [("--out", out)],
        [("run", run_dir)],
        protected_dir=run_dir,
        protected_names=RUN_FILES,
        renamed=("--out",),
    )
    if relation(real(out), real(run_dir)) is not None:
        raise InputError(f"--out {out} is inside the run directory {run_dir}; choose another file")
    if out.exists() and not args.overwrite:
        raise InputError(f"--out {out}: already exists; pass --overwrite to replace it")
    make = {"trials": frames.trials_df, "scores": frames.scores_df}
    df = make.get(args.table, frames.tool_calls_df)(run_dir)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        if args.format == "csv":
            # CRLF rows: the csv writer quotes every cell holding a CR or an LF
            data = df if args.keep_formulas else _no_formulas(df)
            data.to_csv(tmp, index=False, lineterminator="\r\n")
        else:
            df.to_parquet(tmp, index=False)
        if args.overwrite:
            os.replace(tmp, out)
        else:
            os.link(tmp, out)  # fails if out appeared meanwhile: never replaced silently
            os.unlink(tmp)
    except FileExistsError:
        raise InputError(f"--out {out}: already exists; pass --overwrite to replace it") from None
    except OSError as e:
        print(f"agenteval: error: --out {out}: cannot write ({e.strerror or e})", file=sys.stderr)
        return EXIT_IO
    finally:  # also on Ctrl-C: no half-written temporary file is left behind
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    print(f"{out} ({len(df)} rows)")
    return EXIT_OK


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (OWASP's CSV injection list)."""


def _no_formula(v: Any) -> Any:
    return "'" + v if isinstance(v, str) and v.startswith(FORMULA_START) else v


def _no_formulas(df: Any) -> Any:
    """``df`` with every text cell that a spreadsheet would run prefixed by ``'``; the
    column names too."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or str(out[col].dtype) in ("string", "str"):
            out[col] = out[col].map(_no_formula)
    out.columns = [_no_formula(c) for c in out.columns]
    return out
