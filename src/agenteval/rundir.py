"""The run directory: ``run.json`` + ``cases.jsonl`` + ``trials.jsonl`` (SPEC §2.4).

- ``run.json`` is the header: format version, run id, kind, times, agenteval version, the
  agent (secrets removed), the dataset (path and content hash), the scorers, the price
  table, the settings and, once finished, the summary. It is replaced atomically.
- ``cases.jsonl`` is a snapshot of the validated cases, so that ``rescore``, ``judge`` and
  ``report`` never depend on the dataset file still being there unchanged.
- ``trials.jsonl`` holds one trial per line with its ``scores``; each line is appended and
  flushed as the trial finishes, so a crash loses nothing but the trials in flight.

Readers accept every format version up to :data:`FORMAT_VERSION`; a run of format 1
(agenteval 0.1: scores without ``status``, scorers as bare names) is migrated as it is read
(see :mod:`agenteval.migrate`). A torn last line (the process died mid-write) is detected:
readers skip it, and :meth:`RunWriter.open_resume` cuts it off and says so.
"""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import from_json

from agenteval import __version__
from agenteval.case import Case
from agenteval.errors import InputError
from agenteval.migrate import migrate_header
from agenteval.score import Score
from agenteval.scorer_spec import ScorerSpec
from agenteval.trial import Trial

FORMAT_VERSION = 2
"""2: every score has a ``status``; ``run.json`` records each scorer's spec (agenteval 0.2)."""
HEADER = "run.json"
CASES = "cases.jsonl"
TRIALS = "trials.jsonl"

RunKind = Literal["run", "score", "rescore", "judge"]


class DatasetRef(BaseModel):
    """Where the cases came from."""

    model_config = ConfigDict(extra="allow")

    path: str | None = None
    sha256: str | None = Field(default=None, description="Hash of the validated cases.")
    cases: int = Field(default=0, description="How many cases.")


class RunHeader(BaseModel):
    """``run.json``."""

    model_config = ConfigDict(extra="allow")

    format_version: int = FORMAT_VERSION
    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    kind: RunKind = "run"
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    agenteval_version: str = __version__
    agent: dict[str, Any] | None = Field(default=None, description="Secrets removed.")
    dataset: DatasetRef = Field(default_factory=DatasetRef)
    scorers: list[ScorerSpec] = Field(
        default_factory=list, description="Every scorer of the run, in order: its spec."
    )
    prices: dict[str, Any] | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    source_run: str | None = Field(default=None, description="For rescore/judge: the input run.")
    summary: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate_header(data)  # format 1: scorer names become specs

    @property
    def scorer_names(self) -> list[str]:
        """The scorers' names, in order."""
        return [s.name for s in self.scorers]

    @property
    def safety_scorers(self) -> list[str]:
        """Names of the scorers whose spec has ``safety`` set (the gate blocks on them)."""
        return [s.name for s in self.scorers if s.safety]

    def scorer_spec(self, name: str) -> ScorerSpec | None:
        """The spec of the scorer ``name``, None when the run has no such scorer."""
        return next((s for s in self.scorers if s.name == name), None)


class TrialRecord(Trial):
    """A trial as stored in a run: the observation plus its scores."""

    model_config = ConfigDict(extra="ignore", arbitrary_types_allowed=True)

    scores: dict[str, Score] = Field(default_factory=dict)


def trial_line(trial: Trial, scores: dict[str, Score]) -> str:
    """Serialise one trial and its scores as a ``trials.jsonl`` line (with newline)."""
    return _trial_line(trial, scores, {})


_ScoreKey = tuple[str, float | None, str, float, str | None, str]
_CACHE_MAX = 4096  # distinct (scorer, score) fragments remembered by one writer/reader


def _cacheable_zero(x: float | None) -> bool:
    """False for -0.0, which equals 0.0 as a dict key but must keep its sign."""
    return x is None or x != 0.0 or math.copysign(1.0, x) > 0


