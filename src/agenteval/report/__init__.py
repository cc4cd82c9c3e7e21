"""Reports: the Summary of a run and every output made from it.

The numbers are computed once (:func:`summarize`); the terminal summary, JSON, HTML,
JUnit XML and Markdown all render the same Summary.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agenteval.pricing import PriceTable
    from agenteval.report.junit import write_junit
    from agenteval.report.markdown import write_markdown
    from agenteval.report.model import Summary
    from agenteval.report.sources import load_cases
    from agenteval.report.summary import summarize, summarize_records, write_json
    from agenteval.report.terminal import render_terminal

# Each output is imported on first use: a run that only keeps a live summary (every
# `agenteval run`) must not pay for the Markdown, JUnit and terminal renderers.
_LAZY = {
    "write_junit": "junit",
    "write_markdown": "markdown",
    "Summary": "model",
    "load_cases": "sources",
    "summarize": "summary",
    "summarize_records": "summary",
    "write_json": "summary",
    "render_terminal": "terminal",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agenteval.report' has no attribute {name!r}")
    return getattr(import_module(f"agenteval.report.{module}"), name)


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
    from agenteval.report import html

    return html.write_html(run_dir, out_path, prices=prices)
