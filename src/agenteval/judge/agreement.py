"""How well a judge agrees with human labels: accuracy, Cohen's kappa, confusion matrix.

A labels file is JSONL; each line holds the case fields (``id``, ``input``, ``expected``,
``context``, ...), the trial fields ``output`` and ``tool_calls``, and the human
``label``. Labels are read on the rubric's scale:

- binary: ``1``/``0``, ``true``/``false`` or ``"C"``/``"I"``;
- partial: as binary, plus ``0.5`` or ``"P"``;
- likert: a whole number ``1`` … ``5`` (or its string).

Judgments that are inconclusive or not applicable are counted and listed, but left out of
accuracy and kappa (they are neither agreement nor disagreement).

Cohen's kappa is ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and
``p_e`` the agreement expected by chance from each rater's marginal frequencies. When
``p_e`` is 1 (both raters used one and the same category throughout) kappa is undefined
and reported as None.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval.cases.case import Case
from agenteval.errors import InputError
from agenteval.judge.judge import Judge
from agenteval.judge.rubric import Rubric, Scale
from agenteval.trials.trial import Trial

_TRIAL_FIELDS = ("output", "tool_calls", "label")


def normalize_label(raw: Any, scale: Scale) -> str:
    """The grade token on ``scale`` that a human label stands for; ValueError otherwise."""
    if scale.name == "likert":
        if isinstance(raw, bool):
            raise ValueError("a likert label must be a whole number from 1 to 5")
        try:
            f = float(raw)
        except (TypeError, ValueError):
            raise ValueError("a likert label must be a whole number from 1 to 5") from None
        if f.is_integer() and str(int(f)) in scale.values:
            return str(int(f))
        raise ValueError(f"likert label {raw!r} is not a whole number from 1 to 5")
    allowed = " or ".join(scale.grades)
    if isinstance(raw, str) and raw.strip().upper() in scale.values:
        return raw.strip().upper()
    if isinstance(raw, bool) or (isinstance(raw, int | float) and raw in (0, 1)):
        return "C" if raw else "I"
    if isinstance(raw, float) and raw == 0.5 and "P" in scale.values:
        return "P"
    raise ValueError(f"label {raw!r} is not on the {scale.name} scale (1/0 or {allowed})")


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of (human, judge) pairs; None when there are none or p_e is 1."""
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(a == b for a, b in pairs) / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    p_e = sum(left[c] * right[c] for c in left) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def confusion_matrix(
    pairs: Sequence[tuple[str, str]], categories: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Counts by ``[human label][judge grade]`` over ``categories`` (zeros included)."""
    m = {a: dict.fromkeys(categories, 0) for a in categories}
    for a, b in pairs:
        m[a][b] += 1
    return m


@dataclass(frozen=True, slots=True)
class LabeledItem:
    """One line of a labels file: the case, the trial to judge and the human label."""

    line: int
    case: Case
    trial: Trial
    label: str


@dataclass(slots=True)
class AgreementReport:
    """The judge versus the human labels on one rubric."""

    rubric: str
    scale: str
    items: int = 0
    compared: int = 0
    agreed: int = 0
    kappa: float | None = None
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    unjudged: list[dict[str, Any]] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        """Share of compared items where the judge gave the human's grade."""
        return self.agreed / self.compared if self.compared else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``--json``)."""
        return {
            "rubric": self.rubric,
            "scale": self.scale,
            "items": self.items,
            "compared": self.compared,
            "agreed": self.agreed,
            "accuracy": self.accuracy,
            "kappa": self.kappa,
            "confusion": self.confusion,
            "disagreements": self.disagreements,
            "unjudged": self.unjudged,
        }


def read_labels(path: str | Path, rubric: Rubric) -> list[LabeledItem]:
    """Read a labels file; InputError naming the file, line and field on any problem."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=p) from None
    items: list[LabeledItem] = []
    seen: set[str] = set()
    for lineno, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(f"not valid JSON ({e})", file=p, line=lineno) from None
        if not isinstance(data, dict):
            raise InputError("each line must be a JSON object", file=p, line=lineno)
        if "label" not in data:
            raise InputError("missing", file=p, line=lineno, field="label")
        try:
            label = normalize_label(data["label"], rubric.scale_def)
        except ValueError as e:
            raise InputError(str(e), file=p, line=lineno, field="label") from None
        case_data = {k: v for k, v in data.items() if k not in _TRIAL_FIELDS}
        case_data.setdefault("id", f"line{lineno}")
        case_data.setdefault("input", "")
        try:
            case = Case.model_validate(case_data)
            trial = Trial.model_validate(
                {
                    "case_id": case.id,
                    "output": data.get("output"),
                    "tool_calls": data.get("tool_calls") or [],
                }
            )
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or None
            raise InputError(err["msg"], file=p, line=lineno, field=where) from None
        if case.id in seen:
            raise InputError(f"duplicate id '{case.id}'", file=p, line=lineno, field="id")
        seen.add(case.id)
        items.append(LabeledItem(lineno, case, trial, label))
    if not items:
        raise InputError("holds no labelled items", file=p)
    return items


