"""The scoring thread's side of the monitor: done traces → trials → their windows.

:class:`WindowSet` holds the windows open (at most ``max_open_windows``; beyond, the least
recently written is set aside, :attr:`WindowSet.parked`) and writes :class:`Item` s: the
trials made from one done trace (or one conversation's traces), each scored by the
deterministic scorers in :meth:`~agenteval.monitor.windows.Window.add`, plus the judge's
scores when it judged them. After a batch, the windows written are fsync'd and the trace
ids appended to the done log (:mod:`agenteval.monitor.service` has the order and why).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agenteval.monitor.journal import Journal
from agenteval.monitor.mapping import Made, MapOptions
from agenteval.monitor.pending import PendingTrace
from agenteval.monitor.windows import Window, window_header, window_start
from agenteval.scoring.apply import Scorers
from agenteval.scoring.score import Score
from agenteval.scoring.spec import ScorerSpec

if TYPE_CHECKING:
    from agenteval.monitor.conversations import Held

__all__ = ["Item", "Scored", "WindowSet", "Written"]

Written = tuple[str, str, str, str, dict[str, Score]]
"""A trial written: its trace id, root span id, case id, window name and scores."""


@dataclass(slots=True)
class Item:
    """Traces on their way to their windows: the trials made of them (none: ``dropped``
    says why) and, once judged, the judge's scores of each trial."""

    traces: list[PendingTrace]
    made: list[Made] = field(default_factory=list)
    dropped: str | None = None
    judged: list[dict[str, Score]] | None = None
    held: Held | None = None
    """The conversation these traces were held for (``--group conversation``)."""

    def windows(self, window_s: int) -> set[int]:
        """The starts of the windows its trials go to."""
        now = time.time()
        return {
            window_start(m.start_ns / 1e9 if m.start_ns is not None else now, window_s)
            for m in self.made
        }


@dataclass(slots=True)
class Scored:
    """What the scoring thread reports back for one batch."""

    written: list[Written] = field(default_factory=list)
    scored: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    replayed: int = 0
    notes: list[str] = field(default_factory=list)


class WindowSet:
    """The windows open and set aside; writes items to them (module docstring)."""

    def __init__(
        self,
        out: Path,
        window_s: int,
        scorers: Scorers,
        *,
        mapping: MapOptions,
        settings: dict[str, Any],
        max_open: int,
        extra_specs: list[ScorerSpec] | None = None,
        replica: str | None = None,
    ) -> None:
        self.out = out
        self.replica = replica
        self.window_s = window_s
        self.scorers = scorers
        self.mapping = mapping
        self.settings = settings
        self.max_open = max_open
        self.extra_specs = list(extra_specs or [])
        """Scorers beside the deterministic ones whose scores items carry (the judge's)."""
        self.open: dict[int, Window] = {}
        self.parked: dict[int, float] = {}
        """Unfinished windows set aside (files closed, lock released: traffic stamped
        with many different hours must not exhaust the file descriptors): start → when a
        trial was last written to it. Taken up again when a trial comes for it, or to
        close it when it is due."""

    def window(self, start: int) -> Window:
        """The window starting at ``start``, opened (or created) when it is not."""
        w = self.open.get(start)
        if w is None:
            while len(self.open) >= self.max_open:  # set the least recent aside
                old = min(self.open.values(), key=lambda x: x.last_write)
                del self.open[old.start]
                self.parked[old.start] = old.last_write
                old.close(None)  # synced first: what it holds is durable
            settings = {**self.settings, "window_s": self.window_s, "window_start": start}
            header = window_header(settings, self.scorers)
            if self.extra_specs:
                header.scorers = [*header.scorers, *self.extra_specs]
            keep = self.mapping.case_id_attr is not None
            w = Window.open(
                self.out, start, self.window_s, header, keep_cases=keep, replica=self.replica
            )
            w.last_write = self.parked.pop(start, 0.0)
            self.open[start] = w
        return w

    def write(self, items: list[Item], journal: Journal) -> Scored:
        """Write ``items`` (in the scoring thread), fsync the windows written, then record
        every trace done. An OSError (the disk refused a write) closes the windows written
        (a reopen cuts any torn line) and is raised: the caller puts the traces back."""
        got = Scored()
        touched: dict[int, Window] = {}
        try:
            for item in items:
                if item.dropped is not None:
                    got.dropped[item.dropped] = got.dropped.get(item.dropped, 0) + 1
                    continue
                got.scored += len(item.traces)
                judged = item.judged or [{} for _ in item.made]
                for m, extra in zip(item.made, judged, strict=True):
                    at = m.start_ns / 1e9 if m.start_ns is not None else time.time()
                    w = self.window(window_start(at, self.window_s))
                    touched[w.start] = w
                    if w.holds(m):
                        got.replayed += 1
                        continue
                    scores = w.add(m, self.scorers, extra)
                    meta = m.trial.metadata
                    got.written.append(
                        (meta["trace_id"], meta["span_id"], m.case.id, w.name, scores)
                    )
            for w in touched.values():
                if self.open.get(w.start) is w:  # else set aside, and synced then
                    w.sync()
            journal.add_done((t.trace_id for i in items for t in i.traces), time.time())
        except OSError:
            for w in touched.values():
                self.open.pop(w.start, None)
                with contextlib.suppress(Exception):
                    w.close(None)
            raise
        return got

    def close(self, w: Window | int) -> tuple[Path, str, int]:
        """In the scoring thread: store the window's summary and release it (a window set
        aside is opened again first); its run directory (the shard's, with a replica),
        name and start."""
        from agenteval.summary.compute import summarize  # the summary, once a window ends

        if not isinstance(w, Window):
            w = self.window(w)
            del self.open[w.start]
        w.sync()
        w.close(summarize(w.dir).model_dump(mode="json"))
        return w.dir, w.name, w.start

    def release_all(self) -> None:
        """Release every open window (unfinished ones stay unfinished)."""
        for w in self.open.values():
            with contextlib.suppress(OSError):
                w.close(None)
        self.open.clear()
