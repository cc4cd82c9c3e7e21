"""The Summary of a run: the numbers every report shows, computed once.

A Summary is a pydantic model; ``summary.model_dump(mode="json")`` is what ``run.json``
stores under ``summary``. Counts are exact; means, rates and percentiles are None when
nothing was measured. Costs are None when a model's price is unknown (never 0); the
``*_known_usd`` fields then hold the part that could be priced.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Interval(BaseModel):
    """A confidence interval and the method that produced it."""

    low: float
    high: float
    method: str = Field(
        description="'wilson' (pass rates) or 't' (means), both 95%; 'wilson-clustered' and"
        " 't-clustered' when some case has several trials (clustered by case)."
    )


class ScorerSummary(BaseModel):
    """One scorer over all trials of the run."""

    trials: int = Field(0, description="Trials that carry this score at all.")
    applicable: int = Field(0, description="Status passed or failed (in mean and rate).")
    not_applicable: int = Field(0, description="Status not_applicable: nothing to check.")
    inconclusive: int = Field(0, description="Status inconclusive: could not decide.")
    errors: int = Field(0, description="Status error: the scorer raised or returned junk.")
    passed: int = 0
    mean: float | None = None
    pass_rate: float | None = None
    mean_ci: Interval | None = None
    pass_rate_ci: Interval | None = None
    binary: bool = Field(True, description="Every applicable value was 0 or 1.")
    judge: bool = Field(False, description="Some of its scores carry judge token usage.")


class TagScorer(BaseModel):
    """One scorer within one tag."""

    applicable: int = 0
    passed: int = 0
    mean: float | None = None
    pass_rate: float | None = None


class TagSummary(BaseModel):
    """The trials of the cases carrying one tag."""

    trials: int = 0
    failed: int = 0
    scorers: dict[str, TagScorer] = Field(default_factory=dict)


class HistogramBin(BaseModel):
    low: float
    high: float
    count: int


class Distribution(BaseModel):
    """A latency distribution in seconds."""

    n: int = 0
    mean: float | None = None
    p50: float | None = None
    p95: float | None = None
    max: float | None = None
    histogram: list[HistogramBin] = Field(default_factory=list)


class LatencySummary(BaseModel):
    total: Distribution = Field(default_factory=Distribution, description="What a user waits.")
    active: Distribution = Field(default_factory=Distribution, description="Inside requests.")


class Tokens(BaseModel):
    input: int = 0
    output: int = 0


class CostSummary(BaseModel):
    """USD, agent, judge and simulated user separately."""

    agent_usd: float | None = None
    agent_known_usd: float = 0.0
    agent_unpriced_trials: int = 0
    agent_usage_recorded: bool = Field(
        True, description="False when no trial recorded token usage: agent cost is unknown."
    )
    judge_usd: float | None = None
    judge_known_usd: float = 0.0
    judge_unpriced_scores: int = 0
    user_usd: float | None = Field(
        None, description="The simulated user's cost (conversations with an LLM user)."
    )
    user_known_usd: float = 0.0
    user_unpriced_trials: int = 0
    total_usd: float | None = None
    per_trial_usd: float | None = None
    per_correct_usd: float | None = None
    agent_per_correct_usd: float | None = None
    correct_by: str | None = Field(None, description="Scorer that defines a correct answer.")
    correct: int = 0
    agent_tokens: Tokens = Field(default_factory=Tokens)
    judge_tokens: Tokens = Field(default_factory=Tokens)
    user_tokens: Tokens = Field(default_factory=Tokens)
    unknown_models: list[str] = Field(default_factory=list)


class ReasonCount(BaseModel):
    count: int = 0
    wait_s: float = 0.0


class RetrySummary(BaseModel):
    total: int = 0
    trials_with_retries: int = 0
    wait_s: float = 0.0
    by_reason: dict[str, ReasonCount] = Field(default_factory=dict)


class CauseCount(BaseModel):
    count: int = 0
    examples: list[str] = Field(default_factory=list, description="Up to 5 case ids.")
    message: str = Field("", description="The first message seen for this cause.")


class FailureSummary(BaseModel):
    total: int = 0
    by_cause: dict[str, CauseCount] = Field(default_factory=dict)


class Attribution(BaseModel):
    """Wrong answers split by whether retrieval found every relevant document."""

    correct_by: str | None = None
    wrong: int = 0
    retrieval: int = Field(0, description="Wrong, and a relevant document was missed.")
    model: int = Field(0, description="Wrong although every relevant document was found.")
    unknown: int = Field(0, description="Wrong, and retrieval_recall did not apply.")


class RepeatScorer(BaseModel):
    cases: int = Field(0, description="Cases where the scorer applied to every repeat.")
    pass_at_1: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: float | None = None


class FlakyCase(BaseModel):
    case_id: str
    scorers: list[str]


class RepeatSummary(BaseModel):
    k: int
    scorers: dict[str, RepeatScorer] = Field(default_factory=dict)
    flaky_count: int = 0
    flaky: list[FlakyCase] = Field(default_factory=list, description="Up to 100 cases.")


class CacheSummary(BaseModel):
    """Model calls served from the replay cache, counted apart (:mod:`agenteval.summary.cache`)."""

    calls: int = Field(0, description="Model calls served from the cache.")
    trials: int = Field(0, description="Trials with at least one cached call.")
    tokens: Tokens = Field(default_factory=Tokens, description="The cached calls' tokens.")
    usd: float | None = Field(
        None, description="The cached calls priced: part of the agent cost, not paid now."
    )
    known_usd: float = 0.0
    paid_agent_usd: float | None = Field(
        None, description="Agent cost minus the cached calls': what this run paid."
    )
    live_latency: Distribution = Field(
        default_factory=Distribution, description="Total latency of trials with no cached call."
    )
    cached_latency: Distribution = Field(
        default_factory=Distribution, description="Total latency of trials with a cached call."
    )


class Summary(BaseModel):
    """Every headline number of a run."""

    run_id: str | None = None
    kind: str | None = None
    dataset_path: str | None = None
    dataset_sha256: str | None = None
    trials: int = 0
    answered: int = Field(0, description="Trials with an output (the agent responded).")
    failed: int = Field(0, description="Trials with a failure.")
    cases: int = 0
    scorers: dict[str, ScorerSummary] = Field(default_factory=dict)
    scorer_errors: dict[str, int] = Field(default_factory=dict)
    inconclusive: dict[str, int] = Field(default_factory=dict)
    tags: dict[str, TagSummary] = Field(default_factory=dict)
    latency: LatencySummary = Field(default_factory=LatencySummary)
    cost: CostSummary = Field(default_factory=CostSummary)
    retries: RetrySummary = Field(default_factory=RetrySummary)
    failures: FailureSummary = Field(default_factory=FailureSummary)
    attribution: Attribution | None = None
    repeats: RepeatSummary | None = None
    cache: CacheSummary | None = Field(
        None,
        exclude_if=lambda v: v is None,
        description="Model calls served from the replay cache; absent when none was.",
    )
    methods: dict[str, str] = Field(default_factory=dict)
