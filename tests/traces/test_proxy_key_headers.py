"""docs/agents/proxy.md, "Keys and failures": "the values of the ``Authorization``,
``api-key`` and ``x-api-key`` headers are removed from everything recorded" — in any
case of the header name, wherever the agent echoes the key (a tool output, a message).
test_proxy_server.py checks ``api-key`` alone."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from agenteval.testing import fake_openai_server
from agenteval.traces.proxy import RecordingProxy

KEY = "kx7Q2mZpL9vR4tW8yB1nC6dF3gH5jK0s"


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Authorization", f"Bearer {KEY}"),
        ("authorization", f"bearer {KEY}"),
        ("API-Key", KEY),
        ("x-api-key", KEY),
        ("X-API-KEY", KEY),
    ],
)
def test_a_key_header_value_is_recorded_nowhere(header: str, value: str) -> None:
    async def main() -> str:
        async with fake_openai_server() as up, aiohttp.ClientSession() as http:
            proxy = await RecordingProxy(up.base_url).start()
            fn = {"name": "f", "arguments": f'{{"k": "{KEY}"}}'}
            said = {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "type": "function", "function": fn}],
            }
            answer = {"role": "tool", "tool_call_id": "c1", "content": f"Error: bad key {KEY}"}
            user = {"role": "user", "content": f"my key is {KEY} [[call:g]]"}
            body = {"model": "m", "messages": [user, said, answer]}
            try:
                with proxy.trial() as t:
                    url = f"{t.base_url}/chat/completions"
                    async with http.post(url, json=body, headers={header: value}) as r:
                        assert r.status == 200
                    assert len(t.calls) == 1
                    return repr(t.calls)
            finally:
                await proxy.close()

    recorded = asyncio.run(asyncio.wait_for(main(), 30))
    assert "[REDACTED]" in recorded
    assert KEY not in recorded and KEY[:12] not in recorded
