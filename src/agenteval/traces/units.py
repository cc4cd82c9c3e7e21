"""Spans → units: which spans make one imported trial.

:func:`group_units` takes every span read (any order, several files) and returns the
**units** of import, each a root span plus the spans under it:

- per **invocation** (the default): each top-level agent span — ``gen_ai.operation.name =
  invoke_agent`` or ``openinference.span.kind = AGENT`` with no agent span above it — is
  one unit with its descendants. An OpenInference AGENT span that is a LangGraph node
  (its ``metadata`` names a ``langgraph_step``) is a step of the graph, not an
  invocation: its unit is the graph's span (the nearest ancestor that is not a node). A
  trace without any agent span is one unit (all its spans; the root is its earliest root
  span).
- per **conversation** (``group="conversation"``): the invocation units that carry the
  same ``gen_ai.conversation.id`` or ``session.id`` (on the unit's root, else on any of its
  spans) are merged into one unit, ordered by start time; a unit without one stays alone.

Spans are tied to their parent by ``parent_id`` within their trace. A span whose parent is
not in the input (a partial export) is a root. Spans that no root reaches (their parent
ids form a cycle) are **skipped** and counted, as are spans without a trace or span id,
and second copies of a span id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agenteval._util.untrusted import clean_text
from agenteval.traces.records import SpanRecord

__all__ = [
    "CONVERSATION_KEYS",
    "Unit",
    "Units",
    "attribute",
    "attribute_text",
    "group_units",
    "is_agent",
    "unit_case_id",
]

CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
"""Attributes naming a conversation, in order of preference."""


@dataclass(slots=True)
class Unit:
    """One imported trial's spans: ``roots`` (one per invocation, in start order) and
    ``spans`` (every span of the unit, roots included)."""

    key: str
    """What identifies the unit: ``trace:span`` of its root, or ``conversation:ID``."""
    trace_id: str
    roots: list[SpanRecord]
    spans: list[SpanRecord]
    conversation: str | None = None

    @property
    def root(self) -> SpanRecord:
        """The first invocation's root span."""
        return self.roots[0]

    @property
    def start_ns(self) -> int | None:
        starts = [r.start_ns for r in self.roots if r.start_ns is not None]
        return min(starts) if starts else None

    @property
    def end_ns(self) -> int | None:
        ends = [r.end_ns for r in self.roots if r.end_ns is not None]
        return max(ends) if ends else None


@dataclass(slots=True)
class Units:
    """The units found, and what was skipped (span counts by reason)."""

    units: list[Unit] = field(default_factory=list)
    spans: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + n


def is_agent(s: SpanRecord) -> bool:
    """An agent invocation span (GenAI ``invoke_agent`` or OpenInference ``AGENT``)."""
    a = s.attributes
    return (
        a.get("gen_ai.operation.name") == "invoke_agent"
        or str(a.get("openinference.span.kind", "")).upper() == "AGENT"
    )


def _graph_node(s: SpanRecord) -> bool:
    meta = s.attributes.get("metadata")
    if isinstance(meta, str) and "langgraph_step" in meta:
        try:
            meta = json.loads(meta)
        except (ValueError, RecursionError):
            return False
    return isinstance(meta, dict) and "langgraph_step" in meta


def _start(s: SpanRecord) -> tuple[bool, int]:
    return (s.start_ns is None, s.start_ns or 0)


def _conversation(u: Unit) -> str | None:
    for spans in ([u.root], u.spans):
        for s in spans:
            for k in CONVERSATION_KEYS:
                v = s.attributes.get(k)
                if isinstance(v, str | int) and not isinstance(v, bool) and str(v):
                    return str(v)
    return None