async def measure_agreement(
    judge: Judge, rubric: Rubric, items: Sequence[LabeledItem]
) -> AgreementReport:
    """Judge every labelled item with ``rubric`` (``judge`` started) and compare with the
    human labels."""
    judgments = await asyncio.gather(*(judge.judge(rubric, i.case, i.trial) for i in items))
    report = AgreementReport(rubric=rubric.name, scale=rubric.scale, items=len(items))
    pairs: list[tuple[str, str]] = []
    for item, j in zip(items, judgments, strict=True):
        if j.grade is None:
            report.unjudged.append(
                {"id": item.case.id, "label": item.label, "reason": j.score.reason}
            )
            continue
        pairs.append((item.label, j.grade))
        if j.grade != item.label:
            report.disagreements.append(
                {
                    "id": item.case.id,
                    "label": item.label,
                    "judge": j.grade,
                    "reason": j.score.reason,
                }
            )
    report.compared = len(pairs)
    report.agreed = sum(a == b for a, b in pairs)
    report.kappa = cohen_kappa(pairs)
    report.confusion = confusion_matrix(pairs, rubric.scale_def.grades)
    return report


def render_agreement(report: AgreementReport) -> str:
    """A plain-text report: counts, accuracy, kappa, confusion matrix, disagreements."""
    acc = "n/a" if report.accuracy is None else f"{report.accuracy:.3f}"
    kappa = "undefined" if report.kappa is None else f"{report.kappa:.3f}"
    out = [
        f"rubric {report.rubric} ({report.scale}): {report.items} labelled items,"
        f" {report.compared} compared, {len(report.unjudged)} without a verdict",
        f"accuracy {acc} ({report.agreed}/{report.compared})   Cohen's kappa {kappa}",
        "",
        "confusion matrix (rows: human label, columns: judge)",
    ]
    cats = list(report.confusion)
    width = max([5, *(len(c) for c in cats)])
    out.append(" " * (width + 2) + " ".join(c.rjust(width) for c in cats))
    for a in cats:
        row = " ".join(str(report.confusion[a][b]).rjust(width) for b in cats)
        out.append(f"{a.rjust(width)}  {row}")
    if report.disagreements:
        out += ["", f"disagreements ({len(report.disagreements)}):"]
        for d in report.disagreements:
            out.append(f"  {d['id']}: label {d['label']}, judge {d['judge']} - {d['reason']}")
    if report.unjudged:
        out += ["", f"without a verdict ({len(report.unjudged)}):"]
        for d in report.unjudged:
            out.append(f"  {d['id']}: label {d['label']} - {d['reason']}")
    return "\n".join(out) + "\n"
