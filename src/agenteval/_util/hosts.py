"""Which ``Host`` header a local server answers (against DNS rebinding).

A web page on ``evil.example`` can make the browser send requests to ``127.0.0.1`` by
pointing its own name there (DNS rebinding); the browser then treats the answers as
``evil.example``'s and lets the page read them. The request still says
``Host: evil.example``. So the viewer, the OTLP receiver and the recording proxy answer
only a ``Host`` that names this machine as the client meant it:

- ``localhost`` and any ``*.localhost`` name (RFC 6761: they never leave the machine);
- an IP address literal (``127.0.0.1``, ``[::1]``, ``192.168.1.5``): a rebinding page's
  requests carry its *name*, never an address;
- the address the server listens on, and every name given with ``--allow-host``
  (compared without case and without a trailing dot).

The port is not compared. A request without a ``Host`` header (HTTP/1.0) is answered: a
browser always sends one. Anything else is answered ``421 Misdirected Request``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

__all__ = ["HostCheck", "host_name"]


def host_name(header: str) -> str:
    """The name or address of a ``Host`` header value, without port, brackets, case or
    trailing dot (``[::1]:80`` → ``::1``, ``Example.COM.:8`` → ``example.com``)."""
    h = header.strip().lower()
    if h.startswith("["):
        end = h.find("]")
        return h[1:end] if end > 0 else h
    if h.count(":") == 1:
        h = h.partition(":")[0]
    return h.rstrip(".")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """The ``Host`` values one server answers (module docstring)."""

    __slots__ = ("names",)

    def __init__(self, bound: str, allow: Iterable[str] = ()) -> None:
        self.names = frozenset(host_name(n) for n in (bound, *allow) if n)

    def allows(self, header: str | None) -> bool:
        """Whether a request with this ``Host`` header value is answered."""
        if header is None:
            return True
        name = host_name(header)
        return (
            name == "localhost" or name.endswith(".localhost") or name in self.names or _is_ip(name)
        )

    def refusal(self, header: str) -> str:
        """The one-line reason a refused request is given."""
        shown = header.encode("ascii", "backslashreplace").decode()[:200]
        return (
            f"Host {shown!r} is not this server (a DNS-rebinding page?); use"
            " http://127.0.0.1:PORT or http://localhost:PORT, or start it with"
            " --allow-host NAME"
        )
