"""The monitor's small durable records beside the write-ahead log, in ``DIR/.monitor``.

- ``done-<start>.log``: the ids of traces scored (one a line, appended and fsync'd after
  their trials are durable in their windows), one file per ``bucket_s`` of processing
  time (the monitor's horizon for done ids, :attr:`MonitorConfig.horizon_s`). Files more
  than two buckets old are deleted; the ids in the others are remembered at start-up, so
  a span of a trace scored before a restart is late, not a new trace.
- ``checked.log``: the windows gated against the baseline (one name a line), so that a
  restart does not gate (and alert on) a window twice.

A torn last line (the process died mid-write) is ignored when read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["Journal"]

_KEEP_BUCKETS = 2


def _lines(path: Path) -> list[str]:
    """The complete lines of a file (a torn last one left out); [] when there is none."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return data[: data.rfind(b"\n") + 1].decode("utf-8", "replace").split()


def append_lines(path: Path, lines: Iterable[str]) -> None:
    """Append ``lines`` to ``path`` and fsync it."""
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(f"{line}\n" for line in lines))
        f.flush()
        os.fsync(f.fileno())


class Journal:
    """The done and checked records of one monitor directory (module docstring)."""

    def __init__(self, state: Path, bucket_s: int) -> None:
        self.state = state
        self.bucket_s = bucket_s
        self.checked: set[str] = set(_lines(state / "checked.log"))

    def _stamp(self, p: Path) -> int | None:
        stamp = p.stem.removeprefix("done-")
        return int(stamp) if stamp.isdigit() else None

    def _forget_before(self, now: float) -> None:
        for p in self.state.glob("done-*.log"):
            stamp = self._stamp(p)
            if stamp is not None and now - stamp > _KEEP_BUCKETS * self.bucket_s:
                p.unlink()

    def done_ids(self, now: float) -> list[str]:
        """The trace ids recorded done in the files kept (older files deleted)."""
        self._forget_before(now)
        return [tid for p in sorted(self.state.glob("done-*.log")) for tid in _lines(p)]

    def add_done(self, ids: Iterable[str], now: float) -> None:
        """Record ``ids`` done (durably, before returning)."""
        start = int(now // self.bucket_s) * self.bucket_s
        path = self.state / f"done-{start}.log"
        if not path.exists():  # a new window of time: forget the files past the horizon
            self._forget_before(now)
        append_lines(path, ids)

    def add_checked(self, name: str) -> None:
        append_lines(self.state / "checked.log", [name])
        self.checked.add(name)
