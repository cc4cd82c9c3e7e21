"""``run.json``: the header of a run directory, its format version, and how it is read.

:class:`RunHeader` is the model of ``run.json`` (format version, run id, kind, times,
agenteval version, the agent without secrets, the dataset reference, the scorer specs, the
price table, the settings and, once finished, the summary). :func:`write_header` replaces
the file atomically; :func:`read_header` reads it, migrating a format 1 header (see
:mod:`agenteval.rundir.migrate`) and refusing a newer format, a format below 1, or two scorers
with one name, as an InputError naming the file and field.

``HEADER``, ``CASES`` and ``TRIALS`` are the names of a run directory's files.
"""

from __future__ import annotations

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
