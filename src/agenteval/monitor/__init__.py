"""``agenteval monitor``: score a live OpenTelemetry trace stream into windowed runs.

- :mod:`agenteval.monitor.wal`: the write-ahead log (durable before a request's 200);
- :mod:`agenteval.monitor.pending`: traces in flight, and when one is done;
- :mod:`agenteval.monitor.mapping`: a done trace → cases and trials (as ``import-traces``);
- :mod:`agenteval.monitor.windows`: each window a run directory, written exactly once;
- :mod:`agenteval.monitor.conversations`: ``--group conversation``, held until done;
- :mod:`agenteval.monitor.judging`: the LLM judge's sample, budget and cache;
- :mod:`agenteval.monitor.staging`: done traces → items to write (conversations, judge);
- :mod:`agenteval.monitor.writing`: items → their windows, in the scoring thread;
- :mod:`agenteval.monitor.replay`: spans into flight, from a request or the log on restart;
- :mod:`agenteval.monitor.service`: the core tying them together;
- :mod:`agenteval.monitor.http`: the OTLP/HTTP endpoint and ``/metrics``;
- :mod:`agenteval.monitor.metrics`: the Prometheus text format;
- :mod:`agenteval.monitor.checking`: which reference a closed window is gated against;
- :mod:`agenteval.monitor.alerts`: the gate at the per-window level, the webhook.

docs/monitor.md is the user's guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval._util.lazy import lazy_getattr

if TYPE_CHECKING:
    from agenteval.monitor.config import MonitorConfig
    from agenteval.monitor.mapping import MapOptions
    from agenteval.monitor.service import Monitor

# Imported on first use: a process that needs only the log (agenteval.monitor.wal) does not
# pay for the mapping, the scorers and the gate (a second of CPU).
_LAZY = {
    "MapOptions": "agenteval.monitor.mapping",
    "Monitor": "agenteval.monitor.service",
    "MonitorConfig": "agenteval.monitor.config",
}

__getattr__ = lazy_getattr(globals(), _LAZY)

__all__ = ["MapOptions", "Monitor", "MonitorConfig"]
