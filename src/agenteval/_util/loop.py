"""The event loops agenteval makes: uvloop's when it is installed, asyncio's otherwise.

Every loop agenteval creates itself (a run, a worker process, the fake server) comes from
:func:`new_event_loop`, so that they all behave alike; a loop the caller already runs
(:func:`agenteval.aevaluate`) is used as it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _uvloop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop  # an optional dependency (agenteval[fast])
    except ImportError:
        return None
    return uvloop.new_event_loop


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop: uvloop's when installed (``agenteval[fast]``), else asyncio's."""
    factory = _uvloop_factory()
    return factory() if factory is not None else asyncio.new_event_loop()


def run_event_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on a fresh loop (uvloop's when installed), closed after:
    :func:`asyncio.run` with the loop of :func:`new_event_loop`."""
    factory = _uvloop_factory()
    if factory is None:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro)
