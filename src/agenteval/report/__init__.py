"""Reports: the Summary of a run and every output made from it.

The numbers are computed once (:func:`summarize`); the terminal summary, JSON, HTML,
JUnit XML and Markdown all render the same Summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agenteval._util.lazy import lazy_getattr

if TYPE_CHECKING:
    from agenteval.llm.pricing import PriceTable
    from agenteval.report.junit import write_junit
    from agenteval.report.markdown import write_markdown
    from agenteval.report.terminal import render_terminal
    from agenteval.summary.compute import summarize, summarize_records, write_json
    from agenteval.summary.model import Summary
    from agenteval.summary.sources import load_cases

# Each output is imported on first use: a run that only keeps a live summary (every
# `agenteval run`) must not pay for the Markdown, JUnit and terminal renderers.
_LAZY = {
    "write_junit": "agenteval.report.junit",
    "write_markdown": "agenteval.report.markdown",
    "Summary": "agenteval.summary.model",
    "load_cases": "agenteval.summary.sources",
    "summarize": "agenteval.summary.compute",
    "summarize_records": "agenteval.summary.compute",
    "write_json": "agenteval.summary.compute",
    "render_terminal": "agenteval.report.terminal",
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "Summary",
    "load_cases",
    "render_terminal",
    "summarize",
    "summarize_records",
    "write_html",
    "write_json",
    "write_junit",
    "write_markdown",
]


def write_html(
    run_dir: str | Path, out_path: str | Path, *, prices: PriceTable | None = None
) -> Summary:
    """Write the self-contained HTML report (see :func:`agenteval.report.html.write_html`).

    The HTML module (jinja2) is imported on first use, not by every command.
    """
    # imported on first use, so that importing this module stays light
    from agenteval.report import html

    return html.write_html(run_dir, out_path, prices=prices)
