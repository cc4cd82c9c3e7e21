"""Keeping the garbage collector off the objects that exist before a long loop starts."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the objects that exist before a loop (modules, classes, the caller's data) out
    of the cyclic garbage collector's scans while the loop (a run, a rescore) lasts, and
    put them back after.

    Without this, every full collection during a run walks the whole interpreter heap:
    measured at 20-30 % of agenteval's own CPU per trial (docs/performance.md). Nothing is
    changed when something else already froze objects (``gc.get_freeze_count()``), so a
    caller's own use of :func:`gc.freeze` is left alone.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
