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

Only what the judge wrote itself counts, never what it *quotes*:

- a verdict line or JSON object inside a restated prompt fence (from a line
  ``[BEGIN <label> FENCE-…]`` to the line ``[END <label> FENCE-…]`` with the same label and
  token, or to the end of the reply when it is never closed) is ignored; content cannot
  close such a fence early, since it cannot contain the boundary;
- a verdict line inside a Markdown code block (from a line of three or more backticks or
  tildes to its closing line, or to the end of the reply) is ignored; a JSON verdict
  there counts (structured replies come that way) unless its text occurs in the fenced
  material of the prompt (``quoted``: the judge is quoting the answer's JSON);
- exception: the reply's last line, when it is a verdict line, counts for a reply that
  ended normally (that is where the judge was told to put it) even inside a code block
  that is never closed — but not inside a restated prompt fence, and not when its text
  (less Markdown) occurs in ``quoted``: a judge that echoes the answer in an unclosed
  block and stops is not graded by the answer's last line.

A reply cut off by the token limit (``finish_reason="length"``) never reached its final
verdict line, so it is *inconclusive* unless a verdict outside quoted material came before
the cut: its last (cut) line is not read, nor is any verdict whose text (less Markdown)
occurs in the fenced material of the prompt (``quoted``): a judge restating the answer
without fence lines must not be graded by the answer's own ``GRADE: C``.

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
from collections.abc import Sequence
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
_FENCE_OPEN = re.compile(r"\[BEGIN (\S+) (FENCE-[0-9A-Za-z]+)\]")
_LINES = re.compile(r"[^\n]*\n?")
_CODE_FENCE = re.compile(r"^[ \t>]{0,8}(`{3,}|~{3,})")
_MARKDOWN_LEAD = " \t>*_#`~-[("
CUT_OFF = "length"
"""The ``finish_reason`` of a reply cut off by the token limit."""


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


def quoted_spans(reply: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(restated-fence spans, code-block spans) of ``reply`` as (start, end) offsets.

    See the module docstring: a fence runs from its ``[BEGIN label FENCE-…]`` line to the
    ``[END label FENCE-…]`` line with the same label and token; a code block from its
    line of backticks or tildes to a closing line of the same character at least as long. Either
    runs to the end of the reply when never closed.
    """
    fences: list[tuple[int, int]] = []
    codes: list[tuple[int, int]] = []
    closer: str | None = None  # the END marker of the open fence
    code: str | None = None  # the opening run of the open code block
    start = pos = 0
    for lm in _LINES.finditer(reply):
        line = lm.group(0)
        if not line:
            break
        bare = line.strip()
        if closer is not None:
            if closer in line:
                fences.append((start, pos + len(line)))
                closer = None
        elif code is not None:
            tail = bare.lstrip("> \t")
            if tail.startswith(code) and not tail.strip(code[0]):
                codes.append((start, pos + len(line)))
                code = None
        else:
            m = _FENCE_OPEN.search(line)
            c = _CODE_FENCE.match(line)
            if m is not None:
                closer, start = f"[END {m.group(1)} {m.group(2)}]", pos
            elif c is not None:
                code, start = c.group(1), pos
        pos += len(line)
    if closer is not None:
        fences.append((start, len(reply)))
    if code is not None:
        codes.append((start, len(reply)))
    return fences, codes


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= at < b for a, b in spans)


def _restated(text: str, quoted: Sequence[str]) -> bool:
    core = text.strip().lstrip(_MARKDOWN_LEAD).strip()
    return bool(core) and any(core in q for q in quoted)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 3] + "..."


def parse_verdict(
    reply: str | None,
    scale: Scale,
    *,
    refusal: str | None = None,
    finish_reason: str | None = None,
    quoted: Sequence[str] = (),
) -> Verdict:
    """Read the verdict from a judge's reply text (see the module docstring for the rules).

    ``refusal`` is the API's refusal message, when the server gave one; ``finish_reason``
    the API's (``"length"``: cut off by the token limit); ``quoted`` the texts fenced in
    the prompt (the answer, tool results...), used to recognise a cut-off reply's
    restatement of them. Only the judge's reply is read as a verdict: the prompt's content
    (and so the agent's answer) never is.
    """
    text = reply or ""
    cut = finish_reason == CUT_OFF
    fences, codes = quoted_spans(text)
    last_line_start = text.rstrip("\n").rfind("\n") + 1
    candidates: list[tuple[int, object, str]] = []
    found_any = False
    for m in _LINE.finditer(text):
        found_any = True
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start : len(text) if line_end < 0 else line_end]
        is_last = line_start >= last_line_start
        if cut:
            if is_last or _inside(line_start, fences + codes) or _restated(line, quoted):
                continue
        elif _inside(line_start, fences):
            continue  # a restated prompt fence: never the judge's own words, last line or not
        elif _inside(line_start, codes) and (not is_last or _restated(line, quoted)):
            continue
        candidates.append((m.end(), m.group("tok"), text[:line_start].strip()))
    for end, value, reasoning in _json_candidates(text):
        found_any = True
        open_at = text.rfind("{", 0, end)
        restated = _restated(text[open_at:end], quoted)
        if _inside(open_at, fences) or ((cut or _inside(open_at, codes)) and restated):
            continue
        before = text[:open_at].strip()
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
    if cut:
        return Verdict(
            None,
            text.strip(),
            "the judge's reply was cut off by the token limit before its verdict"
            " (raise --judge-max-tokens)",
        )
    if found_any:
        return Verdict(
            None,
            text.strip(),
            "the only verdicts in the judge's reply are inside material it quoted:"
            f" {_excerpt(text)!r}",
        )
    if not text.strip():
        return Verdict(None, "", "the judge's reply was empty")
    if _REFUSAL.search(text):
        return Verdict(None, text.strip(), f"the judge refused: {_excerpt(text)!r}")
    return Verdict(None, text.strip(), f"no verdict in the judge's reply: {_excerpt(text)!r}")
