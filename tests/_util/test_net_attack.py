"""Attack on the one-line log of unreadable requests (:func:`request_error_log`): the
commonest bytes that are not HTTP are a TLS handshake (an exporter given ``https://`` for a
plain-HTTP receiver) and a port scanner's garbage. aiohttp logs a bad method on a
connection's first request at debug level; the receiver answered 400 and said nothing, and
did not count the refusal: the exporter's spans vanished without a word."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agenteval.traces.receiver import OtlpReceiver

TLS_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32)) + b"\x00" * 40
GARBAGE = b"\x1b[2J\x1b[31mPWNED\x07 /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.mark.parametrize("raw", [TLS_HELLO, GARBAGE], ids=["tls-handshake", "bad-method"])
def test_a_bad_first_request_line_is_a_counted_400_in_one_line(raw: bytes, capfd: Any) -> None:
    logged: list[str] = []

    async def main() -> tuple[bytes, int]:
        r = OtlpReceiver("127.0.0.1", 0, log=logged.append)
        await r.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", r.port)
        writer.write(raw)
        answer = await reader.read(200)
        writer.close()
        await r.close()
        return answer, r.stats.malformed

    answer, malformed = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400")
    assert malformed == 1
    assert len(logged) == 1 and "HTTP 400: request not read:" in logged[0], logged
    assert all(c == "\n" or 32 <= ord(c) < 127 for c in logged[0])  # no escape reaches a tty
    if raw is TLS_HELLO:
        assert "HTTPS" in logged[0]  # what to fix: the client speaks https to plain HTTP
    assert "Traceback" not in capfd.readouterr().err
