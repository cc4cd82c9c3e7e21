"""The dataset pass of a run: validate every case once and write the run's cases snapshot.

:func:`snapshot_dataset` reads the dataset once (:func:`agenteval.dataset.scan_dataset`:
every case validated, ids unique, the cases hashed) and writes the cases to run, canonical
(defaults left out, as hashed), to a temporary file in the system's temporary folder, never
beside the run directory, where nothing of ours exists yet; the session moves it into the
run once the run exists. Which cases: the first ``limit``, or with a selection the cases
its filters keep, then its sample, then the first ``limit`` of those.
"""

from __future__ import annotations

import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenteval.cases.case import Case
from agenteval.dataset import scan_dataset
from agenteval.dataset.selection import Selection
from agenteval.errors import InputError
from agenteval.rundir import DatasetRef


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the dataset pass found and wrote."""

    path: Path
    """The temporary snapshot file (the caller moves it into the run, or removes it)."""
    ref: DatasetRef
    """The whole dataset's reference (path, hash, case count)."""
    kept: list[Case] | None
    """The snapshot's cases as validated, for a dataset file of at most ``keep_bytes``
    (None: bigger, read back from the snapshot)."""
    selected: dict[str, Any] | None
    """``settings.selection`` (the parts, ``selected``, ``of``); None without a selection."""


def snapshot_dataset(
    dataset: Path, *, limit: int | None, selection: Selection | None, keep_bytes: int
) -> Snapshot:
    """One validation pass over ``dataset`` writing the snapshot as it goes; InputError for
    a bad dataset, for unknown ids in the selection, or when the selection keeps nothing
    (the temporary file is removed then)."""
    tmp = Path(tempfile.gettempdir()) / f".agenteval-cases-{uuid.uuid4().hex}.tmp"
    written = 0
    try:
        small = dataset.stat().st_size <= keep_bytes
    except OSError:
        small = False  # scan_dataset reports the problem
    kept: list[Case] | None = [] if small else None
    all_ids: list[str] = []
    strata: list[str] = []  # first tag of each case the filters kept

    def snapshot(case: Case, canonical: str) -> None:
        nonlocal written
        if selection is not None:
            all_ids.append(case.id)
            if not selection.keeps(case):
                return
            strata.append(case.tags[0] if case.tags else "")
        elif limit and written >= limit:
            return
        f.write(canonical + "\n")  # the case as hashed: defaults left out
        written += 1
        if kept is not None:
            kept.append(case)

    selected: dict[str, Any] | None = None
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            ref = scan_dataset(dataset, on_case=snapshot)
        if selection is not None:
            kept, selected = _select(dataset, selection, limit, tmp, all_ids, strata, kept)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return Snapshot(tmp, ref, kept, selected)


def _select(
    dataset: Path,
    sel: Selection,
    limit: int | None,
    tmp: Path,
    all_ids: list[str],
    strata: list[str],
    kept: list[Case] | None,
) -> tuple[list[Case] | None, dict[str, Any]]:
    """Keep in the snapshot ``tmp`` (the cases the filters kept) only the sampled ones,
    then the first ``limit``; the cases kept and the counts to record. InputError for
    unknown ids or when nothing is left."""
    sel.check_ids(all_ids)
    chosen = sel.choose_strata(strata)
    if limit:
        chosen = chosen[:limit]
    if not chosen:
        raise InputError(
            f"the selection ({sel.describe()}) keeps none of the {len(all_ids)} cases",
            file=dataset,
        )
    selected = sel.record(len(chosen), len(all_ids))
    if len(chosen) == len(strata):
        return kept, selected
    wanted = set(chosen)
    out = tmp.with_name(tmp.name + ".sel")
    try:
        with open(tmp, encoding="utf-8") as src, open(out, "x", encoding="utf-8") as dst:
            for i, line in enumerate(src):
                if i in wanted:
                    dst.write(line)
        out.replace(tmp)
    finally:
        out.unlink(missing_ok=True)
    return ([kept[i] for i in chosen] if kept is not None else None), selected
