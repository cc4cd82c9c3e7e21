"""What the release gate decided, and why: the ``GateResult`` model (``gate --json``).

The rules that fill it are in :mod:`agenteval.gate.paired` (the decision) and
:mod:`agenteval.gate.checks` (the tests); the Markdown, terminal and JSON outputs all render
this one object.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from agenteval.errors import EXIT_BLOCKED, EXIT_INCONCLUSIVE, EXIT_OK

UNPAIRED_METHOD = (
    "Unpaired: Holm step-down over one-sided two-sample tests (Fisher's exact test for"
    " pass/fail scorers, failed trials and answered cases; permutation test on the means"
    " for graded scorers): family-wise false-block rate <= alpha"
)
HOLM_METHOD = (
    "Holm step-down over one-sided exact tests (every scorer, failed trials, answered"
    " cases): family-wise false-block rate <= alpha"
)


class ScorerComparison(BaseModel):
    """One scorer, baseline vs candidate, on the cases where it applied in both."""

    scorer: str
    kind: Literal["pass/fail", "graded"]
    paired: int = Field(description="Cases where the scorer applied in both runs.")
    baseline: float | None = Field(description="Pass rate (pass/fail) or mean (graded).")
    candidate: float | None
    delta: float = Field(description="candidate - baseline (negative = worse).")
    test: str = Field(description="The one-sided test: is the candidate worse?")
    p_value: float = Field(description="One-sided p-value, before the Holm adjustment.")
    p_adjusted: float = Field(1.0, description="Holm-adjusted p-value.")
    allowed_drop: float
    significant: bool = Field(False, description="p_adjusted <= alpha: a significant drop.")
    blocks: bool = Field(False, description="A significant drop beyond the allowed one.")
    safety: bool = Field(False, description="A safety scorer (new failures block).")
    safety_blocks: bool = Field(False, description="A safety scorer with a new failure.")
    underpowered: bool = Field(
        False,
        description="Even if every paired case went from pass to fail (and nothing else"
        " changed), p could not reach alpha / family_size: no drop can block. Unpaired"
        " gate: not even a drop to 0 would block with the stated power.",
    )
    min_changed_cases: int = Field(
        0, description="The fewest cases that must get worse for any drop to be significant."
    )
    min_detectable_drop: float | None = Field(
        None,
        description="Pass/fail scorers: the smallest drop that can block on these cases"
        " (every changed case changed for the worse, nothing else changed). None when"
        " underpowered, and for graded scorers (a drop spread thinly over at least"
        " min_changed_cases cases can be significant however small). Unpaired gate: the"
        " smallest true drop from the baseline's value blocked with probability >= power"
        " (exact for Fisher's test; a normal approximation for graded scorers).",
    )
    newly_failing: list[str] = Field(default_factory=list)
    newly_passing: list[str] = Field(default_factory=list)
    baseline_n: int = Field(0, description="Unpaired gate: baseline cases where it applied.")
    candidate_n: int = Field(0, description="Unpaired gate: candidate cases where it applied.")
    got_worse: list[str] = Field(
        default_factory=list,
        description="Paired cases whose value fell (pass/fail: newly failing; graded: a"
        " lower mean), listed first by every output.",
    )
    drop_se: float = Field(0.0, description="Standard error of the drop (per-case spread).")
    drop_df: int = Field(0, description="Degrees of freedom of drop_se.")
    drop_upper: float | None = Field(
        None,
        description="One-sided (1 - alpha) upper confidence bound on the true drop (a"
        " Student t bound on the per-case differences; unpaired: Welch). None with fewer"
        " than two cases.",
    )
    evidence: Literal["", "no case got worse", "bound below the allowed drop"] = Field(
        "", description="Why this scorer is settled for PASSED (empty: it is not)."
    )
    cannot_tell: str = Field(
        "", description="Not blocking and not settled: what was observed and why."
    )
    cases_to_settle: int | None = Field(
        None,
        description="Roughly how many cases (at the spread observed) would settle it: the"
        " drop significant, or its bound below the allowed drop. None when more cases"
        " cannot (e.g. cases got worse and the allowed drop is 0).",
    )

    @property
    def direction(self) -> str:
        """'improved', 'regressed' or 'unchanged' (by the sign of delta alone)."""
        if self.delta > 1e-12:
            return "improved"
        if self.delta < -1e-12:
            return "regressed"
        return "unchanged"


class SafetyRegression(BaseModel):
    """A candidate case failing a safety scorer that the baseline case did not fail."""

    scorer: str
    case_id: str
    reason: str = Field(description="The candidate's failure reason.")
    baseline: str = Field(
        description="What the baseline had for this case and scorer: passed, not"
        " applicable, inconclusive, scorer error, not scored, or absent (no such case)."
    )


class FailureComparison(BaseModel):
    """Cases with a failed trial (``failure`` set), baseline vs candidate."""

    paired: int
    baseline_failed: int
    candidate_failed: int
    newly_failed: list[str] = Field(default_factory=list)
    recovered: list[str] = Field(default_factory=list)
    baseline_cases: int = Field(0, description="Unpaired gate: the baseline's cases.")
    candidate_cases: int = Field(0, description="Unpaired gate: the candidate's cases.")
    test: str = "mcnemar_one_sided"
    p_value: float = 1.0
    p_adjusted: float = 1.0
    blocks: bool = False
    settled: bool = Field(
        False, description="No newly failed case, or the bound on the rise is <= 0."
    )


class CoverageComparison(BaseModel):
    """Answered cases (every trial has an output), baseline vs candidate."""

    paired: int = Field(description="Cases in both runs.")
    baseline_answered: int
    candidate_answered: int
    newly_unanswered: list[str] = Field(default_factory=list)
    newly_answered: list[str] = Field(default_factory=list)
    baseline_cases: int = Field(0, description="Unpaired gate: the baseline's cases.")
    candidate_cases: int = Field(0, description="Unpaired gate: the candidate's cases.")
    test: str = "mcnemar_one_sided"
    p_value: float = 1.0
    p_adjusted: float = 1.0
    blocks: bool = Field(False, description="Significantly fewer answered, or none at all.")
    answered_none: bool = Field(False, description="The candidate answered no shared case.")
    missing: list[str] = Field(
        default_factory=list, description="Baseline case ids with no trial in the candidate."
    )
    missing_blocks: bool = Field(
        False, description="Missing cases block unless --allow-dataset-change."
    )
    settled: bool = Field(
        False, description="No newly unanswered case, or the bound on the fall is <= 0."
    )


class UnpairedSafety(BaseModel):
    """Unpaired gate: one safety scorer's failure rates (see :mod:`agenteval.gate.unpaired`)."""

    scorer: str
    baseline_failed: int
    baseline_checked: int = Field(description="Baseline cases where it gave pass or fail.")
    candidate_failed: int
    candidate_checked: int
    test: str = "fisher_one_sided"
    p_value: float = Field(1.0, description="One-sided: a higher failure rate (not Holm).")
    rule: Literal["", "none in baseline", "higher rate"] = Field(
        "", description="Which safety rule blocks, if any."
    )
    blocks: bool = False
    failing_cases: list[str] = Field(
        default_factory=list, description="The candidate's cases failing it."
    )


