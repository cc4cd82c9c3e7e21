"""Running a monitor until it is told to stop: the server, the tick, the webhook.

:func:`serve` opens the :class:`~agenteval.monitor.service.Monitor` (lock, replay), binds
and serves, calls ``ready(endpoint)`` once requests are answered (the command line prints
``listening on http://HOST:PORT``; with ``export_otlp`` or ``export_phoenix`` each score
is sent there, :mod:`agenteval.monitor.export`), then ticks every ``tick_s`` until ``stop`` is set.
Stopping closes the server first (no request is acknowledged after), then the monitor:
traces still in flight stay in the write-ahead log for the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from agenteval._util.say import Say, log_warning
from agenteval.monitor.alerts import Webhook
from agenteval.monitor.export import EvaluationExport
from agenteval.monitor.http import MonitorServer, bind
from agenteval.monitor.service import Monitor

__all__ = ["serve"]


async def serve(
    monitor: Monitor,
    host: str,
    port: int,
    stop: asyncio.Event,
    *,
    allow_hosts: tuple[str, ...] = (),
    webhook: str | None = None,
    export_otlp: str | None = None,
    export_phoenix: str | None = None,
    ready: Callable[[str], None] | None = None,
    say: Say = log_warning,
) -> None:
    """Serve ``monitor`` on ``host:port`` until ``stop`` is set (module docstring)."""
    sock = bind(host, port)  # before the lock and the replay: a port in use is exit 2 at once
    try:
        monitor.open()
    except BaseException:
        sock.close()
        raise
    hook = Webhook(webhook, say) if webhook else None
    if hook is not None:
        monitor.on_alert = hook.send
    export = EvaluationExport(export_otlp, say) if export_otlp else None
    if export_phoenix:
        export = EvaluationExport(export_phoenix, say, phoenix=True)
    if export is not None:
        monitor.on_scored = export.add
        monitor.metrics.gauges["evaluations_exported"] = lambda: export.sent
        monitor.metrics.gauges["evaluations_export_dropped"] = lambda: export.dropped
    server = MonitorServer(monitor, sock, allow_hosts=allow_hosts, log=say)
    try:
        monitor.reopen_unfinished()
        await server.start()
        if ready is not None:
            ready(server.endpoint)
        failing = False
        while not stop.is_set():
            try:
                await monitor.tick()
                failing = False
            except Exception as e:  # a bug must not stop acknowledging: said once, retried
                if not failing:
                    say(f"agenteval monitor: scoring failed ({type(e).__name__}: {e}); retrying")
                failing = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), monitor.config.tick_s)
    finally:
        await server.close()
        if hook is not None:
            await hook.close()
        if export is not None:
            await export.close()
        await monitor.close()
