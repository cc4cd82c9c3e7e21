"""One trial's view of the recording proxy: its base URL and the model calls under it.

:func:`model_base_url` is the running trial's base URL (a context variable, set by
:meth:`agenteval.traces.proxy.RecordingProxy.trial`), so the agent function, the asyncio
tasks and the sync-agent worker thread that run it all see it.
"""

from __future__ import annotations

import contextvars

from agenteval.traces.proxy_records import ModelCall, trajectory_from_calls
from agenteval.traces.records import Trajectory
from agenteval.trials.trial import CachedCall

BASE_URL: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "agenteval_model_base_url", default=None
)
"""The running trial's base URL (None outside a trial)."""


def model_base_url() -> str | None:
    """The running trial's proxy base URL (``http://127.0.0.1:PORT/t/<token>/v1``), or
    None outside a trial or without ``--capture-proxy``. Works in the agent function and
    in the asyncio tasks and sync-agent worker thread that run it (a context variable)."""
    return BASE_URL.get()


class ProxyTrial:
    """One trial's view: its base URL and the calls recorded under it."""

    source = "proxy"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.calls: list[ModelCall] = []

    @property
    def upstream_error(self) -> str | None:
        """Why the trial's last finished request failed at the proxy (upstream unreachable,
        response broken off); None when it did not (a later success clears an earlier
        failure, e.g. after the agent's client retried)."""
        done = [c for c in list(self.calls) if c.latency_s is not None]
        return done[-1].error if done else None

    def cached(self) -> list[CachedCall]:
        """The calls so far answered from the replay cache, as the trial records them."""
        return [c.as_cached() for c in list(self.calls) if c.cached]

    def trajectory(self) -> Trajectory:
        """What the calls so far say (:func:`trajectory_from_calls`). A call still in
        flight counts for what its request said (the tool results the agent sent back,
        the tools offered: a trial that fails meanwhile keeps them), not for its response."""
        return trajectory_from_calls([_request_side(c) for c in list(self.calls)])


def _request_side(c: ModelCall) -> ModelCall:
    """``c`` when it is finished; else what its request said only (no response yet)."""
    if c.latency_s is not None:
        return c
    return ModelCall(
        api=c.api, path=c.path, started_at=c.started_at, label=c.label,
        stream=c.stream, model=c.model, outputs=list(c.outputs), tools=list(c.tools),
    )  # fmt: skip
