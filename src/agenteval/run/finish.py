"""Finishing a run: its summary computed, stored in ``run.json`` and (by the caller's
renderer) printed.

Shared by every command and API that writes a run (``run``, ``score``, ``rescore``,
``judge``, :class:`~agenteval.run.session.Session`, :func:`~agenteval.evaluation.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console

from agenteval.rundir import RunWriter

if TYPE_CHECKING:  # imported when used: commands start faster without the summary modules
    from agenteval.summary.live import LiveSummary
    from agenteval.summary.model import Summary
    from agenteval.summary.sources import SnapshotIndex

Render = Callable[["Summary", Console], None]
"""How a finished run's summary is shown (the command line passes the terminal report)."""


def live_summary(writer: RunWriter, snapshot: SnapshotIndex | None = None) -> LiveSummary:
    """Count every trial the writer appends from now on (call right after creating it);
    ``snapshot``: the new run's cases snapshot, indexed already (not read again)."""
    # imported on first use, so that importing this module stays light
    from agenteval.summary.live import LiveSummary

    live = LiveSummary(writer.run_dir, writer.header, snapshot)
    writer.observer = live.add
    return live


def finish_run(
    writer: RunWriter,
    console: Console,
    *,
    render: Render | None = None,
    live: LiveSummary | None = None,
) -> dict[str, Any]:
    """Summarise the run, store the summary in run.json and show it with ``render``.

    With ``live`` (fed as trials were appended) the trials are not read back; without it
    (e.g. after ``--resume``) the run directory is summarised from its files. Nothing is
    printed when ``render`` is None or the console is quiet.
    """
    # imported on first use, so that importing this module stays light
    from agenteval.summary.compute import summarize

    writer.flush()  # a buffered writer's last lines, before the run is read back
    summary = live.finish() if live is not None else summarize(writer.run_dir)
    data = summary.model_dump(mode="json")
    writer.finish(data)
    if render is not None and not console.quiet:  # --quiet: nothing is rendered
        render(summary, console)
        console.print(f"run written to {writer.run_dir}", markup=False)
    return data
