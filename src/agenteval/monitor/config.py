"""What ``agenteval monitor`` is told: :class:`MonitorConfig` (docs/monitor.md has the
defaults and what each option does)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenteval.monitor.mapping import MapOptions

__all__ = ["MonitorConfig"]


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    """Everything ``agenteval monitor`` is told (docs/monitor.md has the defaults)."""

    out: Path
    window_s: int = 3600
    idle_s: float = 5.0
    max_wait_s: float = 300.0
    max_pending_spans: int = 1_000_000
    max_wal_bytes: int = 1 << 30
    segment_bytes: int = 64 << 20
    segment_s: float = 60.0
    tick_s: float = 0.2
    max_open_windows: int = 16
    """Windows held open at once (each holds three file descriptors and its ids); beyond,
    the least recently written is set aside unfinished (:attr:`Monitor.parked`)."""
    mapping: MapOptions = field(default_factory=MapOptions)
    baseline: Path | None = None
    week_earlier: bool | None = None
    """Gate each window against the same window a week earlier when it is there
    (:mod:`agenteval.monitor.checking`); None: when no ``baseline`` is given."""
    alpha_per_day: float = 0.05
    conversation_idle_s: float = 300.0
    conversation_max_wait_s: float = 1800.0
    settings: dict[str, Any] = field(default_factory=dict)
    replica: str | None = None
    """``--replica NAME``: this monitor writes shard NAME of each window, its own files in
    ``DIR/.monitor/NAME`` (:mod:`agenteval.monitor.windows`)."""

    @property
    def horizon_s(self) -> float:
        """How long done trace ids are remembered: at least 10 minutes, and past the life
        of any log segment that may hold their spans (so a replay after a restart never
        mistakes a scored trace for a new one; the windows' own record is the second
        guard); with ``--group conversation``, past the longest a conversation is held
        too."""
        held = self.conversation_max_wait_s if self.mapping.group == "conversation" else 0.0
        return max(600.0, 2 * (self.max_wait_s + held + self.segment_s + self.idle_s))

    @property
    def close_delay_s(self) -> float:
        """How long after its end a window closes."""
        return self.max_wait_s + self.idle_s + 2 * self.tick_s
