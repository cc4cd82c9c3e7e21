"""Network addresses (which hosts only this machine can reach, listening sockets) and the
one-line log of requests a local server could not read."""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from collections.abc import Callable

from agenteval.errors import InputError


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1); False for any
    other name or address, and for text that is neither (``""``, ``"[::1]"``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int, *, field: str, backlog: int = 128) -> socket.socket:
    """A non-blocking listening TCP socket on ``host:port`` (port 0: any free one).

    InputError naming ``field`` (the setting that gave the address) when the host does not
    resolve or the address cannot be bound."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        raise InputError(f"cannot resolve {host!r} ({e})", field=field) from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
        sock.listen(backlog)
    except OSError as e:
        sock.close()
        raise InputError(
            f"cannot listen on {host}:{port} ({e.strerror or e})", field=field
        ) from None
    sock.setblocking(False)
    return sock


RequestError = Callable[[int, str], object]
"""Told of a request the server could not read or handle: (HTTP status, one line)."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _OneLine(logging.Handler):
    def __init__(self, tell: RequestError) -> None:
        super().__init__(logging.DEBUG)
        self._tell = tell

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        if record.levelno < logging.WARNING and (
            exc is None or not record.getMessage().startswith("Error handling request")
        ):
            return  # aiohttp's debug notes (a client that went away); not a refusal
        status = getattr(exc, "code", 500)
        status = status if isinstance(status, int) and 400 <= status < 600 else 500
        why = str(getattr(exc, "message", "") or exc or record.getMessage())
        why = why.strip().splitlines()[0].rstrip(":") if why.strip() else type(exc).__name__
        why = why.encode("ascii", "backslashreplace").decode()
        why = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", why)[:200]  # no tty escapes
        kind = "request not read" if status < 500 else f"request failed ({type(exc).__name__})"
        self._tell(status, f"{kind}: {why}")


def request_error_log(name: str, tell: RequestError) -> logging.Logger:
    """A logger for aiohttp's ``AppRunner(logger=...)``: each "Error handling request"
    record (a malformed request line, a bad ``Content-Length`` or chunk size, bytes that
    are not HTTP: any client can send them; a TLS handshake or a bad method on a
    connection's first request too, which aiohttp logs at debug level) reaches ``tell``
    as one line such as ``request not read: Invalid character in Content-Length``, never
    as aiohttp's traceback on stderr. The logger is not registered with :mod:`logging` (no global
    state): records go to ``tell`` only."""
    log = logging.Logger(name)
    log.propagate = False
    log.addHandler(_OneLine(tell))
    return log
