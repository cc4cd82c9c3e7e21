"""Making any trial recordable: valid UTF-8 text and JSON values only.

An agent can hand back text that is not valid Unicode (a *lone surrogate* such as
``"\\ud83d"``, half of an emoji, which JSON's ``\\uXXXX`` escapes allow) or values JSON has
no form for (``object()`` in ``metadata``). Neither can be written to ``trials.jsonl``;
before this module either one crashed the run. The runner first writes a trial as it is
(the fast path: clean trials pay nothing) and only when that fails calls
:func:`recordable`:

- every lone surrogate in a string or a mapping key is replaced with U+FFFD, and the
  number of replacements is stored in the trial's ``metadata`` under
  :data:`SURROGATES_KEY`;
- a value JSON cannot encode turns the trial into an ``agent_error`` failure whose message
  names the path and the type (``metadata.handle: a value of type object cannot be
  recorded as JSON``); what the runner observed (usage, retries, latency) is kept, the
  answer is not.

Scores get the same text repair (:func:`recordable_scores`).
"""

from __future__ import annotations

import dataclasses
import re
from datetime import date, datetime, time, timedelta
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

SURROGATES_KEY = "agenteval_surrogates_replaced"
"""``Trial.metadata`` key: how many lone surrogates were replaced with U+FFFD."""

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN = (int, float, bool, type(None), datetime, date, time, timedelta)


class _Unrecordable(Exception):
    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path or 'the result'}: {what}")


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD, and how many were replaced."""
    if text.isascii():
        return text, 0
    return _SURROGATE.subn(REPLACEMENT, text)


class _Cleaner:
    """Walks a value, repairing text and finding what JSON cannot encode."""

    def __init__(self) -> None:
        self.replaced = 0

    def text(self, s: str) -> str:
        out, n = clean_text(s)
        self.replaced += n
        return out

    def value(self, v: Any, path: str) -> Any:
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, _PLAIN):
            return v
        if isinstance(v, dict):
            out: dict[Any, Any] = {}
            for k, item in v.items():
                key = self.text(k) if isinstance(k, str) else k
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise _Unrecordable(path, f"a key of type {type(k).__name__} is not JSON")
                out[key] = self.value(item, f"{path}.{key}" if path else str(key))
            return out
        if isinstance(v, list | tuple):
            return [self.value(x, f"{path}.{i}" if path else str(i)) for i, x in enumerate(v)]
        if isinstance(v, BaseModel):
            fields = type(v).model_fields
            return {k: self.value(getattr(v, k), f"{path}.{k}") for k in fields}
        try:
            plain = to_jsonable_python(v)
        except Exception:
            raise _Unrecordable(
                path, f"a value of type {type(v).__name__} cannot be recorded as JSON"
            ) from None
        return self.value(plain, path)


def recordable(trial: Trial) -> tuple[Trial, bool]:
    """A copy of ``trial`` that can be written, and whether it had to become a failure.

    See the module docstring for what is repaired and what makes the trial an
    ``agent_error``. A trial that was already recordable comes back equal.
    """
    cleaner = _Cleaner()
    fields = type(trial).model_fields
    try:
        data = {name: cleaner.value(getattr(trial, name), name) for name in fields}
        if cleaner.replaced:
            data["metadata"] = {**data["metadata"], SURROGATES_KEY: cleaner.replaced}
        return type(trial).model_validate(data), False
    except _Unrecordable as e:
        message = f"the agent's result cannot be recorded: {e}"
    except RecursionError:
        message = "the agent's result cannot be recorded: nested too deeply (or circular)"
    except ValueError as e:  # validation of the repaired data failed
        message = f"the agent's result cannot be recorded: {' '.join(str(e).split())}"
    kept = _Cleaner()  # what the runner observed: typed fields, only their text may need repair
    observed = {k: kept.value(getattr(trial, k), k) for k in ("usage", "retries", "latency")}
    failed = Trial.model_validate(
        {
            "case_id": kept.text(trial.case_id),
            "repeat": trial.repeat,
            "started_at": trial.started_at,
            **observed,
            "failure": {"cause": "agent_error", "message": kept.text(message)[:2000]},
        }
    )
    return failed, True


def recordable_scores(scores: dict[str, Score]) -> dict[str, Score]:
    """``scores`` with lone surrogates in names, reasons and errors replaced by U+FFFD."""
    out: dict[str, Score] = {}
    for name, s in scores.items():
        reason, _ = clean_text(str(s.reason))
        error = None if s.error is None else clean_text(str(s.error))[0]
        out[clean_text(str(name))[0]] = dataclasses.replace(s, reason=reason, error=error)
    return out
