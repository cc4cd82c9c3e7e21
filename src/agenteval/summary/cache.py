"""The summary's ``cache`` section: model calls served from the replay cache, counted apart.

A trial's ``cached`` lists the model calls the replay cache answered (docs/cache.md). Their
tokens are in the trial's ``usage`` as the agent consumed them, so the agent cost counts
them; this section says how much of it was *replayed, not paid in this run*
(``usd``: those calls priced; ``paid_agent_usd``: agent cost minus that), and splits the
trials' total latency into trials with no cached call (``live_latency``: what a user waits)
and trials with one (``cached_latency``: replay time, not the agent's). The section is
absent (None) when no trial had a cached call.
"""

from __future__ import annotations

from array import array

from agenteval.llm.pricing import PriceTable
from agenteval.summary.contribution import Priced
from agenteval.summary.distributions import distribution
from agenteval.summary.model import CacheSummary

__all__ = ["CacheSummary", "CacheTally"]


class CacheTally:
    """Collects :class:`CacheSummary` one trial at a time."""

    def __init__(self, prices: PriceTable) -> None:
        self.prices = prices
        self.s = CacheSummary()
        self.unpriced = False
        self.live = array("d")
        self.replayed = array("d")

    def fold(self, total_s: float | None, cached: tuple[int, Priced] | None) -> None:
        """Count one trial: its total latency and its cached calls (``(count, usage)`` of
        :data:`~agenteval.summary.contribution.Contribution`, None when none was cached)."""
        if cached is None:
            if total_s is not None:
                self.live.append(total_s)
            return
        s = self.s
        calls, (input_tokens, output_tokens, cost, _unknown) = cached
        s.calls += calls
        s.trials += 1
        if total_s is not None:
            self.replayed.append(total_s)
        s.tokens.input += input_tokens
        s.tokens.output += output_tokens
        if cost is None:
            self.unpriced = True
        else:
            s.known_usd += cost

    def result(self, agent_usd: float | None) -> CacheSummary | None:
        """The section (None when no call was cached); ``agent_usd`` the run's agent cost."""
        s = self.s
        if not s.calls:
            return None
        s.usd = None if self.unpriced else s.known_usd
        if s.usd is not None and agent_usd is not None:
            s.paid_agent_usd = max(agent_usd - s.usd, 0.0)
        s.live_latency = distribution(self.live.tolist())
        s.cached_latency = distribution(self.replayed.tolist())
        return s
