"""Runs as pandas data frames: ``runs_df``, ``trials_df``, ``scores_df``, ``tool_calls_df``.

Needs the ``frames`` extra (``pip install -e '.[frames]'``: pandas and pyarrow);
without it each function raises :class:`FramesUnavailable` (an InputError: exit 2 from
``agenteval export``) whose one line names the extra. pandas is imported on first use.

Runs are read as every command reads them (:func:`agenteval.rundir.read_header`,
:func:`agenteval.rundir.iter_trials`; format 1 runs are migrated as they are read, a torn
last line is skipped); nothing is written. A broken run raises InputError naming the file,
line and field, except in :func:`runs_df`, where it is a row with ``error`` set.

Every column has a fixed dtype, listed in :data:`RUNS_COLUMNS`, :data:`TRIALS_COLUMNS`,
:data:`SCORES_COLUMNS` and :data:`TOOL_CALLS_COLUMNS` (docs/view.md has the table). Text
is ``string[pyarrow]`` (missing: ``<NA>``), low-cardinality text ``category``, times
``datetime64[ns, UTC]`` (NaT for a time outside its range, 1677 to 2262). Per-scorer
columns (``score.NAME``, ``status.NAME``, ``pass_rate.NAME``, ``mean.NAME``) follow the
fixed ones, in the run's scorer order.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.errors import InputError
from agenteval.rundir import TrialRecord, iter_trials, read_header
from agenteval.summary.sources import case_tags

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RUNS_COLUMNS",
    "SCORES_COLUMNS",
    "TOOL_CALLS_COLUMNS",
    "TRIALS_COLUMNS",
    "FramesUnavailable",
    "runs_df",
    "scores_df",
    "tool_calls_df",
    "trials_df",
]

STR = "string[pyarrow]"
CAT = "category"
TIME = "datetime64[ns, UTC]"

RUNS_COLUMNS: dict[str, str] = {
    "run": STR,  # the run's path relative to DIR ("." for DIR itself)
    "path": STR,
    "run_id": STR,
    "kind": CAT,
    "created_at": TIME,
    "finished_at": TIME,
    "agent": STR,
    "model": STR,
    "dataset_path": STR,
    "dataset_sha256": STR,
    "trials": "Int64",
    "answered": "Int64",
    "failed": "Int64",
    "cost_usd": "float64",
    "error": STR,
}
"""runs_df: one row per run directory under DIR; then ``pass_rate.NAME`` and ``mean.NAME``
(float64) per scorer of any run. A broken run has ``error`` set and the counts ``<NA>``."""

TRIALS_COLUMNS: dict[str, str] = {
    "run_id": CAT,
    "case_id": STR,
    "repeat": "int64",
    "answered": "bool",
    "output": STR,
    "failure_cause": CAT,
    "failure_message": STR,
    "latency_s": "float64",
    "active_s": "float64",
    "input_tokens": "int64",
    "output_tokens": "int64",
    "model": CAT,
    "tool_calls": "int64",
    "tool_errors": "int64",
    "retries": "int64",
    "retry_wait_s": "float64",
    "started_at": TIME,
    "tags": "object",
}
"""trials_df: one row per trial, in file order; then ``score.NAME`` (float64, NaN when the
score has no value) and ``status.NAME`` (category) per scorer. ``tags``: the case's tags as
a tuple of str (empty when none). ``model``: the first model in the trial's usage."""

SCORES_COLUMNS: dict[str, str] = {
    "run_id": CAT,
    "case_id": STR,
    "repeat": "int64",
    "scorer": CAT,
    "status": CAT,
    "value": "float64",
    "threshold": "float64",
    "passed": "boolean",
    "reason": STR,
    "error": STR,
    "judge_input_tokens": "int64",
    "judge_output_tokens": "int64",
}
"""scores_df: one row per (trial, scorer). ``passed``: True/False for passed/failed, <NA>
for every other status."""

TOOL_CALLS_COLUMNS: dict[str, str] = {
    "run_id": CAT,
    "case_id": STR,
    "repeat": "int64",
    "call": "int64",
    "name": CAT,
    "call_id": STR,
    "arguments": STR,
    "arguments_valid": "bool",
    "result": STR,
    "error": STR,
    "started_at": TIME,
    "duration_s": "float64",
}
"""tool_calls_df: one row per tool call, ``call`` its 0-based position in the trial.
``arguments`` and ``result`` are JSON text (a result that is a string is kept as is;
arguments that were not valid JSON are the raw string, ``arguments_valid`` False)."""


