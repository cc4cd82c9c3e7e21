"""Replayable model calls: a request answered once is answered from the cache after.

:class:`ReplayCache` is the :class:`~agenteval.llm.cache.CacheStore` of request → response
that :class:`~agenteval.llm.http.HttpClient` consults for every JSON ``POST`` it sends
(the OpenAI-compatible adapter, the built-in tool loop, the HTTP/JSON adapter) and the
recording proxy for every model call it forwards (:mod:`agenteval.traces.proxy`).

**The key** (:meth:`ReplayCache.request_key`) is the SHA-256 of a canonical JSON document
(sorted keys, no spaces) holding a ``kind`` (``http`` or ``proxy``), the endpoint *without
its credentials* (:func:`~agenteval._util.secrets.redact_url`: user info and secret query
values removed; ``?api-version=`` stays) and the full request body: model, messages, tools
and every parameter. Before hashing, every secret the client knows (API key, header values,
URL credentials) is replaced by ``[REDACTED]`` in that document, so a rotated key still
hits. Headers are not part of the key, and nothing about the case (its id, its repeat
index) is: two trials sending the same request share one entry (with ``--repeats`` and
``temperature > 0``, every repeat replays the first reply; use ``--cache-mode refresh``
or no cache to sample again).

**An entry** holds the decoded JSON response (passed through the same secret redactor),
the endpoint without credentials, and how long the call took when it was made
(``latency_s``). No header and no request is stored. Only a successful response (2xx, valid
JSON) is stored; a failed call is never replayed.

:class:`CacheSettings` is what a user chooses (a directory and a mode); :func:`as_settings`
reads what ``evaluate(..., cache=...)`` accepts.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenteval._util.secrets import Redactor, redact_url
from agenteval.errors import InputError
from agenteval.llm.cache import CACHE_FORMAT, CacheMode, CacheStore, check_mode

__all__ = [
    "CacheSettings",
    "ReplayCache",
    "Replayed",
    "as_settings",
    "default_replay_dir",
    "use_cache",
]


def default_replay_dir() -> Path:
    """``$XDG_CACHE_HOME/agenteval/calls``, or ``~/.cache/agenteval/calls``: where
    ``--cache`` without a directory keeps model calls."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if base.strip() else Path.home() / ".cache"
    return root / "agenteval" / "calls"


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """A cache directory and its mode (``read-write``, ``read-only``, ``refresh``, ``off``)."""

    directory: Path
    mode: CacheMode = "read-write"

    def __post_init__(self) -> None:
        try:
            check_mode(self.mode)
        except ValueError as e:
            raise InputError(str(e), field="cache_mode") from None

    @property
    def enabled(self) -> bool:
        """False for mode ``off``."""
        return self.mode != "off"

    def replay_cache(self) -> ReplayCache | None:
        """The store for model calls; None when ``off``."""
        return ReplayCache(self.directory, self.mode) if self.enabled else None

    def describe(self) -> dict[str, Any]:
        """``{directory, mode}`` as ``run.json`` records it."""
        return {"directory": str(self.directory), "mode": self.mode}


def as_settings(value: Any) -> CacheSettings | None:
    """What ``evaluate(..., cache=...)`` accepts: None/False (no cache), True (the default
    directory, ``read-write``), a directory (``str`` or ``Path``), or :class:`CacheSettings`."""
    if value is None or value is False:
        return None
    if value is True:
        return CacheSettings(default_replay_dir())
    if isinstance(value, CacheSettings):
        return value if value.enabled else None
    if isinstance(value, str | os.PathLike):
        if not str(value).strip():
            raise InputError("must be a directory path", field="cache")
        return CacheSettings(Path(value))
    raise InputError(
        f"must be None, True, a directory or CacheSettings, got {type(value).__name__}",
        field="cache",
    )


@dataclass(frozen=True, slots=True)
class Replayed:
    """A response served from the cache: the decoded JSON and how long the call took
    when it was made (None when unknown)."""

    data: Any
    latency_s: float | None


def _canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _scrubbed(data: Any, redactor: Redactor) -> Any:
    """``data`` with every secret ``redactor`` knows removed from its strings (keys and
    values, one string at a time: redacting the JSON text could cut an escape in two)."""
    if not redactor.values:
        return data
    if isinstance(data, str):
        return redactor.redact(data)
    if isinstance(data, dict):
        return {_scrubbed(k, redactor): _scrubbed(v, redactor) for k, v in data.items()}
    if isinstance(data, list):
        return [_scrubbed(v, redactor) for v in data]
    return data


class ReplayCache(CacheStore):
    """Model requests → their responses (see the module docstring). Entries are not
    ``fsync``-ed (one per model call: a run would wait on the disk for each); one that a
    crash cut short is unreadable, hence a miss, called again and overwritten."""

    durable = False

    def request_key(self, kind: str, endpoint: str, body: Any, redactor: Redactor) -> str:
        """The key of one request: ``kind``, the endpoint without credentials and the body,
        canonical JSON with every known secret redacted, hashed."""
        doc = {"cache_format": CACHE_FORMAT, "kind": kind, "endpoint": redact_url(endpoint)}
        doc["body"] = body
        text = redactor.redact(_canonical(doc)) if redactor.values else _canonical(doc)
        return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()

    def lookup(self, key: str) -> Replayed | None:
        """The stored response for ``key``; None on a miss (or a mode that does not read)."""
        found = self.get_entry(key)
        if found is None or "response" not in found[0]:
            return None
        entry = found[0]
        latency = entry.get("latency_s")
        if not isinstance(latency, int | float) or isinstance(latency, bool) or latency < 0:
            latency = None
        return Replayed(entry["response"], None if latency is None else float(latency))

    def store(
        self,
        key: str,
        endpoint: str,
        response: Any,
        latency_s: float | None,
        redactor: Redactor,
        **extra: Any,
    ) -> None:
        """Store a successful response under ``key`` (secrets removed; nothing when the mode
        does not write). An unwritable directory is ignored: the call is made again next
        time."""
        if not self.writable:
            return
        entry = {
            "endpoint": redactor.redact(redact_url(endpoint)),
            "latency_s": latency_s,
            "response": _scrubbed(response, redactor),
            **extra,
        }
        try:
            self.put_entry(key, entry)
        except OSError:
            return


def use_cache(agent: Any, cache: ReplayCache | None) -> bool:
    """Hand ``cache`` to ``agent``: to the first of it and the adapters it wraps (``inner``:
    the OTLP receiver, a conversation) with a ``use_cache`` method. False when none has one
    (a Python agent: its model calls do not pass through agenteval)."""
    node = agent
    for _ in range(8):
        use = getattr(node, "use_cache", None)
        if callable(use):
            return bool(use(cache))
        node = getattr(node, "inner", None)
        if node is None:
            return False
    return False