def _scores_json(scores: dict[str, Score], cache: dict[_ScoreKey, str]) -> str:
    """``{"name":{...},...}``. The fragment of a plain score (no judge usage) is serialised
    once per writer and reused for equal scores: most "not applicable" scores repeat exactly.
    Equal keys can differ only in how a number is spelled (``1`` vs ``1.0``), never in value.
    """
    parts = []
    for name, s in scores.items():
        frag = None
        if not s.usage:
            key = (name, s.value, s.reason, s.threshold, s.error, s.status)
            hashable = True
            try:
                frag = cache.get(key)
            except TypeError:  # an unhashable field in a hand-made Score
                hashable = False
            if frag is None:
                frag = _dumps(name) + ":" + _dumps(s.to_dict())
                if hashable and _cacheable_zero(s.value):
                    if len(cache) >= _CACHE_MAX:
                        cache.clear()
                    cache[key] = frag
        else:
            frag = _dumps(name) + ":" + _dumps(s.to_dict())
        parts.append(frag)
    return "{" + ",".join(parts) + "}"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_dumps = _ENCODER.encode  # json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _trial_line(trial: Trial, scores: dict[str, Score], cache: dict[_ScoreKey, str]) -> str:
    # pydantic's JSON serialiser gives the same values as model_dump(mode="json") followed by
    # json.dumps, several times faster; the trial object always ends with "}".
    text = trial.model_dump_json(exclude={"scores"} if isinstance(trial, TrialRecord) else None)
    return text[:-1] + ',"scores":' + _scores_json(scores, cache) + "}\n"


_NO = object()


def _score_from(d: Any, cache: dict[tuple[Any, ...], Score]) -> Score:
    """``Score.from_dict(d)``, reusing the Score of an identical plain stored score."""
    if type(d) is not dict or d.get("usage"):
        return Score.from_dict(d)
    value, reason, threshold, error, status = (
        d.get("value"),
        d.get("reason", _NO),
        d.get("threshold", _NO),
        d.get("error"),
        d.get("status"),
    )
    # only exact JSON types are cached: True == 1 and "1" vs 1 must not share an entry
    if (
        (value is None or (type(value) is float and _cacheable_zero(value)))
        and type(reason) is str
        and (threshold is _NO or (type(threshold) is float and _cacheable_zero(threshold)))
        and (error is None or type(error) is str)
        and (status is None or type(status) is str)
    ):
        key = (value, reason, threshold, error, status)
        hit = cache.get(key)
        if hit is None:
            hit = Score.from_dict(d)
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            cache[key] = hit
        return hit
    return Score.from_dict(d)


def parse_trial_line(line: str | bytes, *, file: str, lineno: int) -> TrialRecord:
    """Parse one stored trial line; raise InputError naming file and line."""
    return _parse_trial_line(line, file, lineno, {})


def _parse_trial_line(
    line: str | bytes, file: str, lineno: int, cache: dict[tuple[Any, ...], Score]
) -> TrialRecord:
    try:
        data = from_json(line)  # same values as json.loads, about twice as fast
    except ValueError:
        try:  # json.loads decides what is valid and words the error
            data = json.loads(line)
        except ValueError as e:
            raise InputError(f"not valid JSON ({e})", file=file, line=lineno) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", file=file, line=lineno) from None
    if not isinstance(data, dict):
        raise InputError("a trial must be a JSON object", file=file, line=lineno)
    raw_scores = data.pop("scores", None) or {}
    try:
        trial = TrialRecord.model_validate(data)
        scores = {str(k): _score_from(v, cache) for k, v in raw_scores.items()}
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(err["msg"], file=file, line=lineno, field=field) from None
    except (TypeError, ValueError, AttributeError) as e:
        raise InputError(f"bad score: {e}", file=file, line=lineno, field="scores") from None
    except RecursionError:
        raise InputError("JSON nested too deeply", file=file, line=lineno) from None
    trial.scores = scores
    return trial


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_lines_before(path: Path, end: int) -> list[bytes]:
    with open(path, "rb") as f:
        return f.read(end).splitlines(keepends=True)


def write_header(run_dir: Path, header: RunHeader) -> None:
    """Write (or replace, atomically) ``run.json``."""
    _atomic_write(run_dir / HEADER, header.model_dump_json(indent=2) + "\n")


