"""A done trace → its cases and trials, as ``import-traces`` makes them.

The spans of one trace are grouped into units (:func:`agenteval.traces.units.group_units`,
one per agent invocation) and each unit is made a trial by
:func:`agenteval.traces.importer.unit_trial`, the function ``import-traces`` uses; the
trace's log records join its spans. Then, as ``import-traces`` does (its module
docstring has the rules): ``where`` filters (every ``ATTR=VALUE`` must hold on the root
span, else its resource), a ``join_attr`` value naming a case of ``dataset`` uses that
case, else ``case_id_attr``'s value is the case id, else ``t-`` and 12 hex digits of the
SHA-256 of ``trace_id:span_id``. tests/monitor/test_mapping.py holds the trials made here
equal to those ``import-traces`` writes for the same spans.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agenteval._util.untrusted import clean_text
from agenteval.cases.case import Case
from agenteval.traces.importer import PLACEHOLDER_INPUT, unit_trial
from agenteval.traces.logs import LogRecord
from agenteval.traces.records import SpanRecord
from agenteval.traces.units import Unit, attribute, group_units
from agenteval.trials.trial import Trial

__all__ = ["Made", "MapOptions", "trace_conversation", "trace_trials"]


@dataclass(frozen=True, slots=True)
class MapOptions:
    """How a trace becomes trials (the ``import-traces`` options the monitor takes)."""

    case_id_attr: str | None = None
    where: Sequence[tuple[str, str]] = ()
    dataset: Mapping[str, Case] | None = None
    join_attr: str | None = None
    group: str = "invocation"
    """``invocation`` or ``conversation`` (:mod:`agenteval.monitor.conversations`)."""


@dataclass(frozen=True, slots=True)
class Made:
    """One unit of a trace made a case and a trial (``repeat`` is set by the window);
    ``start_ns`` is the unit's first start (None when no root has a start time)."""

    case: Case
    trial: Trial
    start_ns: int | None
    unmatched: bool


def _text(v: Any) -> str | None:
    if v is None or isinstance(v, dict | list):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return clean_text(str(v))


def _hash_id(key: str) -> str:
    return "t-" + hashlib.sha256(clean_text(key).encode("utf-8")).hexdigest()[:12]


def _kept(u: Unit, opts: MapOptions) -> bool:
    return all(_text(attribute(u, name)) == value for name, value in opts.where)


def trace_conversation(spans: Sequence[SpanRecord]) -> tuple[str | None, int | None]:
    """The conversation id of a trace's first invocation that has one (None when none
    has), and the trace's first start."""
    units = group_units(spans).units
    conv = next((u.conversation for u in units if u.conversation is not None), None)
    starts = [u.start_ns for u in units if u.start_ns is not None]
    return conv, min(starts) if starts else None


def trace_trials(
    spans: Sequence[SpanRecord], logs: Sequence[LogRecord], opts: MapOptions
) -> tuple[list[Made], int, dict[str, int]]:
    """The units of one trace's spans made trials, in start order; with the number of
    units left out by ``where`` and the spans skipped (by reason, as ``import-traces``
    counts them)."""
    units = group_units(spans, opts.group)
    out: list[Made] = []
    filtered = 0
    for u in units.units:
        if not _kept(u, opts):
            filtered += 1
            continue
        case_input, trial = unit_trial(u, logs)
        joined: Case | None = None
        unmatched = False
        if opts.dataset is not None and opts.join_attr is not None:
            value = _text(attribute(u, opts.join_attr))
            joined = opts.dataset.get(value) if value is not None else None
            unmatched = joined is None
        if joined is not None:
            case = joined
        else:
            attr = _text(attribute(u, opts.case_id_attr)) if opts.case_id_attr else None
            cid = attr if attr is not None and attr.strip() else _hash_id(u.key)
            given = case_input if case_input is not None else PLACEHOLDER_INPUT
            case = Case(id=cid, input=given)
        trial.case_id = case.id
        out.append(Made(case, trial, u.start_ns, unmatched))
    return out, filtered, dict(units.skipped)
