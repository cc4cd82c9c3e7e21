"""Which reference a closed window is gated against, and the check itself.

Each window, once closed, is gated (:mod:`agenteval.monitor.alerts`) against

1. **the same window a week earlier**, ``DIR/<window start - 7 days>``, when that window
   exists, is closed (its summary stored) and holds trials: the same hour of the same
   weekday, so daily and weekly cycles of the traffic do not look like a change (one
   damaged since it closed, its trials unreadable, is said in one line and passed over
   for the next reference). On when
   no ``--baseline`` is given, else only with ``--baseline-week-earlier`` (a window of
   last week holds fewer cases than a baseline run usually does: it detects a drop more
   slowly); ``--no-baseline-week-earlier`` turns it off. A window length that does not
   divide 7 days (``--window 2d``) has no such window;
2. otherwise ``--baseline RUN`` when given;
3. otherwise nothing: the window is not gated, and the log says so once (the first
   window without a reference), not every hour.

Every window is tested once, at ``alpha_window`` whichever reference it had, so the
bound on false alarms per day (Bonferroni over a day's windows, docs/monitor.md) holds
unchanged. The windows gated are listed in ``DIR/.monitor/checked.log`` (those without a
reference too: a restart does not try them again).
"""

from __future__ import annotations

import json
from collections.abc import Container
from pathlib import Path
from typing import Any

from agenteval._util.say import Say
from agenteval.errors import FieldName, InputError, NamedText
from agenteval.monitor import alerts
from agenteval.monitor.journal import Journal, append_lines
from agenteval.monitor.windows import window_dirs, window_name
from agenteval.rundir import read_header

__all__ = ["WEEK_S", "Checker"]

WEEK_S = 7 * 86400
BASELINE = "--baseline"
"""An alert's ``reference`` when the window was gated against the baseline run: recorded
in ``alerts.jsonl`` and sent to the webhook as the command line's word (docs/monitor.md);
renaming it changes what the alerts record."""


class Checker:
    """Gates closed windows (module docstring)."""

    def __init__(
        self,
        out: Path,
        window_s: int,
        journal: Journal,
        say: Say,
        *,
        baseline: Path | None,
        week_earlier: bool | None,
        alpha_per_day: float,
        replica: str | None = None,
    ) -> None:
        self.out = out
        self.replica = replica
        self.window_s = window_s
        self.journal = journal
        self._say = say
        self.baseline = baseline
        wanted = week_earlier if week_earlier is not None else baseline is None
        self.week_earlier = wanted and WEEK_S % window_s == 0
        self.alpha_per_day = alpha_per_day
        self.alpha = alerts.window_alpha(alpha_per_day, window_s)
        self._said_none = False

    def _week_earlier(self, start: int) -> Path | None:
        """The closed window a week before the one starting at ``start``, if any."""
        if not self.week_earlier:
            return None
        d = self.out / window_name(start - WEEK_S, self.window_s)
        try:
            head = read_header(d)
        except InputError:  # absent, or not a run
            return None
        monitor = (head.settings or {}).get("monitor")
        if head.finished_at is None or not isinstance(monitor, dict):
            return None
        if monitor.get("window_s") != self.window_s or not (head.summary or {}).get("trials"):
            return None
        return d

    def reference(self, run_dir: Path, start: int) -> tuple[Path | None, str]:
        """The run the window is gated against, and what it is (``week earlier`` or
        :data:`BASELINE`); (None, why) when there is none, ``why`` a
        :class:`~agenteval.errors.NamedText` naming the field ``baseline``."""
        earlier = self._week_earlier(start)
        if earlier is not None:
            return earlier, "week earlier"
        if self.baseline is not None:
            return self.baseline, BASELINE
        wanted = window_name(start - WEEK_S, self.window_s) if self.week_earlier else None
        why = f"no closed window a week earlier ({wanted})" if wanted else "no week-earlier window"
        return None, NamedText(why, " and no ", FieldName("baseline"))

    def check(self, run_dir: Path, name: str) -> dict[str, Any] | None:
        """Gate the closed window ``name`` (its run directory, or this replica's shard of
        it, ``run_dir``) once; the alert's record when it blocks."""
        if name in self.journal.checked:
            return None
        monitor = (read_header(run_dir).settings or {}).get("monitor") or {}
        start = monitor.get("window_start")
        ref, what = self.reference(run_dir, start) if isinstance(start, int) else (None, "")
        if ref is None:
            if (self.baseline is not None or self.week_earlier) and not self._said_none:
                self._say(
                    NamedText(
                        f"agenteval monitor: window {name} not gated: ",
                        *_parts(what),
                        " (said once: windows without a reference are not gated)",
                    )
                )
                self._said_none = True
            self.journal.add_checked(name)
            return None
        try:
            result = alerts.check_window(ref, run_dir, self.alpha)
        except InputError as e:
            if what != "week earlier" or not _within(e.file, ref):
                raise
            # last week's window damaged since it closed: the next reference, said
            gated = ("gated against ", FieldName("baseline"))
            then = gated if self.baseline is not None else ("not gated",)
            self._say(
                NamedText(
                    f"agenteval monitor: window {name}: the week-earlier window {ref.name}"
                    f" cannot be read ({e}); ",
                    *then,
                )
            )
            if self.baseline is None:
                self.journal.add_checked(name)
                return None
            ref, what = self.baseline, BASELINE
            result = alerts.check_window(ref, run_dir, self.alpha)
        rec = None
        if result is not None and result.blocked:
            rec = alerts.alert_record(name, run_dir, result, self.alpha, self.alpha_per_day)
            rec["reference"], rec["reference_dir"] = what, str(ref)
            append_lines(self.out / "alerts.jsonl", [json.dumps(rec)])
        self.journal.add_checked(name)
        return rec

    def reopen_unfinished(self, parked: dict[int, float], opened: Container[int]) -> None:
        """At start-up: the windows a previous process left unfinished are set aside in
        ``parked`` (the tick closes them on time), and finished ones not checked are
        checked."""
        for d in window_dirs(self.out, self.replica):
            name = d.name if self.replica is None else d.parent.name
            try:
                head = read_header(d)
            except InputError:  # not a run: not a window of ours, left alone
                continue
            settings = (head.settings or {}).get("monitor")
            if not isinstance(settings, dict):
                continue
            if settings.get("window_s") not in (None, self.window_s):
                raise InputError(
                    (
                        f"holds windows of {settings['window_s']} s ({name}); start the"
                        " monitor with the same ",
                        FieldName("window"),
                        ", or give another ",
                        FieldName("out"),
                    ),
                    file=self.out,
                )
            start = settings.get("window_start")
            if start in opened:  # opened by the replay already
                continue
            if head.finished_at is None and isinstance(start, int):
                parked[start] = 0.0  # opened when a trial comes for it, or to close it
            elif head.finished_at is not None and name not in self.journal.checked:
                try:
                    self.check(d, name)
                except (OSError, InputError) as e:
                    self._say(f"agenteval monitor: window {name} not checked: {e}")


def _parts(text: str) -> tuple[str, ...]:
    """``text`` as parts of a :class:`~agenteval.errors.NamedText` (its own, if it is one)."""
    return text.parts if isinstance(text, NamedText) else (text,)


def _within(file: str | Path | None, run_dir: Path) -> bool:
    """Whether ``file`` (an error's) is ``run_dir`` or inside it."""
    if file is None:
        return False
    p = Path(file)
    return p == run_dir or run_dir in p.parents