def _trace_units(trace_id: str, spans: list[SpanRecord], out: Units) -> list[Unit]:
    by_id: dict[str, SpanRecord] = {}
    for s in spans:
        if s.span_id in by_id:
            out.skip("duplicate span id")
            continue
        by_id[s.span_id] = s
    children: dict[str, list[SpanRecord]] = {}
    roots: list[SpanRecord] = []
    for s in by_id.values():
        if s.parent_id is None or s.parent_id not in by_id or s.parent_id == s.span_id:
            roots.append(s)
        else:
            children.setdefault(s.parent_id, []).append(s)
    # walk down from the roots (iteratively: a deep chain must not hit the recursion limit)
    parent_of: dict[str, str | None] = {}
    order: list[SpanRecord] = []
    stack: list[tuple[SpanRecord, str | None]] = [(r, None) for r in roots]
    while stack:
        s, p = stack.pop()
        parent_of[s.span_id] = p
        order.append(s)
        stack.extend((c, s.span_id) for c in children.get(s.span_id, ()))
    if len(order) < len(by_id):
        out.skip("parent ids in a cycle", len(by_id) - len(order))
    if not order:
        return []

    def unit_root(s: SpanRecord) -> SpanRecord:
        """The invocation a (top-level) agent span stands for."""
        if not _graph_node(s):
            return s
        p = parent_of.get(s.span_id)
        while p is not None and _graph_node(by_id[p]):
            p = parent_of.get(p)
        return by_id[p] if p is not None else s

    heads: dict[str, SpanRecord] = {}
    for s in order:
        if not is_agent(s) or s.span_id in heads:
            continue
        p = parent_of.get(s.span_id)
        above = False
        while p is not None:
            if p in heads or is_agent(by_id[p]):
                above = True
                break
            p = parent_of.get(p)
        if not above:
            r = unit_root(s)
            heads.setdefault(r.span_id, r)
    # spans keep the order they were read in (the mapping breaks start-time ties by it)
    if not heads:
        root = min(roots, key=_start)
        roots_sorted = sorted(roots, key=_start)
        reached = [s for s in by_id.values() if s.span_id in parent_of]
        return [Unit(f"{trace_id}:{root.span_id}", trace_id, roots_sorted, reached)]
    units = []
    read_at = {sid: i for i, sid in enumerate(by_id)}  # read order, to sort each unit's spans
    for r in sorted(heads.values(), key=_start):
        member_ids: list[str] = []
        todo = [r]
        while todo:
            s = todo.pop()
            member_ids.append(s.span_id)
            todo.extend(children.get(s.span_id, ()))
        # the unit's own spans in read order: linear in the unit, not in the trace (a
        # trace of many invocations imported in quadratic time)
        members = [by_id[i] for i in sorted(member_ids, key=read_at.__getitem__)]
        units.append(Unit(f"{trace_id}:{r.span_id}", trace_id, [r], members))
    return units


def group_units(spans: Iterable[SpanRecord], group: str = "invocation") -> Units:
    """Group spans into units (module docstring); ``group`` is ``invocation`` or
    ``conversation``. Units are in start order."""
    out = Units()
    traces: dict[str, list[SpanRecord]] = {}
    for s in spans:
        out.spans += 1
        if not s.trace_id or not s.span_id:
            out.skip("no trace or span id")
            continue
        traces.setdefault(s.trace_id, []).append(s)
    units: list[Unit] = []
    for trace_id, members in traces.items():
        units.extend(_trace_units(trace_id, members, out))
    units.sort(key=lambda u: (u.start_ns is None, u.start_ns or 0, u.key))
    if group == "conversation":
        merged: dict[str, Unit] = {}
        alone: list[Unit] = []
        for u in units:
            conv = _conversation(u)
            if conv is None:
                alone.append(u)
                continue
            m = merged.get(conv)
            if m is None:
                merged[conv] = Unit(
                    f"conversation:{conv}", u.trace_id, list(u.roots), list(u.spans), conv
                )
            else:
                m.roots.extend(u.roots)
                m.spans.extend(u.spans)
        units = list(merged.values()) + alone
        units.sort(key=lambda u: (u.start_ns is None, u.start_ns or 0, u.key))
    else:
        for u in units:
            u.conversation = _conversation(u)
    out.units = units
    return out


def attribute(u: Unit, name: str) -> Any:
    """``name`` on the unit's root span, else on the root's resource (None when absent)."""
    for where in (u.root.attributes, u.root.resource):
        if name in where:
            return where[name]
    return None


def attribute_text(u: Unit, name: str) -> str | None:
    """:func:`attribute` as text, as filters and joins compare it: a bool as ``true`` /
    ``false``, a number as Python writes it, a string cleaned of what cannot be shown; None
    when absent, a list or a map."""
    v = attribute(u, name)
    if v is None or isinstance(v, dict | list):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return clean_text(str(v))


def unit_case_id(u: Unit, case_id_attr: str | None) -> str:
    """The case id of a unit that joins no dataset case: the ``case_id_attr`` attribute's
    text when not blank, else ``t-`` and 12 hex digits of the SHA-256 of the unit's key
    (stable across imports)."""
    attr = attribute_text(u, case_id_attr) if case_id_attr is not None else None
    if attr is not None and attr.strip():
        return attr
    return "t-" + hashlib.sha256(clean_text(u.key).encode("utf-8")).hexdigest()[:12]
