"""The recording proxy's replay cache: a model call answered once is answered from disk after.

With a :class:`~agenteval.llm.replay.ReplayCache` (``agenteval proxy --cache``, or
``run --cache`` with ``--capture-proxy``), every ``POST`` the proxy reads (chat completions,
Responses API) is looked up before it is forwarded. The key is the upstream without its
credentials, the path and query after ``/v1`` and the request body (its JSON, or the
SHA-256 of bytes that are not JSON), with the values of the request's ``Authorization``,
``api-key`` and ``x-api-key`` headers redacted (:meth:`ReplayCache.request_key`): any
agent, in any language, sending the same request gets the same reply, whatever its key.

A hit is answered at once with the stored status, ``Content-Type`` and body (a stream is
replayed as one body holding every event), nothing is sent upstream, and the call is
recorded as usual with ``cached: true``. A miss is forwarded; when the upstream answered
2xx and the response arrived whole, its body (decoded from gzip or deflate; another
encoding is not stored) is stored with the request's key values removed. No header other
than ``Content-Type`` is stored.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import dataclass
from typing import Any

from agenteval._util.secrets import Redactor
from agenteval.llm.replay import ReplayCache

__all__ = ["ProxyHit", "lookup", "store"]

_MAX_STORED = 64 << 20


@dataclass(frozen=True, slots=True)
class ProxyHit:
    """A stored response: status, content type, body bytes, the original call's time."""

    status: int
    content_type: str
    body: bytes
    latency_s: float | None


def _body_doc(body: bytes) -> Any:
    try:
        return {"json": json.loads(body)}
    except (ValueError, RecursionError):
        return {"sha256": hashlib.sha256(body).hexdigest()}


def key_of(cache: ReplayCache, endpoint: str, body: bytes, keys: list[str]) -> str:
    """The cache key of a request to ``endpoint`` (upstream URL with path and query)."""
    return cache.request_key("proxy", endpoint, _body_doc(body), Redactor(keys))


def lookup(cache: ReplayCache, key: str) -> ProxyHit | None:
    """The stored response for ``key``, or None (a miss, an unusable entry, a mode that
    does not read)."""
    found = cache.lookup(key)
    data = found.data if found is not None else None
    if not isinstance(data, dict):
        return None
    status, ctype, text = data.get("status"), data.get("content_type"), data.get("body")
    if not (isinstance(status, int) and isinstance(ctype, str) and isinstance(text, str)):
        return None
    try:
        raw = base64.b64decode(text) if data.get("base64") else text.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return None
    assert found is not None
    return ProxyHit(status, ctype, raw, found.latency_s)


def _decoded(body: bytes, encoding: str) -> bytes | None:
    enc = encoding.strip().lower()
    if enc in ("", "identity"):
        return body
    try:
        if enc in ("gzip", "x-gzip"):
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if enc == "deflate":
            try:
                return zlib.decompress(body)
            except zlib.error:
                return zlib.decompress(body, -zlib.MAX_WBITS)
    except zlib.error:
        return None
    return None


def store(
    cache: ReplayCache,
    key: str,
    endpoint: str,
    status: int,
    content_type: str,
    encoding: str,
    chunks: list[bytes],
    latency_s: float,
    keys: list[str],
) -> None:
    """Store a whole 2xx response (module docstring); nothing when it cannot be decoded
    or is larger than 64 MiB."""
    if not cache.writable or not 200 <= status < 300:
        return
    body = _decoded(b"".join(chunks), encoding)
    if body is None or len(body) > _MAX_STORED:
        return
    try:  # the key values are removed from the text by ``store``
        text = body.decode("utf-8")
        doc: dict[str, Any] = {"status": status, "content_type": content_type, "body": text}
    except UnicodeDecodeError:
        doc = {"status": status, "content_type": content_type, "base64": True}
        doc["body"] = base64.b64encode(body).decode("ascii")
    cache.store(key, endpoint, doc, latency_s, Redactor(keys))
