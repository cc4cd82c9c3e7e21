"""Which requests the recording proxy forwards, and where (:mod:`agenteval.traces.proxy`).

The upstream must be an ``http(s)://host`` base URL (:func:`check_upstream`). A request's
path after ``/v1`` goes to the upstream's base, as sent (percent-encoded); a path that
could leave that base (a ``.`` or ``..`` segment at any level of percent-decoding, an
encoded slash or backslash) is not forwarded (:func:`raw_rest` gives None). The
hop-by-hop headers (:data:`HOP_HEADERS`) and ``Host`` are not forwarded either way.
``chat/completions`` and ``responses`` are the APIs read (:func:`api_of`).
"""

from __future__ import annotations

from urllib.parse import unquote

from yarl import URL

from agenteval._util.secrets import redact_url
from agenteval.errors import InputError

HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    }
)
"""Headers a proxy does not forward (RFC 9110 §7.6.1), and ``Host``."""


def check_upstream(url: str) -> str:
    """``url`` when it is an ``http(s)://host...`` base URL; InputError otherwise."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise InputError(
            f"the upstream must be an http(s) base URL such as https://api.openai.com/v1,"
            f" got {redact_url(url)!r}",
            field="capture_proxy",
        )
    return url


def api_of(rest: str) -> str:
    """``chat``, ``responses`` or ``other``: which API the path ``rest`` is."""
    path = rest.split("?")[0].rstrip("/")
    if path.endswith("chat/completions"):
        return "chat"
    if path == "responses" or path.endswith("/responses"):
        return "responses"
    return "other"


def raw_rest(raw_path: str, skip: int) -> str | None:
    """The part of the request's raw (still percent-encoded) path after its first
    ``skip`` segments and ``v1`` (``/t/TOKEN/v1/chat/completions`` → ``chat/completions``),
    or None when a segment is ``.`` or ``..`` at any level of percent-decoding, or holds
    an encoded slash or backslash: such a path could leave the upstream's base path."""
    path = raw_path.split("?", 1)[0]
    parts = path.split("/")[1 + skip :]  # after "", "t", TOKEN, "v1" (or "", "v1")
    for seg in parts:
        s, seen = seg, set()
        while s not in seen:  # every level of encoding: %252e -> %2e -> .
            seen.add(s)
            if s in (".", "..") or "/" in s or "\\" in s:
                return None
            s = unquote(s)
    return "/".join(parts)
