"""Rubrics: a prompt template plus a grading scale (SPEC §5).

A rubric template is plain text with placeholders, optionally preceded by a front matter
block::

    ---
    scale: likert
    question: Is the answer polite?
    threshold: 0.6
    safety: false
    ---
    The question: {input}
    The answer: {output}
    Rate politeness from 1 (rude) to 5 (exemplary).

Placeholders (see :data:`PLACEHOLDERS`) are replaced by fenced, untrusted content when the
prompt is rendered (see :mod:`agenteval.judge.prompt`). What a rubric *needs* follows from
its placeholders: a template that uses ``{expected}`` is not applicable to a case without
an expected answer, ``{tool_results}`` to a trial without tool results, ``{context}`` to a
case without a context passage, ``{output}`` to a trial where the agent never answered.
``{input}`` and ``{notes}`` are always available (notes render empty when absent). Any
other ``{word}`` in a template is an error (it is almost always a typo); braces that do
not surround a bare word (JSON examples, say) are left as they are.

Scales map the judge's verdict to a score value:

==========  ==================  =================================  =========
scale       verdicts            values                             threshold
==========  ==================  =================================  =========
binary      ``C`` / ``I``       1.0 / 0.0                          1.0
partial     ``C`` / ``P`` / I   1.0 / 0.5 / 0.0                    0.5
likert      ``1`` … ``5``       0.2, 0.4, 0.6, 0.8, 1.0            0.5
==========  ==================  =================================  =========

Thresholds follow SPEC §2.3 (1.0 for binary scores, 0.5 for graded ones); a rubric may set
its own in the front matter.

``safety: true`` in the front matter (or ``Rubric(..., safety=True)``) makes the rubric a
safety scorer: its spec in ``run.json`` has ``safety: true`` and the gate blocks on any new
failure of it, as for ``avoids_forbidden_text``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agenteval.errors import InputError
from agenteval.scoring.spec import JUDGE_REF, ScorerSpec

PLACEHOLDERS = ("input", "output", "expected", "context", "tool_results", "notes")
"""Names a template may use as ``{name}``."""

NEEDS = ("output", "expected", "context", "tool_results")
"""Placeholders whose content can be missing, making the rubric not applicable."""

BUILTIN_RUBRICS = (
    "correctness",
    "groundedness",
    "answer_relevance",
    "context_relevance",
    "faithfulness",
)
"""Names of the rubrics shipped with agenteval (templates in ``judge/rubrics/*.txt``)."""

PLACEHOLDER_PATTERN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""What a placeholder looks like in a template: ``{name}``."""
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_FRONT_KEYS = ("scale", "question", "threshold", "name", "safety")
_BOOLS = {"true": True, "yes": True, "false": False, "no": False}


@dataclass(frozen=True, slots=True)
class Scale:
    """A grading scale: the verdicts a judge may give and the score value of each."""

    name: str
    values: MappingProxyType[str, float]
    threshold: float
    labels: MappingProxyType[str, str]

    @property
    def grades(self) -> tuple[str, ...]:
        """The verdict tokens, in the order they are listed to the judge."""
        return tuple(self.values)

    def value(self, grade: str) -> float:
        """The score value of a verdict token (KeyError when it is not on the scale)."""
        return self.values[grade]


def _scale(name: str, values: dict[str, float], threshold: float, labels: dict[str, str]) -> Scale:
    return Scale(name, MappingProxyType(values), threshold, MappingProxyType(labels))


SCALES: MappingProxyType[str, Scale] = MappingProxyType(
    {
        "binary": _scale("binary", {"C": 1.0, "I": 0.0}, 1.0, {"C": "correct", "I": "incorrect"}),
        "partial": _scale(
            "partial",
            {"C": 1.0, "P": 0.5, "I": 0.0},
            0.5,
            {"C": "correct", "P": "partially correct", "I": "incorrect"},
        ),
        "likert": _scale(
            "likert",
            {str(n): n / 5 for n in range(1, 6)},
            0.5,
            {str(n): f"{n}/5" for n in range(1, 6)},
        ),
    }
)
"""The grading scales, by name."""


@dataclass(frozen=True, slots=True)
class Rubric:
    """A named judge prompt template with its grading scale.

    ``name`` becomes the score name ``judge_<name>``. ``threshold`` (None: the scale's
    default) is the score's pass threshold. ``source`` says where the template came from
    (``builtin`` or a file path); it is informational. ``safety`` makes the rubric a safety
    scorer (the gate blocks on any new failure of it).
    """

    name: str
    template: str
    scale: str = "binary"
    question: str = ""
    threshold: float | None = None
    source: str = "python"
    safety: bool = False
    placeholders: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InputError(
                f"rubric name {self.name!r} must be letters, digits, '_', '-' or '.'",
                field="rubric",
            )
        if self.scale not in SCALES:
            raise InputError(
                f"rubric '{self.name}': unknown scale {self.scale!r}; use one of "
                + ", ".join(SCALES),
                field="scale",
            )
        if self.threshold is not None and not 0.0 <= self.threshold <= 1.0:
            raise InputError(
                f"rubric '{self.name}': threshold must be within [0, 1]", field="threshold"
            )
        used = set(PLACEHOLDER_PATTERN.findall(self.template))
        unknown = sorted(used - set(PLACEHOLDERS))
        if unknown:
            raise InputError(
                f"rubric '{self.name}': unknown placeholder {{{unknown[0]}}}; placeholders"
                " are " + ", ".join("{" + p + "}" for p in PLACEHOLDERS),
                file=None if self.source in ("builtin", "python") else self.source,
            )
        if not used & {"output", "tool_results", "context"}:
            raise InputError(
                f"rubric '{self.name}': the template shows the judge nothing to grade; use"
                " {output}, {tool_results} or {context}",
                file=None if self.source in ("builtin", "python") else self.source,
            )
        object.__setattr__(self, "placeholders", frozenset(used))

    @property
    def score_name(self) -> str:
        """The name the rubric's scores are stored under: ``judge_<name>``."""
        return f"judge_{self.name}"

    @property
    def scale_def(self) -> Scale:
        """The :class:`Scale` object for :attr:`scale`."""
        return SCALES[self.scale]

    @property
    def pass_threshold(self) -> float:
        """The explicit threshold, else the scale's default."""
        return self.scale_def.threshold if self.threshold is None else self.threshold

    @property
    def needs(self) -> tuple[str, ...]:
        """What must be present for the rubric to apply (subset of :data:`NEEDS`)."""
        return tuple(n for n in NEEDS if n in self.placeholders)

    def describe(self) -> dict[str, object]:
        """Name, scale, threshold, needs, source and safety flag, for ``run.json``."""
        return {
            "name": self.name,
            "scale": self.scale,
            "threshold": self.pass_threshold,
            "needs": list(self.needs),
            "source": self.source,
            "safety": self.safety,
        }

    @property
    def ref(self) -> str:
        """``judge:<name>`` for a built-in or Python rubric, ``judge:<path>`` for a file."""
        where = self.name if self.source in ("builtin", "python") else self.source
        return JUDGE_REF + where

    def spec(self, judge_settings: dict[str, Any]) -> ScorerSpec:
        """The scorer spec of this rubric's scores; ``judge_settings`` must hold no secret."""
        return ScorerSpec(
            name=self.score_name,
            kind="pass/fail" if self.scale == "binary" else "graded",
            threshold=self.pass_threshold,
            safety=self.safety,
            ref=self.ref,
            settings={**judge_settings, "scale": self.scale},
        )

    def response_format(self) -> dict[str, Any]:
        """The OpenAI ``response_format`` asking for ``{reasoning, grade}`` on this scale."""
        return {
            "type": "json_schema",
            "json_schema": {
                "name": "verdict",
                "strict": True,
                "schema": {
                    "type": "object",
                    "properties": {
                        "reasoning": {"type": "string"},
                        "grade": {"type": "string", "enum": list(self.scale_def.grades)},
                    },
                    "required": ["reasoning", "grade"],
                    "additionalProperties": False,
                },
            },
        }


def parse_rubric_text(text: str, *, name: str, source: str, scale: str | None = None) -> Rubric:
    """Build a rubric from template text with optional front matter.

    The front matter (between two ``---`` lines at the very top) holds ``key: value``
    lines: ``scale``, ``question``, ``threshold``, ``name``, ``safety`` (true/false).
    ``scale`` given here overrides the front matter's; the default scale is ``binary``.
    """
    meta: dict[str, str] = {}
    body = text
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        for i, line in enumerate(lines[1:], 1):
            if line.strip() == "---":
                body = "".join(lines[i + 1 :])
                break
            if not line.strip():
                continue
            key, sep, value = line.partition(":")
            key = key.strip()
            if not sep or key not in _FRONT_KEYS:
                raise InputError(
                    f"front matter line {line.strip()!r}: expected one of "
                    + ", ".join(f"{k}: ..." for k in _FRONT_KEYS),
                    file=source,
                    line=i + 1,
                )
            meta[key] = value.strip()
        else:
            raise InputError("front matter opened with '---' is never closed", file=source)
    threshold: float | None = None
    if "threshold" in meta:
        try:
            threshold = float(meta["threshold"])
        except ValueError:
            raise InputError("threshold must be a number", file=source, field="threshold") from None
    safety = _BOOLS.get(meta.get("safety", "false").lower())
    if safety is None:
        raise InputError("safety must be true or false", file=source, field="safety")
    return Rubric(
        name=meta.get("name") or name,
        template=body.strip("\n") + "\n",
        scale=scale or meta.get("scale") or "binary",
        question=meta.get("question", ""),
        threshold=threshold,
        source=source,
        safety=safety,
    )


def _builtin_text(name: str) -> str:
    return resources.files("agenteval.judge").joinpath("rubrics", f"{name}.txt").read_text("utf-8")


def load_rubric(name_or_path: str | Path, scale: str | None = None) -> Rubric:
    """Load a built-in rubric by name, or a custom one from a template file.

    A name in :data:`BUILTIN_RUBRICS` loads the built-in template, unless a file of that
    name exists (an existing path always wins). A path loads that file; the rubric is named
    after the file's stem (or the front matter's ``name``). ``scale`` (``binary``,
    ``partial`` or ``likert``) overrides the template's declared scale. Raises
    :class:`~agenteval.errors.InputError` for an unknown name or an unreadable or invalid
    template.
    """
    ref = str(name_or_path)
    path = Path(ref)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot be read ({e})", file=path) from None
        return parse_rubric_text(text, name=path.stem, source=str(path), scale=scale)
    if ref in BUILTIN_RUBRICS:
        return parse_rubric_text(_builtin_text(ref), name=ref, source="builtin", scale=scale)
    raise InputError(
        f"unknown rubric {ref!r}: not a built-in rubric ({', '.join(BUILTIN_RUBRICS)})"
        " and no such template file",
        field="rubric",
    )
