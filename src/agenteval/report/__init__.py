"""Reports: the Summary of a run and every output made from it.

The numbers are computed once (:func:`summarize`); the terminal summary, JSON, HTML,
JUnit XML and Markdown all render the same Summary.
"""

from __future__ import annotations

from agenteval.report.html import write_html
from agenteval.report.junit import write_junit
from agenteval.report.markdown import write_markdown
from agenteval.report.model import Summary
from agenteval.report.sources import load_cases
from agenteval.report.summary import summarize, summarize_records, write_json
from agenteval.report.terminal import render_terminal

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
