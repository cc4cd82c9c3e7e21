"""Our processor on OpenTelemetry's global provider, for traces and logs alike.

The application's own provider is kept when it takes processors (ours is added beside its
own); when none is set (the API's proxy provider), an SDK provider is installed with ours
on it. A provider we added to is marked, so the processor is added once per process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["attach_processor"]


def attach_processor(
    *,
    lock: threading.Lock,
    mark: str,
    current: Callable[[], Any],
    install: Callable[[Any], None],
    proxy_type: type,
    new_provider: Callable[[], Any],
    add: str,
    processor: Callable[[], Any],
) -> bool:
    """Add ``processor()`` to the global provider (``current()``) with its method ``add``,
    or install ``new_provider()`` carrying it when the global one is a ``proxy_type``.
    False when the provider takes no processor, or another was installed meanwhile."""
    with lock:
        provider = current()
        if getattr(provider, mark, False):
            return True
        if isinstance(provider, proxy_type):
            provider = new_provider()
            getattr(provider, add)(processor())
            setattr(provider, mark, True)
            install(provider)
            return current() is provider
        if callable(getattr(provider, add, None)):
            getattr(provider, add)(processor())
            setattr(provider, mark, True)
            return True
        return False
