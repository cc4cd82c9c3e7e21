"""Closing windows: which are due, closing each in the scoring thread, gating it, alerting.

A window is due ``close_delay_s`` after its end and after the last trial written to it
(:func:`~agenteval.monitor.windows.close_at`; a window far ahead of the clock closes after
its last trial and is not gated), unless a conversation begun in it or a trial of it
waiting for the judge still holds it (:meth:`~agenteval.monitor.staging.Staging.holding`).
Closing stores its summary and releases its lock (:meth:`WindowSet.close`), then the
:class:`~agenteval.monitor.checking.Checker` gates it; an alert is said in one line,
counted, and handed to ``on_alert`` (the webhook). A window counts in :attr:`open_count`
(the ``windows_open`` gauge) until it is closed and gated, so a script that waits for the
gauge to read 0 sees every alert of what it sent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agenteval._util.say import Say
from agenteval.errors import InputError
from agenteval.monitor import alerts
from agenteval.monitor.checking import Checker
from agenteval.monitor.metrics import Metrics
from agenteval.monitor.staging import Staging
from agenteval.monitor.windows import Window, close_at, far_ahead, window_name
from agenteval.monitor.writing import WindowSet

__all__ = ["Closer"]


class Closer:
    """Closes the windows of one :class:`WindowSet` when they are due (module docstring)."""

    def __init__(
        self,
        store: WindowSet,
        checker: Checker,
        staging: Staging,
        metrics: Metrics,
        say: Say,
        pool: ThreadPoolExecutor,
        *,
        close_delay_s: float,
    ) -> None:
        self.store = store
        self.checker = checker
        self.staging = staging
        self.metrics = metrics
        self._say = say
        self._pool = pool
        self.close_delay_s = close_delay_s
        self.on_alert: Callable[[dict[str, Any]], None] | None = None
        self._closing = 0

    @property
    def open_count(self) -> int:
        """Windows holding trials not yet closed and gated (open, set aside, closing)."""
        return len(self.store.open) + len(self.store.parked) + self._closing

    def due(self, now: float) -> list[Window | int]:
        """The windows (open ones, and starts of those set aside) due to close at ``now``."""
        delay, ws = self.close_delay_s, self.store.window_s
        holding = self.staging.holding(ws)
        due: list[Window | int] = [
            w
            for w in self.store.open.values()
            if now >= close_at(w.start, ws, w.last_write, delay, now) and w.start not in holding
        ]
        due += [
            s
            for s, last in self.store.parked.items()
            if now >= close_at(s, ws, last, delay, now) and s not in holding
        ]
        return due

    async def close_due(self) -> None:
        """Close, gate and alert every window due now, one at a time."""
        loop = asyncio.get_running_loop()
        for w in self.due(time.time()):
            if isinstance(w, Window):
                del self.store.open[w.start]
            else:  # set aside: taken up again, then closed
                self.store.parked.pop(w)
            self._closing += 1  # counted in windows_open until it is closed and gated
            try:
                rec = await loop.run_in_executor(self._pool, self._close, w)
            except (OSError, InputError) as e:  # the window stays as written; said once
                name = window_name(w.start if isinstance(w, Window) else w, self.store.window_s)
                self._say(f"agenteval monitor: window {name} not closed cleanly: {e}")
                continue
            finally:
                self._closing -= 1
            self.metrics.windows_closed += 1
            if rec is not None:
                self.metrics.alerts += 1
                self._say(alerts.alert_line(rec))
                if self.on_alert is not None:
                    self.on_alert(rec)

    def _close(self, w: Window | int) -> dict[str, Any] | None:
        """In the scoring thread: close the window, gate it (not a window far ahead of the
        clock: a broken clock's window is gated when its time comes, if ever)."""
        run_dir, name, start = self.store.close(w)
        if far_ahead(start, self.store.window_s, time.time()):
            return None
        return self.checker.check(run_dir, name)
