"""What a :class:`~agenteval.judge.judge.Judge` is configured with, and what it counts.

:class:`JudgeConfig` is checked when made: an InputError names the field at fault
(``judge_endpoint``, ``judge_model``, ``judge_rubrics``, ``judge_samples``,
``judge_concurrency``, ``judge_temperature``, ``judge_max_tokens``, ``cache_mode``; the CLI
says the flag). :class:`JudgeStats` counts calls, cache hits and outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agenteval.errors import InputError
from agenteval.judge.rubric import Rubric
from agenteval.llm.cache import CACHE_MODES
from agenteval.llm.http import RetryPolicy

SAMPLED_TEMPERATURE = 0.7
"""The temperature used when ``samples > 1`` and none was set."""


@dataclass(slots=True)
class JudgeConfig:
    """Everything a :class:`Judge` needs. ``api_key`` is a secret: never written anywhere.

    ``endpoint`` is the base URL of an OpenAI-compatible API (``…/v1``; requests go to
    ``{endpoint}/chat/completions``). ``temperature`` None means 0.0 for one sample and
    0.7 for several. ``structured`` sends a JSON-schema ``response_format`` so servers that
    support constrained output always return a parseable grade. ``cache_dir`` None
    disables the cache; ``cache_mode`` is how it is used (``read-write``, ``read-only``,
    ``refresh``, ``off``: :mod:`agenteval.llm.cache`). ``concurrency`` bounds judge
    requests in flight.
    """

    endpoint: str
    model: str
    rubrics: list[Rubric]
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = None
    samples: int = 1
    structured: bool = False
    cache_dir: Path | None = None
    cache_mode: str = "read-write"
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = 8
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if not self.endpoint.startswith(("http://", "https://")):
            raise InputError(
                "must be an http:// or https:// URL",
                field="judge_endpoint",
            )
        if not self.model.strip():
            raise InputError("the judge model must not be empty", field="judge_model")
        if not self.rubrics:
            raise InputError("give at least one rubric", field="judge_rubrics")
        names = [r.name for r in self.rubrics]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise InputError(f"rubric '{dup}' is given twice", field="judge_rubrics")
        if self.samples < 1:
            raise InputError("must be at least 1", field="judge_samples")
        if self.concurrency < 1:
            raise InputError("must be at least 1", field="judge_concurrency")
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise InputError("must be within [0, 2]", field="judge_temperature")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InputError("must be at least 1", field="judge_max_tokens")
        if self.cache_mode not in CACHE_MODES:
            raise InputError(f"must be one of {', '.join(CACHE_MODES)}", field="cache_mode")

    @property
    def effective_temperature(self) -> float:
        """The temperature sent: as set, else 0.0 (one sample) or 0.7 (several)."""
        if self.temperature is not None:
            return self.temperature
        return SAMPLED_TEMPERATURE if self.samples > 1 else 0.0


@dataclass(slots=True)
class JudgeStats:
    """Counters of what the judge did (for progress lines and tests)."""

    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    retries: int = 0
    judgments: int = 0
    inconclusive: int = 0
    not_applicable: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        """The counters as a plain dict."""
        return {k: getattr(self, k) for k in self.__slots__}
