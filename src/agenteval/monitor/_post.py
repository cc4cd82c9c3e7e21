"""One JSON POST with retries, shared by the alert webhook and the evaluation export."""

from __future__ import annotations

import asyncio
from typing import Any


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
