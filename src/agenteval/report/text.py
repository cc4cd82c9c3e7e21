"""Untrusted text made inert for Markdown: the one escaping rule every Markdown output uses
(the run summary, the paired and the unpaired gate)."""

from __future__ import annotations

import re

from agenteval.report.terminal import clean

_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")
_MENTION = re.compile(r"@(?=[\w-])")
ZWJ = "\u200d"

__all__ = ["ZWJ", "md"]


def md(text: object, limit: int = 120) -> str:
    """Untrusted text made inert for Markdown/HTML and safe inside a table cell."""
    s = clean(text, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MENTION.sub("@" + ZWJ, s)  # @org/team is shown, but pings nobody
    return _MD_PUNCT.sub(r"\\\1", s)
