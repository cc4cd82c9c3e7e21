"""JSON POSTs with retries from a background queue: the alert webhook and the evaluation
export are both one :class:`Poster` (what they post and how many at once differ)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from agenteval._util.say import Say


async def post_json(
    session: Any, url: str, body: bytes, *, attempts: int, first_delay_s: float, max_delay_s: float
) -> bool:
    """POST ``body`` (JSON) to ``url`` on the aiohttp ``session``; True on a 2xx answer.

    A connection error, a timeout or any other status is retried with exponential backoff
    (``first_delay_s``, doubling, at most ``max_delay_s``), ``attempts`` times in all."""
    import aiohttp  # only when a webhook or an export is given

    delay = first_delay_s
    for attempt in range(attempts):
        try:
            async with session.post(
                url, data=body, headers={"Content-Type": "application/json"}
            ) as resp:
                if 200 <= resp.status < 300:
                    return True
        except (aiohttp.ClientError, TimeoutError, OSError):
            pass
        if attempt + 1 < attempts:
            await asyncio.sleep(delay)
            delay = min(delay * 2, max_delay_s)
    return False


class Poster:
    """Items queued without waiting, POSTed from a background task ``batch`` at a time
    (:meth:`body` makes one request's JSON of them), each request retried as
    :func:`post_json` does, ``attempts`` times, then dropped, counted and said
    (:meth:`gave_up`). At most ``max_queued`` items wait; beyond, the oldest are dropped and
    counted. :meth:`close` gives the queue a moment to drain, then stops."""

    batch = 1

    def __init__(
        self,
        url: str,
        say: Say,
        *,
        attempts: int,
        first_delay_s: float,
        max_delay_s: float,
        timeout_s: float,
        max_queued: int,
    ) -> None:
        self.url = url
        self._say = say
        self.attempts = attempts
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self.timeout_s = timeout_s
        self.max_queued = max_queued
        self._queue: list[Any] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.dropped = 0

    def body(self, items: list[Any]) -> bytes:  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def gave_up(self, items: list[Any]) -> str:  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def _enqueue(self, items: list[Any]) -> None:
        self._queue.extend(items)
        over = len(self._queue) - self.max_queued
        if over > 0:
            del self._queue[:over]
            self.dropped += over
        self._wake.set()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        import aiohttp  # the client, only when a webhook or an export is given

        timeout = aiohttp.ClientTimeout(total=self.timeout_s)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                if not self._queue:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                n = self.batch
                items, self._queue = self._queue[:n], self._queue[n:]
                ok = await post_json(
                    session,
                    self.url,
                    self.body(items),
                    attempts=self.attempts,
                    first_delay_s=self.first_delay_s,
                    max_delay_s=self.max_delay_s,
                )
                if ok:
                    self.sent += len(items)
                else:
                    self.dropped += len(items)
                    self._say(self.gave_up(items))

    async def close(self, wait_s: float = 2.0) -> None:
        """Give queued items ``wait_s`` to go out, then stop."""
        if self._task is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while self._queue and loop.time() < deadline:
            await asyncio.sleep(0.05)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
