"""A per-run index of ``trials.jsonl`` for paging and filtering without re-reading it.

:class:`TrialIndex` reads the trial file once, keeping for each trial its byte offset and
the few fields the viewer's filters need (:class:`Row`). :meth:`TrialIndex.refresh` reads
only the bytes appended since the last call (a run still being written grows), and starts
over when the file shrank or was replaced. A torn last line (no newline yet) is left for the
next refresh, as every reader of a run does.

A large file can be read in steps (``refresh(max_bytes=...)``): the rows read so far are
usable at once, and :attr:`TrialIndex.pending` says more remains. The file is opened for
reading only. A line that is not a trial (bad JSON, not an object, a
second trial for one (case_id, repeat)) makes the index *broken*: :attr:`TrialIndex.error`
holds the one-line reason (``trials.jsonl:12: not valid JSON (...)``), worded as
:func:`agenteval.rundir.parse_trial_line` and :func:`agenteval.rundir.iter_trials` word it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from agenteval._util.regular import NotRegularFile, open_regular
from agenteval.errors import InputError
from agenteval.rundir import TRIALS, TrialRecord, parse_trial_line
from agenteval.scoring.score import legacy_status

PREVIEW_CHARS = 200
"""How much of an answer the index keeps: the trials table shows it and text search
matches within it."""


@dataclass(slots=True)
class Row:
    """What the trials table shows and filters on, for one trial."""

    offset: int
    case_id: str
    repeat: int
    answered: bool
    cause: str | None
    message: str
    failed: tuple[str, ...]
    errors: tuple[str, ...]
    latency_s: float | None
    preview: str

    @property
    def status(self) -> str:
        """``failure`` (the trial failed), ``fail`` (some scorer failed), else ``pass``."""
        if self.cause is not None:
            return "failure"
        return "fail" if self.failed else "pass"


def score_status(d: Any) -> str:
    """The status of one stored score (format 2: its ``status``; format 1: derived as
    :func:`agenteval.scoring.score.legacy_status` and the threshold say)."""
    if not isinstance(d, dict):
        return "error"
    status = d.get("status")
    if isinstance(status, str):
        return status
    value, error = d.get("value"), d.get("error")
    legacy = legacy_status(value, str(d.get("reason", "")), error)
    if legacy is not None:
        return legacy
    threshold = d.get("threshold", 1.0)
    if not isinstance(value, int | float) or not isinstance(threshold, int | float):
        return "error"
    return "passed" if value >= threshold else "failed"


def _row(data: Any, offset: int) -> Row | None:
    """The Row of a parsed line, or None when it is not well formed (checked precisely by
    :func:`parse_trial_line` then)."""
    if type(data) is not dict:
        return None
    cid = data.get("case_id")
    if isinstance(cid, int) and not isinstance(cid, bool):
        cid = str(cid)
    repeat = data.get("repeat", 0)
    scores = data.get("scores") or {}
    failure = data.get("failure")
    latency = data.get("latency")
    if (
        type(cid) is not str
        or not cid.strip()
        or type(repeat) is not int
        or repeat < 0
        or type(scores) is not dict
        or (failure is not None and (type(failure) is not dict or "cause" not in failure))
    ):
        return None
    failed: list[str] = []
    errors: list[str] = []
    for name, s in scores.items():
        st = score_status(s)
        if st == "failed":
            failed.append(name)
        elif st == "error":
            errors.append(name)
    total = latency.get("total_s") if isinstance(latency, dict) else latency
    output = data.get("output")
    return Row(
        offset=offset,
        case_id=cid,
        repeat=repeat,
        answered=output is not None,
        cause=str(failure["cause"]) if failure else None,
        message=str(failure.get("message", "")) if failure else "",
        failed=tuple(failed),
        errors=tuple(errors),
        latency_s=float(total) if isinstance(total, int | float) else None,
        preview=output[:PREVIEW_CHARS] if isinstance(output, str) else "",
    )


class TrialIndex:
    """Byte offsets and filter fields of every trial of one run (see the module doc)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / TRIALS
        self.rows: list[Row] = []
        self.error: str | None = None
        self.scorers: dict[str, None] = {}
        self.causes: dict[str, None] = {}
        self._done = 0  # bytes consumed: the end of the last complete line
        self._lineno = 0
        self._ident: tuple[int, int] | None = None
        self._seen: dict[tuple[str, int], int] = {}
        self.pending = False
        """True when the last :meth:`refresh` stopped at its byte budget: more to read."""

    @property
    def read_bytes(self) -> int:
        """Bytes of the file indexed so far (up to the end of the last complete line)."""
        return self._done

    def _reset(self) -> None:
        self.__init__(self.path.parent)  # type: ignore[misc]

    def refresh(self, max_bytes: int | None = None) -> bool:
        """Read what was appended since the last call (at most about ``max_bytes`` of it:
        whole lines, at least one; None: all of it); True when rows were added or the index
        started over. :attr:`pending` says whether unread bytes remain. Raises nothing:
        problems land in :attr:`error`."""
        self.pending = False
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._reset()
            self.error = f"{self.path.parent}: is not a run directory (no trials.jsonl)"
            return False
        except OSError as e:
            self._reset()
            self.error = f"{self.path}: cannot be read ({e.strerror or e})"
            return False
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):  # a FIFO blocks
            self._reset()
            self.error = f"{self.path}: is not a regular file (a FIFO, device or socket); not read"
            return False
        ident = (st.st_dev, st.st_ino)
        restarted = False
        if ident != self._ident or st.st_size < self._done:
            self._reset()
            self._ident = ident
            restarted = True
        left = st.st_size - self._done
        if self.error is not None or left == 0:
            return restarted
        want = left if max_bytes is None else min(left, max_bytes)
        try:
            with open_regular(self.path) as f:
                f.seek(self._done)
                data = f.read(want)
                while b"\n" not in data and len(data) < left:  # a line longer than want
                    more = f.read(want)
                    if not more:
                        break
                    data += more
        except NotRegularFile as e:
            self._reset()
            self.error = e.strerror
            return False
        except OSError as e:
            self.error = f"{self.path}: cannot be read ({e.strerror or e})"
            return restarted
        self.pending = len(data) < left
        end = data.rfind(b"\n")
        if end < 0:
            return restarted
        added = self._add(data[: end + 1])
        return restarted or added

    def _add(self, chunk: bytes) -> bool:
        name = str(self.path)
        pos = 0
        before = len(self.rows)
        while pos < len(chunk):
            nl = chunk.index(b"\n", pos)
            raw = chunk[pos : nl + 1]
            offset = self._done + pos
            pos = nl + 1
            self._lineno += 1
            if not raw.strip():
                continue
            try:
                row = _row(from_json(raw), offset)
            except ValueError:
                row = None
            if row is None:
                try:  # the exact reason, as every reader of a run words it
                    rec = parse_trial_line(raw, file=name, lineno=self._lineno)
                    data = rec.model_dump(mode="json", exclude={"scores"})
                    data["scores"] = {k: {"status": s.status} for k, s in rec.scores.items()}
                    row = _row(data, offset)
                except InputError as e:
                    self.error = str(e)
                if row is None:
                    self.error = self.error or f"{name}:{self._lineno}: not a trial"
                    break
            key = (row.case_id, row.repeat)
            first = self._seen.setdefault(key, self._lineno)
            if first != self._lineno:
                self.error = (
                    f"{name}:{self._lineno}: a second trial for case '{row.case_id}'"
                    f" repeat {row.repeat} (first at line {first})"
                )
                break
            self.rows.append(row)
            self.scorers.update(dict.fromkeys(row.failed))
            self.scorers.update(dict.fromkeys(row.errors))
            if row.cause is not None:
                self.causes[row.cause] = None
        self._done += pos
        return len(self.rows) > before

    def record(self, i: int) -> tuple[TrialRecord, bytes]:
        """The full trial ``i`` (0-based, file order) and its raw line, read at its offset.

        IndexError when there is no such trial; InputError when the line no longer parses.
        """
        row = self.rows[i]
        with open_regular(self.path) as f:
            f.seek(row.offset)
            raw = f.readline()
        rec = parse_trial_line(raw, file=str(self.path), lineno=i + 1)
        return rec, raw

    def filter(
        self,
        *,
        failed: str = "",
        tag: str = "",
        cause: str = "",
        text: str = "",
        tags: Mapping[str, Iterable[str]] | None = None,
    ) -> list[int]:
        """Indices of the trials that match every filter given (:func:`filter_rows`)."""
        return filter_rows(self.rows, failed=failed, tag=tag, cause=cause, text=text, tags=tags)


