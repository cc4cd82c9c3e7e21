"""HTTP transport for agents and judges: JSON over one pooled session, every retry recorded.

:class:`HttpClient` sends JSON ``POST`` requests over a single ``aiohttp.ClientSession``
(keep-alive, at most ``limit`` open connections) and retries what is worth retrying:

============================================  ================  =========================
what happened                                 retry reason      cause once retries run out
============================================  ================  =========================
HTTP 429                                      ``rate_limit``    ``rate_limited``
HTTP 5xx                                      ``server_error``  ``server_error``
no complete response within the request       ``timeout``       ``timeout``
timeout (``RetryPolicy.request_timeout_s``)
connection refused / reset / closed, server   ``connection``    ``connection``
disconnected, body cut off mid-transfer
============================================  ================  =========================

Any other 4xx fails at once with cause ``http_error``; a 2xx body that is not JSON (or was
truncated into invalid JSON) fails at once with cause ``malformed_response``. Failures are
raised as :class:`~agenteval.llm.recorder.AgentFailure`.

Waits: exponential back-off with *full jitter*, ``uniform(0, min(cap_s, base_s * 2**n))``
before retry ``n`` (0-based); when the response carries ``Retry-After`` (seconds, or an
HTTP date) the wait is exactly that, capped at ``max_retry_after_s``. Each retry appends a
:class:`~agenteval.trials.trial.Retry` to the trial's recorder *before* the wait, and the time
spent inside each attempt (never the waits) is added to ``Recorder.active_s``. There are
no other, hidden retries: aiohttp makes none. Every message and detail passes through the
client's :class:`~agenteval._util.secrets.Redactor`, so secrets never appear in them.

**Replay cache**: with ``cache`` (a :class:`~agenteval.llm.replay.ReplayCache`),
:meth:`HttpClient.post_json_cached` first looks the request up (the key: endpoint without
credentials and the body, :mod:`agenteval.llm.replay`); a hit is returned without any
network call, retry or time added to ``active_s``; a miss is sent as above and, when it
succeeded, stored (as the cache's mode allows).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from time import perf_counter
from typing import TYPE_CHECKING, Any

import aiohttp
from yarl import URL

from agenteval._util.secrets import PUBLIC_HEADERS, Redactor, url_secrets
from agenteval._version import __version__
from agenteval.llm.recorder import AgentFailure, Recorder
from agenteval.trials.trial import Retry

if TYPE_CHECKING:
    from agenteval.llm.replay import ReplayCache, Replayed

_SHORT_BODY = 200
_MAX_URLS = 64
_MAX_EXPONENT = 60


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How requests are retried and bounded.

    ``max_retries`` retries after the first attempt (so at most ``max_retries + 1``
    requests); ``base_s``/``cap_s`` shape the jittered exponential back-off;
    ``request_timeout_s`` bounds one attempt, including any wait for a free pooled connection
    (``None``: no per-request limit, the runner's per-trial timeout still applies);
    ``max_retry_after_s`` caps a server's ``Retry-After``.
    """

    max_retries: int = 4
    base_s: float = 0.5
    cap_s: float = 30.0
    request_timeout_s: float | None = None
    max_retry_after_s: float = 60.0

    def backoff_s(self, retry_index: int, rng: random.Random) -> float:
        """Full-jitter wait before retry ``retry_index`` (0-based): uniform in [0, bound]."""
        bound = min(self.cap_s, self.base_s * 2 ** min(retry_index, _MAX_EXPONENT))
        return rng.uniform(0.0, max(bound, 0.0))


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header value, or ``None`` when unusable.

    Accepts a non-negative number of seconds (fractions allowed) or an HTTP date (a date in
    the past gives 0). ``now`` defaults to the current UTC time.
    """
    if value is None:
        return None
    text = value.strip()
    try:
        secs = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        secs = (when - (now or datetime.now(UTC))).total_seconds()
        return max(secs, 0.0)
    if not math.isfinite(secs) or secs < 0:
        return None
    return secs


class _Retryable(Exception):
    def __init__(self, reason: str, cause: str, detail: str, retry_after: float | None) -> None:
        super().__init__(detail)
        self.reason = reason
        self.cause = cause
        self.detail = detail
        self.retry_after = retry_after


def _parse_url(url: str) -> URL | str:
    """``url`` parsed once (aiohttp would parse the string on every request); a string
    yarl cannot parse is kept, so that the request fails as aiohttp reports it."""
    try:
        return URL(url)
    except (TypeError, ValueError):
        return url


def _short(raw: bytes) -> str:
    text = " ".join(raw[: _SHORT_BODY * 4].decode("utf-8", errors="replace").split())
    return text if len(text) <= _SHORT_BODY else text[:_SHORT_BODY] + "..."


class HttpClient:
    """JSON-over-HTTP with recorded retries (see the module docstring for the rules).

    ``headers`` are sent with every request; the value of every header not on
    :data:`~agenteval._util.secrets.PUBLIC_HEADERS`, every value in ``secrets`` and the
    credentials of every URL posted to (user info, secret query parameters) are removed
    from all messages. ``rng`` drives the jitter (pass a seeded ``random.Random`` for
    reproducible waits). Use ``async with HttpClient(...)`` or call :meth:`start` and
    :meth:`close`; :meth:`post_json` starts the session on first use.
    """

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        limit: int = 100,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str] = (),
        rng: random.Random | None = None,
        cache: ReplayCache | None = None,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.cache = cache
        """The replay cache :meth:`post_json_cached` consults (None: none)."""
        self._limit = limit
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"agenteval/{__version__}",
        }
        for name, value in (headers or {}).items():  # names are case-insensitive
            for same in [k for k in self._headers if k.lower() == name.lower()]:
                del self._headers[same]
            self._headers[name] = value
        header_secrets = [v for k, v in self._headers.items() if k.lower() not in PUBLIC_HEADERS]
        # "Bearer sk-..." / "Basic ...": the credential alone too (a reply may quote it)
        header_secrets += [v.split(None, 1)[1] for v in header_secrets if len(v.split()) == 2]
        self.redactor = Redactor([*secrets, *header_secrets])
        self._rng = rng or random.Random()
        self._session: aiohttp.ClientSession | None = None
        self._urls: dict[str, URL | str] = {}

    async def start(self) -> aiohttp.ClientSession:
        """Open the session (idempotent) and return it."""
        if self._session is None or self._session.closed:
            # Configured by measurement (docs/performance.md): no cookie jar (an API call
            # has no use for one), no automatic Accept-Encoding (responses come
            # uncompressed; one that is compressed anyway is still decoded), a fixed
            # User-Agent instead of aiohttp's per-request one, URLs parsed once per URL
            # rather than per request. ~10 % less CPU per request than the defaults.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit),
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=self.policy.request_timeout_s),
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=("User-Agent", "Accept-Encoding"),
            )
        return self._session

    async def close(self) -> None:
        """Close the session and its connections (idempotent)."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> HttpClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def post_json_cached(
        self, url: str, body: Mapping[str, Any], rec: Recorder
    ) -> tuple[Any, Replayed | None]:
        """:meth:`post_json` through the replay cache: ``(response, None)`` after a real
        call, ``(response, Replayed)`` when the cache answered (no request was sent). The
        caller records the hit on the trial (it knows the model and the tokens)."""
        cache = self.cache
        if cache is None:
            return await self.post_json(url, body, rec), None
        self._target(url)  # the URL's credentials join the redactor before the key is made
        key = cache.request_key("http", url, body, self.redactor)
        hit = cache.lookup(key)
        if hit is not None:
            return hit.data, hit
        t0 = perf_counter()
        data = await self.post_json(url, body, rec)
        cache.store(key, url, data, perf_counter() - t0, self.redactor)
        return data, None

    async def post_json(self, url: str, body: Mapping[str, Any], rec: Recorder) -> Any:
        """POST ``body`` as JSON to ``url`` and return the decoded JSON response.

        Retries, waits and failures follow the module docstring; every retry is appended
        to ``rec.retries`` and time inside requests is added to ``rec.active_s``. When
        ``rec.trace`` is set, every attempt carries its ``traceparent`` header.
        """
        session = self._session if self._session is not None else await self.start()
        data = json.dumps(body).encode()
        target = self._target(url)
        retry_index = 0
        while True:
            try:
                return await self._attempt(session, target, data, rec)
            except _Retryable as r:
                if retry_index >= self.policy.max_retries:
                    tries = "retry" if retry_index == 1 else "retries"
                    msg = f"{r.detail} (gave up after {retry_index} {tries})"
                    raise AgentFailure(r.cause, self.redactor.redact(msg)) from None
                if r.retry_after is not None:
                    wait = min(r.retry_after, self.policy.max_retry_after_s)
                else:
                    wait = self.policy.backoff_s(retry_index, self._rng)
                rec.retries.append(
                    Retry(reason=r.reason, wait_s=wait, detail=self.redactor.redact(r.detail))
                )
                retry_index += 1
                if wait > 0:
                    await asyncio.sleep(wait)

    def _target(self, url: str) -> URL | str:
        """``url`` parsed (once per URL), its credentials added to the redactor."""
        target = self._urls.get(url)
        if target is None:
            if len(self._urls) >= _MAX_URLS:
                self._urls.clear()
            target = self._urls[url] = _parse_url(url)
            found = url_secrets(url)
            if found:
                self.redactor = self.redactor.with_values(found)
        return target

    async def _attempt(
        self, session: aiohttp.ClientSession, url: URL | str, data: bytes, rec: Recorder
    ) -> Any:
        t0 = perf_counter()
        try:
            trace = rec.trace  # the trial's traceparent, the same on every retry
            headers = {"traceparent": trace.traceparent} if trace is not None else None
            async with session.post(url, data=data, headers=headers) as resp:
                raw = await resp.read()
                status = resp.status
                if 200 <= status < 300:
                    try:
                        return json.loads(raw)
                    except ValueError:
                        raise AgentFailure(
                            "malformed_response",
                            self.redactor.redact(
                                f"HTTP {status} response is not valid JSON: {_short(raw)!r}"
                            ),
                        ) from None
                detail = f"HTTP {status}: {_short(raw)}" if raw else f"HTTP {status}"
                if status == 429 or status >= 500:
                    reason, cause = (
                        ("rate_limit", "rate_limited") if status == 429 else ("server_error",) * 2
                    )
                    after = parse_retry_after(resp.headers.get("Retry-After"))
                    raise _Retryable(reason, cause, detail, after)
                raise AgentFailure("http_error", self.redactor.redact(detail))
        except TimeoutError:
            limit = self.policy.request_timeout_s
            raise _Retryable("timeout", "timeout", f"no response within {limit}s", None) from None
        except aiohttp.InvalidURL as e:
            msg = f"invalid URL {e}"
            raise AgentFailure("connection", self.redactor.redact(msg)) from None
        except aiohttp.ClientError as e:
            detail = f"{type(e).__name__}: {e}".rstrip(": ")
            raise _Retryable("connection", "connection", detail, None) from None
        finally:
            rec.active_s += perf_counter() - t0