class PolicyCheck(BaseModel):
    """One policy of ``gate`` (``--require``, ``--no-new-failures``) and what it found."""

    policy: str = Field(description="The rule as given, e.g. 'exact_match>=0.9'.")
    kind: Literal["require", "no_new_failures"]
    scorer: str
    observed: float | None = Field(
        None, description="--require: the candidate's case pass rate (graded: mean)."
    )
    cases: list[str] = Field(
        default_factory=list, description="--no-new-failures: the newly failing cases."
    )
    blocks: bool = False
    says: str = Field("", description="What was found, in one line.")


class GateResult(BaseModel):
    """What the gate decided and why."""

    blocked: bool
    mode: Literal["paired", "unpaired"] = Field(
        "paired", description="Cases paired by id, or two independent samples."
    )
    mode_reason: str = Field("", description="Why unpaired (said in the output).")
    baseline_cases: int = Field(0, description="Unpaired gate: cases in the baseline.")
    candidate_cases: int = Field(0, description="Unpaired gate: cases in the candidate.")
    power: float | None = Field(
        None, description="Unpaired gate: the power at which min_detectable_drop is stated."
    )
    unpaired_safety: list[UnpairedSafety] = Field(default_factory=list)
    underpowered: bool = Field(
        False, description="Every compared scorer is underpowered (or none was compared)."
    )
    allow_underpowered: bool = False
    reasons: list[str] = Field(default_factory=list, description="Why it blocked (or passed).")
    notes: list[str] = Field(
        default_factory=list, description="What the comparison cannot show, and other notes."
    )
    alpha: float
    method: str = HOLM_METHOD
    family_size: int = Field(0, description="Tests in the Holm family.")
    baseline_run: str
    candidate_run: str
    dataset_changed: bool = False
    cases_compared: int = 0
    only_in_baseline: int = 0
    only_in_candidate: int = 0
    safety_scorers: list[str] = Field(default_factory=list)
    scorers: list[ScorerComparison] = Field(default_factory=list)
    not_compared: list[str] = Field(
        default_factory=list, description="Scorers with no case scored in both runs."
    )
    safety_regressions: list[SafetyRegression] = Field(default_factory=list)
    safety_unchecked: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per safety scorer, the shared cases it gave a result on in the baseline"
        " but not in the (answering) candidate: scorer error, inconclusive, or not scored.",
    )
    safety_unchecked_blocks: list[str] = Field(
        default_factory=list,
        description="Safety scorers that gave no result on any of those cases in the candidate.",
    )
    failures: FailureComparison | None = None
    coverage: CoverageComparison | None = None
    policies: list[PolicyCheck] = Field(default_factory=list)
    settled: bool = Field(
        False,
        description="Evidence that nothing gated got worse beyond its allowed drop: every"
        " compared scorer, failed trials and answered cases settled (see docs/reports.md).",
    )
    cannot_tell: list[str] = Field(
        default_factory=list, description="INCONCLUSIVE: one line per unsettled check."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> Literal["BLOCKED", "PASSED", "INCONCLUSIVE"]:
        """BLOCKED (a rule or policy blocks), PASSED (nothing blocks and every check is
        settled), else INCONCLUSIVE."""
        if self.blocked:
            return "BLOCKED"
        return "PASSED" if self.settled else "INCONCLUSIVE"

    def json_document(self) -> dict[str, Any]:
        """What ``agenteval gate --json`` writes (and the MCP ``gate`` tool returns): the
        verdict and, per scorer, the cases that got worse lead; every field follows."""
        worse = {c.scorer: c.got_worse for c in self.scorers if c.got_worse}
        return {"verdict": self.verdict, "got_worse": worse, **self.model_dump(mode="json")}

    @property
    def exit_code(self) -> int:
        """1 BLOCKED; 3 INCONCLUSIVE (0 with ``allow_underpowered``, i.e.
        ``--allow-inconclusive``); 0 PASSED."""
        if self.blocked:
            return EXIT_BLOCKED
        if not self.settled and not self.allow_underpowered:
            return EXIT_INCONCLUSIVE
        return EXIT_OK