def filter_rows(
    rows: list[Row],
    *,
    failed: str = "",
    tag: str = "",
    cause: str = "",
    text: str = "",
    tags: Mapping[str, Iterable[str]] | None = None,
) -> list[int]:
    """Indices of the ``rows`` that match every filter given (an empty one matches all).

    ``failed``: a scorer name (the trial's score is ``failed``), or ``*`` for any
    scorer. ``tag``: the trial's case has that tag (``tags``: case id → tags). ``cause``:
    the trial failed with that cause, ``*`` for any, ``-`` for none. ``text``:
    case-insensitive substring of the case id, the failure message, a tag, or the
    first :data:`PREVIEW_CHARS` characters of the answer.
    """
    tags = tags or {}
    needle = text.casefold()
    out: list[int] = []
    for i, r in enumerate(rows):
        if failed and (not r.failed if failed == "*" else failed not in r.failed):
            continue
        if cause:
            if cause == "*":
                if r.cause is None:
                    continue
            elif cause == "-":
                if r.cause is not None:
                    continue
            elif r.cause != cause:
                continue
        if tag and tag not in tags.get(r.case_id, ()):
            continue
        if needle:
            hay = "\n".join((r.case_id, r.message, r.preview, *tags.get(r.case_id, ())))
            if needle not in hay.casefold():
                continue
        out.append(i)
    return out
