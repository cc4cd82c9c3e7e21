"""The run directory: ``run.json`` + ``cases.jsonl`` + ``trials.jsonl`` (SPEC §2.4).

- ``run.json`` is the header: format version, run id, kind, times, agenteval version, the
  agent (secrets removed), the dataset (path and content hash), the scorers, the price
  table, the settings and, once finished, the summary. It is replaced atomically.
- ``cases.jsonl`` is a snapshot of the validated cases, so that ``rescore``, ``judge`` and
  ``report`` never depend on the dataset file still being there unchanged.
- ``trials.jsonl`` holds one trial per line with its ``scores``; each line is appended and
  flushed as the trial finishes, so a crash loses nothing but the trials in flight.
- ``run.lock`` is the writer's lock file (:mod:`agenteval.runlock`): one process writes a
  run at a time.

A new run goes only into a directory that did not exist, or was empty
(:func:`claim_new_run_dir`); a writer that wrote no trial can :meth:`RunWriter.discard`
what it made.

Readers accept every format version up to :data:`FORMAT_VERSION`; a run of format 1
(agenteval 0.1: scores without ``status``, scorers as bare names) is migrated as it is read
(see :mod:`agenteval.migrate`). A torn last line (the process died mid-write) is detected:
readers skip it, and :meth:`RunWriter.open_resume` cuts it off and says so.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import from_json

from agenteval import __version__
from agenteval.case import Case
from agenteval.errors import InputError, cannot_write
from agenteval.migrate import migrate_header
from agenteval.runlock import LOCK, RunLock
from agenteval.score import Score
from agenteval.scorer_spec import ScorerSpec
from agenteval.trial import Trial
from agenteval.untrusted import replace_surrogates

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


def _trial_line(
    trial: Trial, scores: dict[str, Score], cache: dict[_ScoreKey, str], repair: bool = True
) -> str:
    # pydantic's JSON serialiser gives the same values as model_dump(mode="json") followed by
    # json.dumps, several times faster; the trial object always ends with "}".
    exclude = {"scores"} if isinstance(trial, TrialRecord) else None
    try:
        text = trial.model_dump_json(exclude=exclude)
    except ValueError:  # a lone surrogate from the agent: not encodable, written as U+FFFD
        if not repair:
            raise  # the caller repairs the trial itself (the runner counts replacements)
        text = replace_surrogates(_dumps(trial.model_dump(mode="json", exclude=exclude)))
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
    """Appends trials to a run directory, one flushed line each, holding the run's lock.

    Made by :meth:`create` (a new run) or :meth:`open_resume` (continue one). Either holds
    the exclusive :class:`~agenteval.runlock.RunLock` of the directory until :meth:`close`.
    """

    def __init__(
        self,
        run_dir: Path,
        header: RunHeader,
        fh: IO[str],
        *,
        lock: RunLock | None = None,
        fresh: bool = False,
        created_dir: bool = False,
    ) -> None:
        self.run_dir = run_dir
        self.header = header
        self._fh = fh
        self._lock = lock
        self.fresh = fresh
        """True for a run this writer created (False after :meth:`open_resume`)."""
        self.created_dir = created_dir
        """True when this writer also created the directory (it did not exist before)."""
        self.written = 0
        self._frags: dict[_ScoreKey, str] = {}
        self.observer: Callable[[Trial, dict[str, Score]], None] | None = None
        """Called after each append (e.g. a live summary), never for resumed trials."""

    @classmethod
    def create(
        cls,
        run_dir: str | Path,
        header: RunHeader,
        *,
        overwrite: bool = False,
        command: str = "agenteval",
    ) -> RunWriter:
        """Start a new run directory (see :func:`claim_new_run_dir` for what is refused)."""
        d = Path(run_dir)
        created, lock = claim_new_run_dir(d, command, overwrite=overwrite)
        try:
            write_header(d, header)
            fh = open(d / TRIALS, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except BaseException:
            _remove_new_run(d, created)
            lock.release()
            raise
        return cls(d, header, fh, lock=lock, fresh=True, created_dir=created)

    @classmethod
    def open_resume(
        cls,
        run_dir: str | Path,
        *,
        command: str = "agenteval run --resume",
        check: Callable[[RunHeader], None] | None = None,
    ) -> tuple[RunWriter, set[tuple[str, int]], list[str]]:
        """Reopen a run to continue it, under its lock.

        ``check(header)`` raises to refuse the resume (a different fingerprint, say); it
        runs before the lock file is touched, and again once the lock is held, before
        anything is changed. Returns the writer, the
        (case_id, repeat) keys already recorded, and notes on what was repaired: a torn last
        line (the process died mid-write) is cut off, and trials that were cancelled by an
        interrupt are dropped so that they run again.
        """
        d = Path(run_dir)
        header = read_header(d)  # not a run, or not this run: refused before any write
        if check is not None:
            check(header)
        lock = RunLock.acquire(d, command)
        try:
            header = read_header(d)
            if check is not None:
                check(header)
            done, notes = _repair_trials(d / TRIALS)
            fh = open(d / TRIALS, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except BaseException:
            lock.release()
            raise
        w = cls(d, header, fh, lock=lock)
        w.written = len(done)
        return w, done, notes

    def append(self, trial: Trial, scores: dict[str, Score], *, repair: bool = True) -> None:
        """Write one trial line and flush it to the OS; then tell the observer, if any.

        ``repair=False``: a trial that cannot be encoded raises ValueError (nothing is
        written) instead of being written with U+FFFD for its lone surrogates."""
        line = _trial_line(trial, scores, self._frags, repair)
        try:
            self._fh.write(line)
        except UnicodeEncodeError:  # a lone surrogate (encoding fails before any write)
            self._fh.write(replace_surrogates(line))
        self._fh.flush()
        self.written += 1
        if self.observer is not None:
            self.observer(trial, scores)

    def finish(self, summary: dict[str, Any] | None) -> None:
        """Record the summary and the finish time in ``run.json``."""
        self.header.summary = summary
        self.header.finished_at = datetime.now(UTC)
        write_header(self.run_dir, self.header)

    def discard(self) -> bool:
        """Undo a fresh run in which no trial was written: remove the directory if this
        writer created it, else only the files it wrote. Then close. Returns whether
        anything was removed (never, for a resumed run or once a trial was written)."""
        removable = self.fresh and self.written == 0
        self._fh.close()
        if removable:
            _remove_new_run(self.run_dir, self.created_dir)
        self.close()
        return removable

    def close(self) -> None:
        """Close the trial file and release the lock (idempotent; the lock is released
        even when closing fails, e.g. a full disk refusing the last buffered bytes)."""
        try:
            self._fh.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _repair_trials(path: Path) -> tuple[set[tuple[str, int]], list[str]]:
    """The keys recorded in ``path``; cut a torn last line, drop cancelled trials."""
    done: set[tuple[str, int]] = set()
    notes: list[str] = []
    if not path.exists():
        return done, notes
    keep: list[bytes] | None = None  # only built when a cancelled trial must go
    cancelled = 0
    good_end = 0
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
    return done, notes


RUN_FILES = (HEADER, HEADER + ".tmp", TRIALS, CASES, LOCK)
"""The files a run directory holds (the lock file and an interrupted header write too)."""
_SCRATCH = {LOCK, HEADER + ".tmp"}
"""Files left by a writer that died before its first real write: not a run yet."""


def claim_new_run_dir(d: Path, command: str, *, overwrite: bool = False) -> tuple[bool, RunLock]:
    """Make ``d`` a new run's directory and take its lock; ``(created, lock)``.

    ``d`` is created when it does not exist (``mkdir`` is exclusive: of two processes
    creating it at once, one creates it and the other finds it), else it must be an empty
    directory (or hold only a lock file left by a writer that died at once). A directory
    holding a run (``run.json``) is refused unless ``overwrite``; any other non-empty
    directory is refused, and nothing is written into it. The check is repeated under the
    lock, so of two processes starting a run in one new directory exactly one proceeds and
    the other gets one InputError line.
    """
    created = False
    if not d.exists() and not d.is_symlink():
        try:
            d.parent.mkdir(parents=True, exist_ok=True)
            d.mkdir()
            created = True
        except FileExistsError:
            pass  # made by someone else meanwhile: checked like any existing directory
        except OSError as e:  # read-only or full: exit 5; a file in the way: exit 2
            raise cannot_write(e, d, "the run directory") from None
    if not d.is_dir():
        raise InputError("exists and is not a directory", file=d)
    if not created:
        _check_reusable(d, overwrite)
    lock = RunLock.acquire(d, command)
    try:
        _check_reusable(d, overwrite)
    except BaseException:
        lock.release()
        raise
    return created, lock


def _check_reusable(d: Path, overwrite: bool) -> None:
    try:
        names = set(os.listdir(d)) - _SCRATCH
    except OSError as e:
        raise InputError(f"cannot be read ({e.strerror or e})", file=d) from None
    if not names:
        return
    if HEADER in names:
        if overwrite:
            return
        raise InputError(
            "already holds a run; use --resume to continue it or choose another --out", file=d
        )
    shown = ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
    raise InputError(
        f"is not empty and holds no agenteval run ({shown}); choose a new or empty directory",
        file=d,
    )


def _remove_new_run(d: Path, created: bool) -> None:
    """Remove a new run: the whole directory if we made it, else only our files."""
    if created:
        shutil.rmtree(d, ignore_errors=True)
        return
    for name in RUN_FILES:
        with contextlib.suppress(OSError):
            (d / name).unlink()


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