class RunWriter:
    """Appends trials to a run directory, one flushed line each."""

    def __init__(self, run_dir: Path, header: RunHeader, fh: IO[str]) -> None:
        self.run_dir = run_dir
        self.header = header
        self._fh = fh
        self.written = 0
        self._frags: dict[_ScoreKey, str] = {}
        self.observer: Callable[[Trial, dict[str, Score]], None] | None = None
        """Called after each append (e.g. a live summary), never for resumed trials."""

    @classmethod
    def create(
        cls, run_dir: str | Path, header: RunHeader, *, overwrite: bool = False
    ) -> RunWriter:
        """Start a new run directory. Refuses to write over an existing run."""
        d = Path(run_dir)
        if d.exists() and not d.is_dir():
            raise InputError("exists and is not a directory", file=d)
        if (d / HEADER).exists() and not overwrite:
            raise InputError(
                "already holds a run; use --resume to continue it or choose another --out",
                file=d,
            )
        d.mkdir(parents=True, exist_ok=True)
        write_header(d, header)
        fh = open(d / TRIALS, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        return cls(d, header, fh)

    @classmethod
    def open_resume(cls, run_dir: str | Path) -> tuple[RunWriter, set[tuple[str, int]], list[str]]:
        """Reopen a run to continue it.

        Returns the writer, the (case_id, repeat) keys already recorded, and notes on what
        was repaired: a torn last line (the process died mid-write) is cut off, and trials
        that were cancelled by an interrupt are dropped so that they run again.
        """
        d = Path(run_dir)
        header = read_header(d)
        path = d / TRIALS
        done: set[tuple[str, int]] = set()
        notes: list[str] = []
        keep: list[bytes] | None = None  # only built when a cancelled trial must go
        cancelled = 0
        good_end = 0
        if path.exists():
            with open(path, "rb") as f:
                lines = 0
                for raw in f:
                    lines += 1
                    if not raw.endswith(b"\n"):
                        notes.append(f"{path}:{lines}: dropped a torn last line ({len(raw)} bytes)")
                        break
                    good_end += len(raw)
                    if not raw.strip():
                        continue
                    rec = parse_trial_line(raw, file=str(path), lineno=lines)
                    if rec.failure is not None and rec.failure.cause == "cancelled":
                        if keep is None:
                            keep = _read_lines_before(path, good_end - len(raw))
                        cancelled += 1
                        continue
                    if keep is not None:
                        keep.append(raw)
                    done.add(rec.key)
            if keep is not None:
                notes.append(f"{cancelled} cancelled trial(s) will run again")
                _atomic_write_bytes(path, b"".join(keep))
            else:
                with open(path, "r+b") as f:
                    f.truncate(good_end)
        fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        w = cls(d, header, fh)
        w.written = len(done)
        return w, done, notes

    def append(self, trial: Trial, scores: dict[str, Score]) -> None:
        """Write one trial line and flush it to the OS; then tell the observer, if any."""
        self._fh.write(_trial_line(trial, scores, self._frags))
        self._fh.flush()
        self.written += 1
        if self.observer is not None:
            self.observer(trial, scores)

    def finish(self, summary: dict[str, Any] | None) -> None:
        """Record the summary and the finish time in ``run.json``."""
        self.header.summary = summary
        self.header.finished_at = datetime.now(UTC)
        write_header(self.run_dir, self.header)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_header(run_dir: str | Path) -> RunHeader:
    """Read ``run.json``; InputError when the directory is not a readable run."""
    d = Path(run_dir)
    if not d.is_dir():
        raise InputError("is not a run directory (not found or not a directory)", file=d)
    path = d / HEADER
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("is not a run directory (no run.json)", file=d) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=path) from None
    try:
        header = RunHeader.model_validate_json(text)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise InputError(err["msg"], file=path, field=field) from None
    if header.format_version > FORMAT_VERSION:
        raise InputError(
            f"format version {header.format_version} is newer than this agenteval reads"
            f" ({FORMAT_VERSION}); upgrade agenteval",
            file=path,
            field="format_version",
        )
    return header


def iter_trials(run_dir: str | Path) -> Iterator[TrialRecord]:
    """Stream the trials of a run, skipping a torn last line.

    A second line for the same (case_id, repeat) is an InputError naming both lines: a
    run holds each trial once, and counting one twice would skew every statistic.
    """
    path = Path(run_dir) / TRIALS
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise InputError("is not a run directory (no trials.jsonl)", file=path.parent) from None
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror or e})", file=path) from None
    cache: dict[tuple[Any, ...], Score] = {}
    seen: dict[tuple[str, int], int] = {}
    name = str(path)
    with f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                break  # torn last line: the writer died mid-line
            if raw.strip():
                rec = _parse_trial_line(raw, name, lineno, cache)
                first = seen.setdefault(rec.key, lineno)
                if first != lineno:
                    raise InputError(
                        f"a second trial for case '{rec.case_id}' repeat {rec.repeat}"
                        f" (first at line {first})",
                        file=name,
                        line=lineno,
                    )
                yield rec


def write_cases(run_dir: Path, cases: Iterator[Case] | list[Case]) -> None:
    """Write the cases snapshot."""
    with open(run_dir / CASES, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(c.model_dump_json(exclude_defaults=True) + "\n")


def cases_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / CASES
