"""Assertions for pytest (or any test runner) over a run: per case, floors, and the gate.

- :func:`assert_case`: every score of a case's trials passed, and every trial answered.
  The AssertionError lists each failing score with its status, value and reason, then
  the answer and the run directory, so a red test says what to fix without a debugger.
- :func:`assert_scores`: a floor on a scorer's mean over the run (``exact_match=0.9``: the
  mean of its applicable values, the number ``agenteval report`` prints, is >= 0.9).
- :func:`assert_no_regression`: the release gate (:func:`agenteval.gate.compare_runs`)
  against a baseline run passes; the AssertionError is the gate's own report.

Each raises AssertionError (pytest shows the message, not this module's frames) and returns
what it checked.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agenteval.evaluation import Run
    from agenteval.gate.model import GateResult
    from agenteval.rundir import TrialRecord
    from agenteval.scoring.score import Score, Status

__all__ = [
    "FAILING",
    "CaseResult",
    "UnderpoweredGateWarning",
    "assert_case",
    "assert_no_regression",
    "assert_scores",
]

FAILING: tuple[Status, ...] = ("failed", "error", "inconclusive")
"""The score statuses :func:`assert_case` fails on by default: a judge that could not
decide is not a pass. ``not_applicable`` (nothing to check) never fails a case."""

_SHOWN_CASES = 5  # failing cases listed under a floor that is not met


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one case of a run gave: its trials (one per repeat) with their scores."""

    case_id: str
    trials: tuple[TrialRecord, ...] = field(repr=False)
    run: Run = field(repr=False)

    def scores(self, name: str) -> list[float | None]:
        """One scorer's value in each trial (None: not applicable or not scored)."""
        return [t.scores[name].value if name in t.scores else None for t in self.trials]

    def failing(
        self, statuses: Sequence[str] = FAILING, scorers: Sequence[str] | None = None
    ) -> list[tuple[TrialRecord, str, Score]]:
        """``(trial, scorer name, score)`` for every score whose status is in ``statuses``
        (of the ``scorers`` named, or all), in trial then scorer order."""
        return [
            (t, name, s)
            for t in self.trials
            for name, s in t.scores.items()
            if s.status in statuses and (scorers is None or name in scorers)
        ]


def _short(text: str | None, limit: int = 300) -> str:
    if text is None:
        return "(no answer)"
    one = text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
    return repr(one)


def _value(s: Score) -> str:
    return "-" if s.value is None else f"{s.value:.2f}"


def case_message(
    result: CaseResult, statuses: Sequence[str] = FAILING, scorers: Sequence[str] | None = None
) -> str | None:
    """Why ``result`` fails :func:`assert_case`, or None when it passes."""
    bad = result.failing(statuses, scorers)
    broken = [t for t in result.trials if t.failure is not None]
    if not result.trials:
        return f"case {result.case_id!r}: no trial was recorded\nrun: {result.run.run_dir}"
    if not bad and not broken:
        return None
    many = len(result.trials) > 1
    what = []
    if broken:
        what.append(
            f"the agent failed in {len(broken)} of {len(result.trials)} trials"
            if many
            else "the agent failed"
        )
    if bad:
        what.append(f"{len(bad)} score(s) not passed")
    lines = [f"case {result.case_id!r}: " + "; ".join(what)]
    for t in broken:
        where = f"trial {t.repeat + 1}: " if many else ""
        assert t.failure is not None
        lines.append(f"  {where}agent failed ({t.failure.cause}): {t.failure.message}")
    width = max((len(name) for _, name, _ in bad), default=0)
    for t, name, s in bad:
        where = f"trial {t.repeat + 1}: " if many else ""
        why = s.error if s.status == "error" and s.error else s.reason
        lines.append(f"  {where}{name:<{width}}  {s.status} {_value(s)}  {why}")
    for t in result.trials:
        where = f" (trial {t.repeat + 1})" if many else ""
        lines.append(f"  answer{where}: {_short(t.output)}")
    lines.append(f"run: {result.run.run_dir}")
    return "\n".join(lines)


