"""``agenteval run``'s progress on stderr: a rich bar on a terminal, a plain line every 10%
or 10 s otherwise (CI logs), nothing with ``--quiet``."""

from __future__ import annotations

import sys
import time
from typing import Any, Literal

from rich.console import Console

from agenteval.run.runner import RunProgress
from agenteval.run.session import ProgressDisplay
from agenteval.trials.trial import Trial

Mode = Literal["bar", "lines", "none"]


def progress_display(mode: Mode) -> ProgressDisplay:
    """The :data:`~agenteval.run.session.ProgressDisplay` of ``mode``, for ``Session.run``."""
    return lambda total: _Progress(total, mode)


class _Progress:
    """A rich progress bar ("bar"), a plain line every 10% or 10 s ("lines"), or nothing."""

    def __init__(self, total: int, mode: Mode) -> None:
        self.total = total
        self.mode = mode
        self.state = RunProgress(on_trial=self._tick if mode != "none" else None)
        self._bar: Any = None  # rich.progress.Progress, imported only when shown
        self._task: Any = None
        self._t0 = time.monotonic()
        self._next_line = time.monotonic() + 10
        self._step = max(1, total // 10)

    def __enter__(self) -> RunProgress:
        if self.mode == "bar":
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]trials"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failed]} failed"),
                TextColumn("{task.fields[rate]}/s"),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("run", total=self.total, failed=0, rate="0.0")
        return self.state

    def _tick(self, p: RunProgress, trial: Trial) -> None:
        now = time.monotonic()
        rate = p.done / max(1e-9, now - self._t0)
        if self._bar is not None:
            self._bar.update(self._task, completed=p.done, failed=p.failed, rate=f"{rate:.1f}")
        elif p.done % self._step == 0 or p.done == self.total or now >= self._next_line:
            self._next_line = now + 10
            print(
                f"agenteval: {p.done}/{self.total} trials, {p.failed} failed, {rate:.1f}/s",
                file=sys.stderr,
                flush=True,
            )

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
