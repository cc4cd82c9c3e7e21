"""Dataset files -> validated :class:`~agenteval.cases.case.Case` objects (SPEC §2.1).

Formats, chosen by the file's extension (see :data:`FORMATS`):

- ``.jsonl`` / ``.ndjson``: one JSON object per line, read line by line (the file is never
  held in memory); blank lines are skipped.
- ``.json``: a JSON array of objects; the file is loaded into memory.
- ``.yaml`` / ``.yml``: a list of mappings, or a mapping with a ``cases:`` list; the file is
  loaded into memory. Only ``true``/``false`` are booleans and dates stay text, so ``yes``,
  ``no`` and ``2024-01-01`` are read as strings.
- ``.csv``: a header row naming the fields, one case per row (rules in
  :func:`agenteval.dataset.csv_rows.csv_cell`).

Every problem is an :class:`~agenteval.errors.InputError` naming the file, the line (for a
``.json`` array, the line where the element starts; for YAML, the line of the offending field)
and the field. Values must be JSON values: NaN, Infinity, non-string keys and YAML-only types
(bytes, sets, ...) are rejected.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from agenteval.cases.case import Case
from agenteval.dataset.csv_rows import iter_csv_rows
from agenteval.dataset.records import (
    Row,
    checked_file,
    iter_json_array,
    iter_json_lines,
    validate_row,
)
from agenteval.dataset.ref import DatasetRef
from agenteval.errors import InputError

__all__ = [
    "FORMATS",
    "canonical_case_json",
    "iter_cases",
    "load_case_index",
    "scan_dataset",
]

FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".csv": "csv",
}
"""Supported dataset extensions and the format each selects."""


def _format(p: Path) -> str:
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise InputError(
            f"unknown dataset format {p.suffix or '(no extension)'!r};"
            f" supported: {', '.join(FORMATS)}",
            file=p,
        )
    return fmt


def _iter_yaml_rows(p: Path) -> Iterator[Row]:
    # start-up laziness: PyYAML and the loader class cost ~25 ms of every command's import
    from agenteval.dataset.yaml_rows import iter_yaml_rows

    return iter_yaml_rows(p)


_READERS: dict[str, Callable[[Path], Iterator[Row]]] = {
    "jsonl": iter_json_lines,
    "json": iter_json_array,
    "yaml": _iter_yaml_rows,
    "csv": iter_csv_rows,
}


def _numbered(p: Path, fmt: str) -> Iterator[tuple[int | None, Case]]:
    n = 0
    for row in _READERS[fmt](p):
        yield row.line, validate_row(Case, row, p, "a case")
        n += 1
    if n == 0:
        raise InputError("contains no cases", file=p)


def _numbered_cases(path: str | Path) -> Iterator[tuple[int | None, Case]]:
    p = checked_file(path)
    return _numbered(p, _format(p))


def iter_cases(path: str | Path) -> Iterator[Case]:
    """Yield the validated cases of a dataset file, in file order.

    The path and format are checked at once (InputError: not found, a directory, unknown
    extension); every later problem (malformed record, wrong type, missing ``id``/``input``,
    invalid UTF-8, no cases at all) is an InputError raised while iterating. JSONL is
    streamed line by line; ``.json``, YAML are loaded whole; CSV is streamed row by row.
    Duplicate ids are *not* checked here: :func:`scan_dataset` and :func:`load_case_index` do.
    """
    return (case for _, case in _numbered_cases(path))


def canonical_case_json(case: Case) -> str:
    """The canonical JSON text of a case: defaults left out, keys sorted, no spaces.

    Two files holding the same cases in different formats or layouts give the same text.
    """
    return _CANONICAL.encode(case.model_dump(mode="json", exclude_defaults=True))


_CANONICAL = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
)


def _duplicate(p: Path, line: int | None, case_id: str, first: int | None) -> InputError:
    at = f"first at line {first}" if first is not None else "seen before"
    return InputError(f"duplicate id {case_id!r} ({at})", file=p, line=line, field="id")


def scan_dataset(
    path: str | Path, *, on_case: Callable[[Case, str], None] | None = None
) -> DatasetRef:
    """Validate a whole dataset in one pass, before any agent is called.

    Checks every case and that ids are unique (a duplicate is an error naming both lines).
    Returns the path, the number of cases and the sha256 of the canonical JSON of the cases
    in file order (one :func:`canonical_case_json` line each, newline-terminated). Memory:
    only the ids (and their lines) are kept. ``on_case`` sees each valid case in order with
    its canonical JSON text (e.g. to write a snapshot in the same pass).
    """
    p = checked_file(path)
    digest = hashlib.sha256()
    first_line: dict[str, int | None] = {}
    for line, case in _numbered(p, _format(p)):
        if case.id in first_line:
            raise _duplicate(p, line, case.id, first_line[case.id])
        first_line[case.id] = line
        text = canonical_case_json(case)
        digest.update(text.encode("utf-8") + b"\n")
        if on_case is not None:
            on_case(case, text)
    return DatasetRef(path=str(p), sha256=digest.hexdigest(), cases=len(first_line))


def load_case_index(path: str | Path) -> dict[str, Case]:
    """Load every case into a dict keyed by id, in file order (validated, duplicates rejected)."""
    p = checked_file(path)
    index: dict[str, Case] = {}
    lines: dict[str, int | None] = {}
    for line, case in _numbered(p, _format(p)):
        if case.id in index:
            raise _duplicate(p, line, case.id, lines[case.id])
        index[case.id] = case
        lines[case.id] = line
    return index
