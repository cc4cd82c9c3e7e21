"""Finishing a run: its summary computed, stored in ``run.json`` and printed.

Shared by every command and API that writes a run (``run``, ``score``, ``rescore``,
``judge``, :class:`~agenteval.run.session.Session`, :func:`~agenteval.evaluate.evaluate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console

from agenteval.rundir import RunWriter

if TYPE_CHECKING:  # imported when used: commands start faster without the report modules
    from agenteval.summary.live import LiveSummary


def live_summary(writer: RunWriter) -> LiveSummary:
    """Count every trial the writer appends from now on (call right after creating it)."""
    from agenteval.summary.live import LiveSummary

    live = LiveSummary(writer.run_dir, writer.header)
    writer.observer = live.add
    return live


def finish_run(
    writer: RunWriter, console: Console, *, show: bool = True, live: LiveSummary | None = None
) -> dict[str, Any]:
    """Summarise the run, store the summary in run.json and print it.

    With ``live`` (fed as trials were appended) the trials are not read back; without it
    (e.g. after ``--resume``) the run directory is summarised from its files. Nothing is
    printed when ``show`` is false or the console is quiet.
    """
    from agenteval.report import summarize

    summary = live.finish() if live is not None else summarize(writer.run_dir)
    data = summary.model_dump(mode="json")
    writer.finish(data)
    if show and not console.quiet:  # --quiet: nothing is printed, so nothing is rendered
        from agenteval.report import render_terminal

        render_terminal(summary, console)
        console.print(f"run written to {writer.run_dir}", markup=False)
    return data
