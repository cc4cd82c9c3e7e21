"""What a report reads besides the trials: the cases snapshot and the price table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agenteval._util import fastjson
from agenteval.cases.case import Case, case_from_run
from agenteval.errors import InputError
from agenteval.llm.pricing import PriceTable
from agenteval.rundir import RunHeader
from agenteval.rundir.writer import cases_paths


def _snapshots(run_dir: str | Path) -> list[Path] | None:
    """The run's ``cases.jsonl`` (each shard's, for a sharded run); None when it has none."""
    paths = [p for p in cases_paths(run_dir) if p.exists()]
    return paths or None


def load_cases(run_dir: str | Path) -> dict[str, Case] | None:
    """The run's cases snapshot keyed by id; None when the run has no ``cases.jsonl``."""
    paths = _snapshots(run_dir)
    if paths is None:
        return None
    out: dict[str, Case] = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    case = case_from_run(line)  # never imports code the run names
                except ValidationError as e:
                    err = e.errors()[0]
                    field = ".".join(str(p) for p in err["loc"]) or None
                    raise InputError(err["msg"], file=path, line=lineno, field=field) from None
                out[case.id] = case
    return out


def case_ids(run_dir: str | Path) -> list[str]:
    """The case ids of the run's ``cases.jsonl`` snapshot in file (dataset) order; an empty
    list when the run has no snapshot. Lines that are not objects with a string ``id`` are
    skipped (ordering only; :func:`load_cases` validates)."""
    ids: list[str] = []
    for path in _snapshots(run_dir) or ():
        with open(path, "rb") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    obj = fastjson.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                    ids.append(obj["id"])
    return ids


def price_table_of(header: RunHeader) -> PriceTable:
    """The run's recorded price table over the defaults (defaults when none recorded)."""
    table = PriceTable.default()
    if header.prices:
        table = table.merged(PriceTable.from_dict(header.prices, source="run.json prices"))
    return table


class SnapshotIndex:
    """:func:`case_tags` and :func:`case_ids` of a snapshot gathered while something else
    reads every line of it (``RunCases(..., on_index=index.add)``), so that a rescore
    does not parse its snapshot twice more for its summary. :attr:`tags` is None when a
    line was not well formed (:func:`case_tags` then reads the file, and fails on it)."""

    def __init__(self) -> None:
        self._tags: dict[str, tuple[str, ...]] = {}
        self._shared: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.ids: list[str] = []
        self.well_formed = True

    def add(self, d: dict[str, Any]) -> None:
        """One line's JSON object (a dict with a string ``id``), in file order."""
        cid = d["id"]
        self.ids.append(cid)
        tags = d.get("tags") or ()
        try:
            ok = all(type(t) is str for t in tags)
        except TypeError:
            ok = False
        if not ok:
            self.well_formed = False
        elif tags:
            key = tuple(tags)
            self._tags[cid] = self._shared.setdefault(key, key)

    @property
    def tags(self) -> dict[str, tuple[str, ...]] | None:
        return self._tags if self.well_formed else None


def case_tags(run_dir: str | Path) -> dict[str, tuple[str, ...]] | None:
    """Case id -> tags, for the cases of the snapshot that have tags (None: no snapshot).

    The snapshot is written by agenteval from validated cases; a line whose id or tags
    are not well formed is validated as a Case, so that it fails as :func:`load_cases` does.
    """
    paths = _snapshots(run_dir)
    if paths is None:
        return None
    out: dict[str, tuple[str, ...]] = {}
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    for path in paths:
        with open(path, "rb") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    d = fastjson.loads(line)
                    cid, tags = d["id"], d.get("tags") or ()
                    ok = type(cid) is str and all(type(t) is str for t in tags)
                except (ValueError, TypeError, KeyError, AttributeError):
                    ok = False
                if not ok:
                    load_cases(run_dir)  # raises InputError naming the line
                    continue
                if tags:
                    key = tuple(tags)
                    out[cid] = shared.setdefault(key, key)
    return out