class FramesUnavailable(InputError):
    """pandas or pyarrow is not installed (the ``frames`` extra)."""


def _pandas() -> Any:
    try:
        import pandas
        import pyarrow  # noqa: F401 - the string dtype and parquet need it
    except ImportError as e:
        raise FramesUnavailable(
            f"agenteval.frames needs the 'frames' extra ({e.name} is not installed):"
            " pip install -e '.[frames]'"
        ) from None
    return pandas


_TIME_RANGE = (datetime(1677, 9, 22, tzinfo=UTC), datetime(2262, 4, 11, tzinfo=UTC))
"""The times a ``datetime64[ns]`` column can hold (whole days inside pandas' bounds)."""


def _time(value: Any) -> Any:
    """A time pandas can hold, else None (NaT): an imported trace or an agent may record
    a time centuries off, which would otherwise make the whole frame fail."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        if not _TIME_RANGE[0] <= aware <= _TIME_RANGE[1]:
            return None
    return value


def _frame(pd: Any, data: dict[str, list[Any]], dtypes: dict[str, str]) -> pd.DataFrame:
    data = {k: [_time(x) for x in v] if dtypes[k] == TIME else v for k, v in data.items()}
    df = pd.DataFrame({k: pd.Series(v, dtype=_first(dtypes[k])) for k, v in data.items()})
    return df.astype({k: t for k, t in dtypes.items() if k in df.columns})


def _first(dtype: str) -> str | None:
    """The dtype to build a column with before the final cast: categories of text (also
    when every value is missing, so that they survive a Parquet round trip)."""
    return "object" if dtype in (TIME, "object") else STR if dtype == CAT else dtype


def _json(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _records(run: str | Path) -> tuple[str, list[str], Any]:
    header = read_header(run)
    return header.run_id, header.scorer_names, iter_trials(run)


def trials_df(run: str | Path) -> pd.DataFrame:
    """One row per trial of the run directory ``run`` (columns: :data:`TRIALS_COLUMNS`)."""
    pd = _pandas()
    run_id, names, records = _records(run)
    tags = case_tags(run) or {}
    cols: dict[str, list[Any]] = {k: [] for k in TRIALS_COLUMNS}
    values: dict[str, list[float | None]] = {}
    statuses: dict[str, list[str | None]] = {}
    rec: TrialRecord
    for n, rec in enumerate(records):
        for name in rec.scores:
            if name not in values:
                values[name] = [None] * n
                statuses[name] = [None] * n
        for name in values:
            s = rec.scores.get(name)
            values[name].append(s.value if s is not None else None)
            statuses[name].append(s.status if s is not None else None)
        cols["run_id"].append(run_id)
        cols["case_id"].append(rec.case_id)
        cols["repeat"].append(rec.repeat)
        cols["answered"].append(rec.output is not None)
        cols["output"].append(rec.output)
        cols["failure_cause"].append(rec.failure.cause if rec.failure else None)
        cols["failure_message"].append(rec.failure.message if rec.failure else None)
        cols["latency_s"].append(rec.latency.total_s)
        cols["active_s"].append(rec.latency.active_s)
        cols["input_tokens"].append(sum(u.input_tokens for u in rec.usage))
        cols["output_tokens"].append(sum(u.output_tokens for u in rec.usage))
        cols["model"].append(rec.usage[0].model if rec.usage else None)
        cols["tool_calls"].append(len(rec.tool_calls))
        cols["tool_errors"].append(sum(1 for c in rec.tool_calls if c.error is not None))
        cols["retries"].append(len(rec.retries))
        cols["retry_wait_s"].append(sum(r.wait_s for r in rec.retries))
        cols["started_at"].append(rec.started_at)
        cols["tags"].append(tags.get(rec.case_id, ()))
    dtypes = dict(TRIALS_COLUMNS)
    order = [nm for nm in names if nm in values] + [nm for nm in values if nm not in names]
    for name in order:
        cols[f"score.{name}"] = values[name]
        dtypes[f"score.{name}"] = "float64"
    for name in order:
        cols[f"status.{name}"] = statuses[name]
        dtypes[f"status.{name}"] = CAT
    return _frame(pd, cols, dtypes)


def scores_df(run: str | Path) -> pd.DataFrame:
    """One row per score of each trial (columns: :data:`SCORES_COLUMNS`)."""
    pd = _pandas()
    run_id, _, records = _records(run)
    cols: dict[str, list[Any]] = {k: [] for k in SCORES_COLUMNS}
    for rec in records:
        for name, s in rec.scores.items():
            cols["run_id"].append(run_id)
            cols["case_id"].append(rec.case_id)
            cols["repeat"].append(rec.repeat)
            cols["scorer"].append(name)
            cols["status"].append(s.status)
            cols["value"].append(s.value)
            cols["threshold"].append(s.threshold)
            cols["passed"].append(s.passed)
            cols["reason"].append(s.reason)
            cols["error"].append(s.error)
            cols["judge_input_tokens"].append(sum(u.input_tokens for u in s.usage))
            cols["judge_output_tokens"].append(sum(u.output_tokens for u in s.usage))
    return _frame(pd, cols, SCORES_COLUMNS)


def tool_calls_df(run: str | Path) -> pd.DataFrame:
    """One row per tool call of each trial (columns: :data:`TOOL_CALLS_COLUMNS`)."""
    pd = _pandas()
    run_id, _, records = _records(run)
    cols: dict[str, list[Any]] = {k: [] for k in TOOL_CALLS_COLUMNS}
    for rec in records:
        for i, c in enumerate(rec.tool_calls):
            cols["run_id"].append(run_id)
            cols["case_id"].append(rec.case_id)
            cols["repeat"].append(rec.repeat)
            cols["call"].append(i)
            cols["name"].append(c.name)
            cols["call_id"].append(c.id)
            cols["arguments"].append(_json(c.arguments))
            cols["arguments_valid"].append(c.arguments_valid_json)
            cols["result"].append(_json(c.result))
            cols["error"].append(c.error)
            cols["started_at"].append(c.started_at)
            cols["duration_s"].append(c.duration_s)
    return _frame(pd, cols, TOOL_CALLS_COLUMNS)


def runs_df(dir: str | Path) -> pd.DataFrame:
    """One row per run directory under ``dir`` (columns: :data:`RUNS_COLUMNS`), sorted by
    path. The counts and rates are those of ``agenteval report`` (its Summary)."""
    # imported on first use, so that importing this module stays light
    from agenteval.view.catalog import RunState, find_run_dirs

    pd = _pandas()
    root = Path(dir)
    if not root.is_dir():
        raise InputError("is not a folder", file=root)
    cols: dict[str, list[Any]] = {k: [] for k in RUNS_COLUMNS}
    rates: dict[str, list[float | None]] = {}
    means: dict[str, list[float | None]] = {}
    for n, d in enumerate(find_run_dirs(root)):
        state = RunState(d.relative_to(root).as_posix(), d)
        state.refresh()
        summary, reason = state.summary()
        h = state.header
        agent = (h.agent or {}) if h else {}
        cols["run"].append(state.key)
        cols["path"].append(str(d))
        cols["run_id"].append(h.run_id if h else None)
        cols["kind"].append(h.kind if h else None)
        cols["created_at"].append(h.created_at if h else None)
        cols["finished_at"].append(h.finished_at if h else None)
        cols["agent"].append(agent.get("agent") or agent.get("name") or agent.get("kind"))
        cols["model"].append(agent.get("model"))
        cols["dataset_path"].append(h.dataset.path if h else None)
        cols["dataset_sha256"].append(h.dataset.sha256 if h else None)
        cols["trials"].append(summary.trials if summary else None)
        cols["answered"].append(summary.answered if summary else None)
        cols["failed"].append(summary.failed if summary else None)
        cols["cost_usd"].append(summary.cost.total_usd if summary else None)
        cols["error"].append(reason)
        for name in summary.scorers if summary else {}:
            rates.setdefault(name, [None] * n)
            means.setdefault(name, [None] * n)
        for name in rates:
            got = summary.scorers.get(name) if summary else None
            rates[name].append(got.pass_rate if got else None)
            means[name].append(got.mean if got else None)
    dtypes = dict(RUNS_COLUMNS)
    for name in rates:
        cols[f"pass_rate.{name}"] = rates[name]
        dtypes[f"pass_rate.{name}"] = "float64"
    for name in means:
        cols[f"mean.{name}"] = means[name]
        dtypes[f"mean.{name}"] = "float64"
    return _frame(pd, cols, dtypes)
