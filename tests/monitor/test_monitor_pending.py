"""When a trace is done, and what happens to its late spans."""

from __future__ import annotations

from agenteval.monitor.pending import Tracker
from agenteval.traces.records import SpanRecord

T = "a" * 32


def _span(sid: str, parent: str | None = None, end: int | None = 2) -> SpanRecord:
    return SpanRecord(name="s", span_id=sid, trace_id=T, parent_id=parent, start_ns=1, end_ns=end)


def _tracker() -> Tracker:
    return Tracker(idle_s=1.0, max_wait_s=10.0, horizon_s=100.0)


def test_done_once_the_root_ended_and_it_was_quiet_for_idle() -> None:
    t = _tracker()
    t.add_spans([_span("c1", "r")], segment=1, now=0.0)
    assert t.due(5.0) == []  # no root yet: not done however quiet
    t.add_spans([_span("r")], segment=1, now=5.0)
    assert t.due(5.9) == []  # the root ended, but a span arrived 0.9 s ago
    done = t.due(6.0)
    assert [d.trace_id for d in done] == [T] and len(done[0].spans) == 2
    assert t.spans == 0 and T not in t.pending


def test_a_span_arriving_resets_the_idle_wait() -> None:
    t = _tracker()
    t.add_spans([_span("r")], segment=1, now=0.0)
    t.add_spans([_span("c", "r")], segment=1, now=0.8)
    assert t.due(1.5) == []
    assert len(t.due(1.8)) == 1


def test_max_wait_ends_a_trace_whose_root_never_comes() -> None:
    t = _tracker()
    t.add_spans([_span("c1", "r")], segment=1, now=0.0)
    for i in range(9):  # a span a second: never idle
        t.add_spans([_span(f"c{i + 2}", "r")], segment=1, now=float(i + 1))
    assert t.due(9.9) == []
    assert len(t.due(10.0)[0].spans) == 10


def test_a_root_without_an_end_time_does_not_count_as_ended() -> None:
    t = _tracker()
    t.add_spans([_span("r", end=None)], segment=1, now=0.0)
    assert t.due(5.0) == []


def test_late_spans_of_a_done_trace_are_counted_not_kept() -> None:
    t = _tracker()
    t.add_spans([_span("r")], segment=1, now=0.0)
    assert len(t.due(2.0)) == 1
    t.add_spans([_span("late", "r"), _span("late2", "r")], segment=2, now=3.0)
    assert t.late_spans == 2 and t.pending == {} and 2 not in t.segment_refs
    t.forget(200.0)  # past the horizon: the id is forgotten, a span starts a new trace
    t.add_spans([_span("later", "r")], segment=3, now=200.0)
    assert T in t.pending


def test_segments_are_held_until_the_trace_is_settled() -> None:
    t = _tracker()
    t.add_spans([_span("c", "r")], segment=1, now=0.0)
    t.add_spans([_span("r")], segment=2, now=0.0)
    assert t.segment_refs == {1: 1, 2: 1}
    done = t.due(1.0)
    assert t.segment_refs == {1: 1, 2: 1}  # scored, not yet durable
    t.settled(done)
    assert t.segment_refs == {}