def assert_case(
    result: CaseResult,
    *,
    scorers: Sequence[str] | None = None,
    fail_on: Sequence[str] = FAILING,
) -> CaseResult:
    """Fail unless every trial of the case answered and none of its scores (of the
    ``scorers`` named, or all) has a status in ``fail_on`` (default :data:`FAILING`)."""
    __tracebackhide__ = True
    unknown = [s for s in fail_on if s not in ("failed", "error", "inconclusive")]
    if unknown:
        raise ValueError(f"fail_on takes failed, error, inconclusive; got {unknown}")
    message = case_message(result, fail_on, scorers)
    if message is not None:
        raise AssertionError(message)
    return result


def assert_scores(
    run: Run, floors: Mapping[str, float] | None = None, /, **more: float
) -> dict[str, float]:
    """Fail unless each named scorer's mean over ``run`` is at least its floor:
    ``assert_scores(run, exact_match=0.9)``, or a mapping for names that are not Python
    identifiers (``assert_scores(run, {"judge:helpful": 0.8})``). A scorer the run does not
    have, or with no applicable value (mean undefined), fails. Returns the means checked."""
    __tracebackhide__ = True
    wanted = {**(floors or {}), **more}
    if not wanted:
        raise ValueError("assert_scores needs at least one scorer=floor")
    for name, floor in wanted.items():
        if not 0.0 <= floor <= 1.0:
            raise ValueError(f"floor for {name!r} must be within [0, 1], got {floor!r}")
    scorers: dict[str, Any] = run.summary.get("scorers") or {}
    problems: list[str] = []
    means: dict[str, float] = {}
    for name, floor in wanted.items():
        entry = scorers.get(name)
        if entry is None:
            known = ", ".join(sorted(scorers)) or "none"
            problems.append(f"{name}: the run has no such scorer (it has: {known})")
            continue
        mean = entry.get("mean")
        if mean is None:
            problems.append(f"{name}: no applicable value in {entry.get('trials', 0)} trials")
            continue
        means[name] = mean
        if mean < floor:
            problems.append(
                f"{name}: mean {mean:.3f} < floor {floor:g}"
                f" ({entry.get('passed', 0)} of {entry.get('applicable', 0)} passed)"
                + _failing_cases(run, name)
            )
    if problems:
        failed = run.summary.get("failed") or 0
        if failed:
            problems.append(
                f"({failed} trial(s) ended without an answer: they carry no value, so they"
                " are not in a mean; assert_case or the summary's failures show them)"
            )
        raise AssertionError("\n".join([*problems, f"run: {run.run_dir}"]))
    return means


def _failing_cases(run: Run, name: str) -> str:
    rows = [
        f"\n    {t.case_id}: {_value(s)} {s.reason}"
        for t in run.iter_trials()
        if (s := t.scores.get(name)) is not None and s.status == "failed"
    ]
    more = len(rows) - _SHOWN_CASES
    return "".join(rows[:_SHOWN_CASES]) + (f"\n    ... and {more} more" if more > 0 else "")


def assert_no_regression(run: Run, baseline: Run | str | Path, **options: Any) -> GateResult:
    """Fail when the release gate blocks ``run`` against ``baseline`` (a Run or a run
    directory), or finds it underpowered (the gate's exit code 3) unless
    ``allow_underpowered=True``. ``options`` go to :func:`agenteval.gate.compare_runs`
    unchanged (``alpha``, ``max_drop``, ``allow_dataset_change``, ``mode``, ...). The
    AssertionError is the gate's report (docs/pytest.md); the result is returned on a pass."""
    __tracebackhide__ = True
    from io import StringIO

    from rich.console import Console

    # imported on first use, so that importing this module stays light
    from agenteval.gate import compare_runs
    from agenteval.report.gate_text import render_gate

    base_dir = baseline if isinstance(baseline, str | Path) else baseline.run_dir
    result = compare_runs(base_dir, run.run_dir, **options)
    if result.exit_code != 0:
        out = StringIO()
        render_gate(result, Console(file=out, width=100, color_system=None, soft_wrap=True))
        raise AssertionError(out.getvalue().rstrip())
    if not result.settled:  # allowed, but a pass that could not tell must say so
        why = next((n for n in result.notes if n.startswith("underpowered")), result.verdict)
        warnings.warn(
            f"gate passed with allow_underpowered=True; {why}",
            UnderpoweredGateWarning,
            stacklevel=2,
        )
    return result


class UnderpoweredGateWarning(UserWarning):
    """:func:`assert_no_regression` passed with ``allow_underpowered=True`` on a gate that
    could not have detected a drop (too few cases)."""
