"""Recorded traces → cases and trials (``agenteval import-traces``).

Spans are read with :func:`agenteval.traces.tracefile.read_file`; OTLP/JSON **log**
files given beside the trace files (``resourceLogs``: the content some instrumentations
emit as log records) are read into memory and each record joins its span by span id
(:mod:`agenteval.traces.logs`). Spans are grouped into units as
:func:`agenteval.traces.units.group_units` does (one per agent invocation, or per
conversation; through an on-disk :class:`~agenteval.traces.spool.Spool`, so memory holds
one trace or conversation at a time), filtered, sampled, and each unit becomes one case
and one trial:

- **trial**: ``output`` is the final answer (:mod:`agenteval.traces.messages`); tool
  calls, usage, tool definitions and ``latency.active_s`` come from
  :func:`agenteval.traces.mapping.trajectory_from_spans` over the unit's spans (the same
  mapping as in-process capture; tool definitions also from the root span's
  ``gen_ai.tool.definitions`` when no model span has them); ``latency.total_s`` is the
  span of the unit's root spans (first start to last end); ``started_at`` the first
  start. A root span with status ERROR makes a failure: its cause is the span's ``error.type`` (else
  ``agent_error``), its message the status description (less a leading ``<cause>: ``)
  or the last exception event's ``<type>: <message>``.
  ``metadata`` holds ``trace_id``, ``span_id`` (of the first root), ``service`` (the
  resource's ``service.name``), ``conversation`` (when known), ``invocations`` (with
  ``--group conversation``), ``not_recorded`` (what the trace did not record, see
  :mod:`agenteval.scoring.unrecorded`) and ``tool_errors`` (which rule made each failed
  call an error, :mod:`agenteval.trials.tool_errors`).
- **case**: the recorded prompt as input (one user message: its text; a conversation:
  the chat messages); for a conversation unit, each turn's prompt and answer in order but
  the last answer (turns whose prompt was not recorded are left out, and the trial says
  ``input`` was not recorded); the placeholder ``[input not recorded]`` when no prompt
  was. Id: ``t-`` and 12 hex digits of the SHA-256 of ``trace_id:span_id``
  (``conversation:ID`` for a conversation), stable across imports; with ``case_id_attr``
  the value of that attribute (root span, else its resource; units without it keep the
  hash id). With a dataset and ``join_attr``, a unit whose attribute value is a case id of
  the dataset uses that case (its expected answer, tools...); the others keep their
  recorded case and are counted as unmatched. Trials of one case id are repeats 0, 1, ...
  in start order.

**Filters**, in this order: ``since``/``until`` (the unit's first start, inclusive
``since``, exclusive ``until``; a unit without times is dropped by either), ``where``
(every ``ATTR=VALUE`` must hold: the attribute on the root span, else its resource,
compared as text), then ``sample``: a unit is kept when the SHA-256 of ``seed`` and its
trace id (its conversation id when grouped by conversation), read as a number in [0, 1),
is below the rate. So the same seed keeps the same traces whatever the order or split of
the input files, and a larger rate keeps a superset.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from agenteval.cases.case import Case
from agenteval.errors import RunWriteError
from agenteval.traces.logs import LogRecord
from agenteval.traces.spool import Spool
from agenteval.traces.tracefile import read_file
from agenteval.traces.unit_trial import span_time, unit_trial
from agenteval.traces.units import Unit, attribute_text, unit_case_id
from agenteval.trials.trial import Trial
from agenteval.trials.unrecorded import NOT_RECORDED

__all__ = [
    "PLACEHOLDER_INPUT",
    "ImportOptions",
    "ImportResult",
    "import_traces",
    "iter_import",
    "sample_key",
    "unit_trial",
]

PLACEHOLDER_INPUT = "[input not recorded]"
"""The input of a case whose prompt the trace did not record."""
UNMATCHED_SHOWN = 5


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """What ``import-traces`` reads and keeps (module docstring for the exact rules)."""

    group: str = "invocation"
    case_id_attr: str | None = None
    dataset: dict[str, Case] | None = None
    join_attr: str | None = None
    sample: float | None = None
    seed: int = 0
    since: datetime | None = None
    until: datetime | None = None
    where: Sequence[tuple[str, str]] = ()


@dataclass(slots=True)
class ImportResult:
    """The cases (in first-use order) and trials made, and what was left out."""

    cases: dict[str, Case] = field(default_factory=dict)
    trials: list[Trial] = field(default_factory=list)
    spans: int = 0
    units: int = 0
    skipped_spans: dict[str, int] = field(default_factory=dict)
    filtered: dict[str, int] = field(default_factory=dict)
    """Units left out, by reason: ``no start time``, ``before since``, ``at or after until``
    (the options by field name; the CLI says and records its flags), ``where``, ``sampled
    out``."""
    unmatched: list[str] = field(default_factory=list)
    """The first join values (or ``(none)``) of units not found in the dataset (at most
    :data:`UNMATCHED_SHOWN`; ``unmatched_count`` counts them all)."""
    unmatched_count: int = 0
    not_recorded: int = 0
    """Trials missing some content."""
    trial_count: int = 0
    case_count: int = 0

    def drop(self, why: str) -> None:
        self.filtered[why] = self.filtered.get(why, 0) + 1

    def unmatch(self, value: str) -> None:
        self.unmatched_count += 1
        if len(self.unmatched) < UNMATCHED_SHOWN:
            self.unmatched.append(value)


def sample_key(seed: int, key: str) -> float:
    """A number in [0, 1) fixed by ``seed`` and ``key``: a unit is sampled when it is below
    the rate."""
    h = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0**64


def _keep(u: Unit, opts: ImportOptions, res: ImportResult) -> bool:
    if opts.since is not None or opts.until is not None:
        start = span_time(u.start_ns)
        if start is None:
            res.drop("no start time")
            return False
        if opts.since is not None and start < opts.since:
            res.drop("before since")
            return False
        if opts.until is not None and start >= opts.until:
            res.drop("at or after until")
            return False
    for name, value in opts.where:
        if attribute_text(u, name) != value:
            res.drop("where")
            return False
    if opts.sample is not None and opts.sample < 1.0:
        key = u.conversation if opts.group == "conversation" and u.conversation else u.trace_id
        if sample_key(opts.seed, key) >= opts.sample:
            res.drop("sampled out")
            return False
    return True


def iter_import(
    files: Sequence[str | Path], opts: ImportOptions, res: ImportResult
) -> Generator[tuple[Case, bool, Trial], None, None]:
    """Read ``files`` and make the trials one at a time: ``(case, new, trial)`` in start
    order, ``case`` the one to score the trial against (the first made under its id),
    ``new`` whether this is its id's first use (cases come in first-use order). ``res``
    gets the counts (its ``cases`` and ``trials`` stay empty).

    Memory holds one trace (one conversation) at a time: the spans go through an on-disk
    :class:`~agenteval.traces.spool.Spool` first, so every file is read, and any unusable
    one raises, before the first trial is made."""
    try:
        logs: list[LogRecord] = []
        with Spool(opts.group) as spool:
            for f in files:
                spool.add(read_file(f, logs))
            index = _LogIndex(logs)
            spool.build()
            res.spans = spool.found.spans
            res.skipped_spans = dict(spool.found.skipped)
            res.units = spool.units_count
            for u in spool.units():
                if not _keep(u, opts, res):
                    continue
                case_input, trial = unit_trial(u, index.of(u))
                joined: Case | None = None
                if opts.dataset is not None and opts.join_attr is not None:
                    value = attribute_text(u, opts.join_attr)
                    joined = opts.dataset.get(value) if value is not None else None
                    if joined is None:
                        res.unmatch(value if value is not None else "(none)")
                cid = joined.id if joined is not None else unit_case_id(u, opts.case_id_attr)

                def make(
                    joined: Case | None = joined, cid: str = cid, given: Any = case_input
                ) -> Case:
                    if joined is not None:
                        return joined
                    return Case(id=cid, input=given if given is not None else PLACEHOLDER_INPUT)

                case, repeat, new = spool.use_case(cid, make)
                trial.case_id = cid
                trial.repeat = repeat
                if NOT_RECORDED in trial.metadata:
                    res.not_recorded += 1
                res.trial_count += 1
                res.case_count += new
                yield case, new, trial
    except (sqlite3.Error, OSError) as e:  # the spool's disk (TMPDIR) is full or unwritable
        raise _spool_error(e) from None


class _LogIndex:
    """The log records read, by ``(trace id or "", span id)``, so that each unit is given
    only the records of its own spans: the records of the unit's trace (its first span's
    trace, for a conversation) then those without a trace id, each in read order, which is
    what :func:`~agenteval.traces.logs.attach` keeps of the whole list. Handing every unit
    all the records of its trace made a trace of many invocations quadratic (bench/
    import_traces.py ``--many``, CPU s: 2,000 invocations 9.1 → 4.9, 8,000 57 → 17)."""

    def __init__(self, logs: Sequence[LogRecord]) -> None:
        self._by: dict[tuple[str, str], list[LogRecord]] = {}
        for r in logs:
            if r.span_id:  # attach() ignores a record without a span id
                self._by.setdefault((r.trace_id or "", r.span_id), []).append(r)

    def of(self, u: Unit) -> list[LogRecord]:
        if not self._by:
            return []
        out: list[LogRecord] = []
        seen: set[str] = set()
        for s in u.spans:
            if s.span_id in seen:
                continue
            seen.add(s.span_id)
            out += self._by.get((u.trace_id, s.span_id), ())
            out += self._by.get(("", s.span_id), ())
        return out


def _spool_error(e: sqlite3.Error | OSError) -> RunWriteError:
    where = tempfile.gettempdir()
    why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    return RunWriteError(
        f"cannot write the import's temporary spool in {where}: {why};"
        " set TMPDIR to a folder with room (nothing was written)"
    )


def import_traces(files: Sequence[str | Path], opts: ImportOptions) -> ImportResult:
    """Read ``files`` and make the cases and trials, all in memory (module docstring;
    ``import-traces`` streams them with :func:`iter_import`)."""
    res = ImportResult()
    for case, new, trial in iter_import(files, opts, res):
        if new:
            res.cases[case.id] = case
        res.trials.append(trial)
    return res
