"""``run.json``: the header of a run directory, its format version, and how it is read.

:class:`RunHeader` is the model of ``run.json`` (format version, run id, kind, times,
agenteval version, the agent without secrets, the dataset reference, the scorer specs, the
price table, the settings and, once finished, the summary). :func:`write_header` replaces
the file atomically; :func:`read_header` reads it, migrating a format 1 header (see
:mod:`agenteval.rundir.migrate`) and refusing a newer format, a format below 1, or two scorers
with one name, as an InputError naming the file and field.

``HEADER``, ``CASES`` and ``TRIALS`` are the names of a run directory's files.

**Shards.** A directory without ``run.json`` whose subdirectories are runs (``agenteval
monitor --replica NAME`` writes ``DIR/<window>/<NAME>/``, one shard per replica) is read
as one run: :func:`shard_dirs` lists the shards (sorted by name; a subdirectory may be a
symbolic link to a shard elsewhere), and :func:`read_header` merges their headers, which
must agree on the kind, the scorers and the monitor window (an InputError naming the shard
that does not). The merged header has no stored summary (each shard's covers itself only),
is finished when every shard is, and lists the shards in ``settings.shards``.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agenteval._version import __version__
from agenteval.dataset.ref import DatasetRef
from agenteval.errors import InputError
from agenteval.rundir.migrate import migrate_header
from agenteval.scoring.spec import ScorerSpec

FORMAT_VERSION = 2
"""2: every score has a ``status``; ``run.json`` records each scorer's spec (agenteval 0.2)."""
HEADER = "run.json"
CASES = "cases.jsonl"
TRIALS = "trials.jsonl"

RunKind = Literal["run", "score", "rescore", "judge"]


class RunHeader(BaseModel):
    """``run.json``."""

    model_config = ConfigDict(extra="allow")

    format_version: int = Field(FORMAT_VERSION, ge=1)
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

    @model_validator(mode="after")
    def _unique_scorers(self) -> RunHeader:
        seen: set[str] = set()
        for s in self.scorers:
            if s.name in seen:
                raise ValueError(f"two scorers are named '{s.name}'; scorer names must be unique")
            seen.add(s.name)
        return self

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


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_header(run_dir: Path, header: RunHeader) -> None:
    """Write (or replace, atomically) ``run.json``."""
    _atomic_write(run_dir / HEADER, header.model_dump_json(indent=2) + "\n")


def shard_dirs(run_dir: str | Path) -> list[Path]:
    """The shards of a sharded run (module docstring), sorted by name; empty for a plain
    run (it has ``run.json``), or a directory that is neither."""
    d = Path(run_dir)
    if (d / HEADER).exists():
        return []
    try:
        subs = sorted(d.iterdir())
    except OSError:
        return []
    return [s for s in subs if not s.name.startswith(".") and (s / HEADER).is_file()]


def read_header(run_dir: str | Path) -> RunHeader:
    """Read ``run.json`` (of every shard, merged, for a sharded run); InputError when the
    directory is not a readable run."""
    d = Path(run_dir)
    if not d.is_dir():
        raise InputError("is not a run directory (not found or not a directory)", file=d)
    path = d / HEADER
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        shards = shard_dirs(d)
        if shards:
            return _merged_header(shards)
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


def _window_of(header: RunHeader) -> tuple[Any, Any]:
    monitor = header.settings.get("monitor")
    if not isinstance(monitor, dict):
        return (None, None)
    return (monitor.get("window_s"), monitor.get("window_start"))


def _merged_header(shards: list[Path]) -> RunHeader:
    """One header for the shards of a run (module docstring)."""
    heads = [read_header(s) for s in shards]
    first = heads[0]
    for shard, head in zip(shards[1:], heads[1:], strict=True):
        mine_w, first_w = _window_of(head), _window_of(first)
        for what, same, mine, theirs in (
            ("kind", head.kind == first.kind, head.kind, first.kind),
            ("scorers", head.scorers == first.scorers, head.scorer_names, first.scorer_names),
            ("monitor window", mine_w == first_w, mine_w, first_w),
        ):
            if not same:
                raise InputError(
                    f"is a shard with another {what} than shard {shards[0].name}"
                    f" ({mine} against {theirs}); the shards of a run must agree",
                    file=shard / HEADER,
                )
    ids = "+".join(h.run_id for h in heads)
    finished = [h.finished_at for h in heads]
    done = [t for t in finished if t is not None]
    return first.model_copy(
        update={
            "run_id": hashlib.blake2b(ids.encode(), digest_size=6).hexdigest(),
            "created_at": min(h.created_at for h in heads),
            "finished_at": max(done) if len(done) == len(finished) else None,
            "summary": None,
            "settings": {**first.settings, "shards": [s.name for s in shards]},
        }
    )
