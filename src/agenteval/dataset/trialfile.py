"""Trial files: trials recorded anywhere (logs, traces, other tools), ready to score (SPEC §2.2).

A trial file is JSON Lines, one trial object per line (blank lines skipped), or — when its
name ends in ``.json`` — one JSON array of trial objects. Only ``case_id`` is required;
every other field has a default (``repeat`` 0, no output, no tool calls, unknown latency and
usage). A tool call needs only ``name`` and ``arguments`` and may be written in the OpenAI
(``{"type": "function", "function": {"name", "arguments"}}``), Anthropic (``input``) or
LangChain (``args``) shape. A line of a run's ``trials.jsonl`` is also a valid trial (its
``scores`` are ignored: they are recomputed).

Every problem is an :class:`~agenteval.errors.InputError` naming the file, the line and the
field: malformed JSON, a record that is not an object, a missing or empty ``case_id``, a wrong
type, NaN/Infinity, invalid UTF-8, two trials with the same ``(case_id, repeat)``, or a file
with no trials at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from agenteval.dataset.records import (
    Row,
    checked_file,
    iter_json_array,
    iter_json_lines,
    validate_row,
)
from agenteval.errors import InputError
from agenteval.trials.trial import Trial

__all__ = ["iter_numbered_trials", "iter_trial_file"]


def iter_trial_file(path: str | Path) -> Iterator[Trial]:
    """Yield the validated trials of a trial file, in file order, streaming JSON Lines.

    The path is checked at once (InputError: not found, a directory, not a regular file);
    every later problem is an InputError raised while iterating, including a duplicate
    ``(case_id, repeat)`` (naming both lines) and an empty file. Only the keys already seen
    are kept in memory. A ``.json`` file is one JSON array and is loaded whole.
    """
    return (trial for _, trial in iter_numbered_trials(path))


def iter_numbered_trials(path: str | Path) -> Iterator[tuple[int | None, Trial]]:
    """Like :func:`iter_trial_file`, with the line each trial starts on (for messages)."""
    p = checked_file(path, "trial")
    rows = iter_json_array(p, "trials") if p.suffix.lower() == ".json" else iter_json_lines(p)
    return _validated(p, rows)


def _validated(p: Path, rows: Iterator[Row]) -> Iterator[tuple[int | None, Trial]]:
    seen: dict[tuple[str, int], int | None] = {}
    for row in rows:
        trial = validate_row(Trial, row, p, "a trial")
        first = seen.get(trial.key, -1)
        if first != -1:
            at = f"first at line {first}" if first is not None else "seen before"
            raise InputError(
                f"duplicate trial for case_id {trial.case_id!r} repeat {trial.repeat} ({at});"
                " give repeats distinct 'repeat' numbers",
                file=p,
                line=row.line,
                field="repeat" if "repeat" in row.data else "case_id",
            )
        seen[trial.key] = row.line
        yield row.line, trial
    if not seen:
        raise InputError("contains no trials", file=p)
