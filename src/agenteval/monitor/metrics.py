"""The monitor's counters, served at ``/metrics`` in the Prometheus text format (0.0.4).

Every name starts ``agenteval_monitor_``. Counters count since the process started (a
restart starts them at 0, as Prometheus expects of a counter); gauges are the state now.

========================================  =========  ========================================
metric                                    type       what
========================================  =========  ========================================
``requests_total{signal,code}``           counter    OTLP requests answered, by signal
                                                     (traces, logs) and HTTP status
``spans_total``                           counter    spans acknowledged (durable)
``spans_late_total``                      counter    spans of a trace already scored: dropped
``spans_rejected_total``                  counter    spans without a trace id: dropped (the
                                                     sender is told: a partial success)
``traces_received_total``                 counter    traces begun (first span arrived)
``traces_scored_total``                   counter    traces done that made at least a trial
``traces_dropped_total{reason}``          counter    traces done that made none (``no
                                                     unit``, ``where``)
``traces_replayed_total``                 counter    units found already written after a
                                                     restart (not written again)
``trials_total``                          counter    trials written
``scorer_results_total{scorer,status}``   counter    scores by status (passed, failed,
                                                     not_applicable, inconclusive, error)
``score{scorer}``                         histogram  score values (buckets 0.1 ... 1)
``pending_traces`` / ``pending_spans``    gauge      traces (spans) in flight
``wal_segments`` / ``wal_bytes``          gauge      write-ahead log segments and bytes
``alerts_total``                          counter    windows whose gate blocked
``windows_closed_total``                  counter    windows closed
``windows_open``                          gauge      windows holding trials, not yet closed
                                                     and gated
``judge_calls_total``                     counter    with ``--rubric``: requests to the judge
``judge_cache_hits_total``                counter    judge replies served by its cache
``judge_spend_usd_total``                 counter    what the judge cost (USD, priced tokens)
``judge_budget_skipped_total``            counter    trials not judged: the hour's budget
                                                     was spent
``judge_sampled_out_total``               counter    trials not judged: outside the sample
``judging_traces``                        gauge      traces waiting for the judge
``conversations_held``                    gauge      with ``--group conversation``: not done
``conversations_split_total``             counter    traces of a conversation already written
========================================  =========  ========================================

A scorer counts as *applicable* when its status is passed, failed or inconclusive (the
report's definition); ``not_applicable`` and ``error`` are counted under their status.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agenteval.scoring.score import Score

if TYPE_CHECKING:
    from agenteval.monitor.writing import Scored

__all__ = ["BUCKETS", "Metrics"]

BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""Upper bounds of the score histogram's buckets (``+Inf`` too, as the format asks)."""
_P = "agenteval_monitor_"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**kv: str) -> str:
    if not kv:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in kv.items()) + "}"


def _num(x: float) -> str:
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


@dataclass(slots=True)
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    total: float = 0.0
    n: int = 0

    def observe(self, v: float) -> None:
        for i, b in enumerate(BUCKETS):
            if v <= b:
                self.counts[i] += 1
                break
        self.total += v
        self.n += 1


@dataclass(slots=True)
class Metrics:
    """The counters (module docstring); ``gauges`` are read when rendered."""

    requests: dict[tuple[str, int], int] = field(default_factory=dict)
    spans: int = 0
    late_spans: int = 0
    rejected_spans: int = 0
    traces_received: int = 0
    traces_scored: int = 0
    traces_dropped: dict[str, int] = field(default_factory=dict)
    replayed: int = 0
    trials: int = 0
    results: dict[tuple[str, str], int] = field(default_factory=dict)
    scores: dict[str, _Histogram] = field(default_factory=dict)
    alerts: int = 0
    windows_closed: int = 0
    gauges: dict[str, Callable[[], float]] = field(default_factory=dict)
    counters: dict[str, tuple[str, Callable[[], float]]] = field(default_factory=dict)
    """Counters kept elsewhere (the judge's): name → (help, read)."""

    def request(self, signal: str, code: int) -> None:
        self.requests[(signal, code)] = self.requests.get((signal, code), 0) + 1

    def dropped(self, reason: str) -> None:
        self.traces_dropped[reason] = self.traces_dropped.get(reason, 0) + 1

    def scored(self, scores: dict[str, Score]) -> None:
        """Count one trial's scores."""
        self.trials += 1
        for name, s in scores.items():
            key = (name, s.status)
            self.results[key] = self.results.get(key, 0) + 1
            if s.value is not None:
                self.scores.setdefault(name, _Histogram()).observe(s.value)

    def count(self, got: Scored) -> None:
        """Count what the scoring thread wrote (one batch): traces scored, dropped and
        found already written, each trial's scores."""
        self.traces_scored += got.scored
        self.replayed += got.replayed
        for reason, n in got.dropped.items():
            self.traces_dropped[reason] = self.traces_dropped.get(reason, 0) + n
        for *_, scores in got.written:
            self.scored(scores)

    def render(self) -> str:
        """The text exposition format."""
        out: list[str] = []

        def family(name: str, kind: str, what: str) -> None:
            out.append(f"# HELP {_P}{name} {what}")
            out.append(f"# TYPE {_P}{name} {kind}")

        def sample(name: str, value: float, **labels: str) -> None:
            out.append(f"{_P}{name}{_labels(**labels)} {_num(value)}")

        family("requests_total", "counter", "OTLP requests answered, by signal and HTTP status.")
        for (sig, code), n in sorted(self.requests.items()):
            sample("requests_total", n, signal=sig, code=str(code))
        plain: list[tuple[str, float, str]] = [
            ("spans_total", self.spans, "Spans acknowledged (durable in the log)."),
            ("spans_late_total", self.late_spans, "Spans of a trace already scored (dropped)."),
            ("spans_rejected_total", self.rejected_spans, "Spans without a trace id (dropped)."),
            ("traces_received_total", self.traces_received, "Traces begun."),
            ("traces_scored_total", self.traces_scored, "Traces done that made a trial."),
            ("traces_replayed_total", self.replayed, "Units found written before a restart."),
            ("trials_total", self.trials, "Trials written."),
            ("alerts_total", self.alerts, "Windows whose gate blocked."),
            ("windows_closed_total", self.windows_closed, "Windows closed."),
        ]
        plain += [(name, get(), what) for name, (what, get) in sorted(self.counters.items())]
        for name, value, what in plain:
            family(name, "counter", what)
            sample(name, value)
        family("traces_dropped_total", "counter", "Traces done that made no trial, by reason.")
        for reason, n in sorted(self.traces_dropped.items()):
            sample("traces_dropped_total", n, reason=reason)
        family("scorer_results_total", "counter", "Scores by scorer and status.")
        for (name, status), n in sorted(self.results.items(), key=lambda kv: kv[0]):
            sample("scorer_results_total", n, scorer=name, status=status)
        family("score", "histogram", "Score values by scorer.")
        for name, h in sorted(self.scores.items()):
            running = 0
            for b, c in zip(BUCKETS, h.counts, strict=True):
                running += c
                sample("score_bucket", running, scorer=name, le=_num(b))
            sample("score_bucket", h.n, scorer=name, le="+Inf")
            sample("score_sum", h.total, scorer=name)
            sample("score_count", h.n, scorer=name)
        for name, get in sorted(self.gauges.items()):
            family(name, "gauge", name.replace("_", " ").capitalize() + ".")
            sample(name, get())
        return "\n".join(out) + "\n"
