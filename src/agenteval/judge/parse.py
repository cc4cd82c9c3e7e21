"""Reading the verdict out of a judge's reply: strict about the verdict, forgiving about wrapping.

A verdict is found in two forms, anywhere in the reply:

- a **verdict line**: a line that starts with ``GRADE`` (any case, optionally ``Final
  grade``), then ``:`` or ``=``, then the grade token. Markdown around it is ignored
  (``**GRADE: C**``, ``### Grade: **4**``, ``> GRADE: C``, `` `GRADE: I` ``), and so is
  text after the token (``GRADE: C (correct)``, ``GRADE: 4/5``);
- a **JSON object** with a ``grade`` key (any case), bare or in a code block, e.g.
  ``{"reasoning": "...", "grade": "C"}``; the grade may be a string or a number.

When there are several, the **last** one in the reply counts: a judge that quotes an
answer's fake ``GRADE: C`` before giving its own verdict is graded by its own verdict.

The token must be on the rubric's scale, exactly: ``C``/``I`` (``P`` for the partial
scale; letters in any case) or a whole number 1–5 for Likert (``4.0`` is 4). ``GRADE:
Correct``, ``GRADE: 4.5`` or ``GRADE: P`` on the binary scale give no verdict. With no
verdict the result says why: the judge refused (the API's ``refusal`` field, or a reply
that reads like a refusal), the reply was empty, the verdict was off the scale, or there
was none. The caller turns each of those into an *inconclusive* score, never a fail.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agenteval.judge.rubric import Scale

_LINE = re.compile(
    r"""^[ \t>*_#`~\-\[(]*            # markdown: quote, bold, heading, bullet, code
    (?:final[ \t]+)?grade
    [ \t*_`"')\]]*                     # closing bold / quote
    [:=]
    [ \t*_`"'\[(]*
    (?P<tok>[A-Za-z]+|\d+(?:\.\d+)?)
    """,
    re.IGNORECASE | re.MULTILINE | re.VERBOSE,
)
_REFUSAL = re.compile(
    r"\b(?:I\s+(?:can(?:no|')t|cannot|won't|will\s+not|am\s+(?:not\s+able|unable)|must\s+decline)"
    r"|I'm\s+(?:sorry|unable|not\s+able)|I\s+am\s+sorry|I\s+apologi[sz]e)\b",
    re.IGNORECASE,
)
_MAX_JSON_STARTS = 200
_EXCERPT = 160


@dataclass(frozen=True, slots=True)
class Verdict:
    """What was read from one reply: a grade on the scale, or why there is none."""

    grade: str | None
    reasoning: str
    problem: str | None = None

    @property
    def conclusive(self) -> bool:
        """True when a grade was found."""
        return self.grade is not None


def _normalise(token: object, scale: Scale) -> tuple[str | None, str]:
    """(grade on the scale or None, the token as shown to a user)."""
    if isinstance(token, bool):
        return None, str(token)
    if isinstance(token, int | float):
        shown = str(token)
        if isinstance(token, float) and token.is_integer():
            token = int(token)
        cand = str(token)
    elif isinstance(token, str):
        shown = token.strip()
        cand = shown.upper()
        try:
            f = float(cand)
        except ValueError:
            pass
        else:
            if f.is_integer():
                cand = str(int(f))
    else:
        return None, json.dumps(token)[:40]
    return (cand if cand in scale.values else None), shown


def _json_candidates(reply: str) -> list[tuple[int, object, str | None]]:
    """(end position, grade value, reasoning) for JSON objects holding a ``grade`` key."""
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"\{", reply)][-_MAX_JSON_STARTS:]
    found: list[tuple[int, object, str | None]] = []
    covered_until = -1
    for s in starts:
        if s < covered_until:
            continue
        try:
            obj, end = decoder.raw_decode(reply, s)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        keys = {str(k).lower(): k for k in obj}
        if "grade" not in keys:
            continue
        reasoning = obj.get(keys["reasoning"]) if "reasoning" in keys else None
        found.append((end, obj[keys["grade"]], reasoning if isinstance(reasoning, str) else None))
        covered_until = end
    return found


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 3] + "..."


def parse_verdict(reply: str | None, scale: Scale, *, refusal: str | None = None) -> Verdict:
    """Read the verdict from a judge's reply text (see the module docstring for the rules).

    ``refusal`` is the API's refusal message, when the server gave one. Only the judge's
    reply is read here: the prompt's content (and so the agent's answer) never is.
    """
    text = reply or ""
    candidates: list[tuple[int, object, str]] = []
    for m in _LINE.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        candidates.append((m.end(), m.group("tok"), text[:line_start].strip()))
    for end, value, reasoning in _json_candidates(text):
        before = text[: text.rfind("{", 0, end)].strip()
        candidates.append((end, value, reasoning if reasoning is not None else before))
    if candidates:
        _, token, reasoning = max(candidates, key=lambda c: c[0])
        grade, shown = _normalise(token, scale)
        if grade is None:
            allowed = ", ".join(scale.grades)
            return Verdict(
                None,
                reasoning,
                f"the verdict {shown!r} is not on the {scale.name} scale ({allowed})",
            )
        return Verdict(grade, reasoning)
    if refusal:
        return Verdict(None, "", f"the judge refused: {_excerpt(refusal)}")
    if not text.strip():
        return Verdict(None, "", "the judge's reply was empty")
    if _REFUSAL.search(text):
        return Verdict(None, text.strip(), f"the judge refused: {_excerpt(text)!r}")
    return Verdict(None, text.strip(), f"no verdict in the judge's reply: {_excerpt(text)!r}")
