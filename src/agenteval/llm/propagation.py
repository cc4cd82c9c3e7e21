"""W3C Trace Context for HTTP agents: one ``traceparent`` per trial.

The HTTP/JSON and OpenAI-compatible adapters send every request of a trial with the
header ``traceparent: 00-<trace id>-<span id>-01`` (version 00, *sampled* flag set): a
fresh random 16-byte trace id per trial, and one 8-byte span id standing for the trial
itself, so the agent's own root span is that span's child. Retries of a request carry the
same header: one trial, one trace. The header is sent always, receiver or not (it costs
~1 µs and lets the trial's trace be found in any tracing backend: the trial records
``metadata.trace_id``); an agent that does not read it is unaffected.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["TraceContext"]


@dataclass(frozen=True, slots=True)
class TraceContext:
    """A trial's trace id (32 hex digits) and its own span id (16 hex digits)."""

    trace_id: str
    span_id: str

    @classmethod
    def new(cls) -> TraceContext:
        """A fresh random context (neither id is ever all zeros)."""
        while True:
            raw = os.urandom(24)
            if any(raw[:16]) and any(raw[16:]):
                return cls(raw[:16].hex(), raw[16:].hex())

    @property
    def traceparent(self) -> str:
        """The ``traceparent`` header value: ``00-<trace id>-<span id>-01``."""
        return f"00-{self.trace_id}-{self.span_id}-01"
