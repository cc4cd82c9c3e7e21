"""Network addresses: which hosts only this machine can reach."""

from __future__ import annotations

import ipaddress
import socket

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
