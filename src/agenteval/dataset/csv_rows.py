"""CSV datasets: a header row naming the fields, then one case per row.

An empty cell means the field is absent. Cells are text, except the fields listed in
:func:`csv_cell`. A row's line is the physical line where it starts.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agenteval.dataset.records import Row, iter_lines, json_error
from agenteval.errors import InputError

CSV_LIST_FIELDS = frozenset(
    {"expected_tools", "expected_trajectory", "relevant_docs", "must_not_contain", "canary", "tags"}
)
"""CSV columns read as lists: a JSON array (or object), else ``|``-separated items."""


def _json_cell(cell: str, p: Path, line: int, column: str) -> Any:
    try:
        return json.loads(cell)
    except (ValueError, RecursionError) as e:
        raise InputError(json_error(e), file=p, line=line, field=column) from None


def csv_cell(column: str, cell: str, p: Path, line: int) -> Any:
    """The value of one CSV cell (the caller drops empty cells: empty means absent).

    - list fields (:data:`CSV_LIST_FIELDS`): a JSON array or object when the cell starts with
      ``[`` or ``{``, else ``|``-separated items (spaces around items are removed);
    - ``max_tool_calls``: a whole number;
    - ``tools`` and ``metadata``: JSON;
    - ``input``: a JSON list of chat messages when it is one (every item an object with a
      ``role``), else the text;
    - everything else (``id``, ``expected``, ``context``, ``notes``, unknown columns): the text.
    """
    if column in CSV_LIST_FIELDS:
        if cell.lstrip()[:1] in ("[", "{"):
            return _json_cell(cell, p, line, column)
        return [item.strip() for item in cell.split("|") if item.strip()]
    if column == "max_tool_calls":
        try:
            return int(cell.strip())
        except ValueError:
            raise InputError(
                f"must be a whole number, got {cell.strip()!r}", file=p, line=line, field=column
            ) from None
    if column in ("tools", "metadata"):
        return _json_cell(cell, p, line, column)
    if column == "input" and cell.lstrip().startswith("["):
        try:
            msgs = json.loads(cell)
        except (ValueError, RecursionError):
            return cell
        if (
            isinstance(msgs, list)
            and msgs
            and all(isinstance(m, dict) and "role" in m for m in msgs)
        ):
            return msgs
    return cell


def iter_csv_rows(path: str | Path) -> Iterator[Row]:
    """Parse a CSV dataset: a header row (must name ``id`` and ``input``), then one case a row.

    A row's line is the physical line where it starts (a quoted cell may span lines). Blank
    rows are skipped; a row with more cells than the header is an error, a shorter one leaves
    the missing cells empty.
    """
    p = Path(path)
    lines = (text for _, text, _ in iter_lines(p))
    reader = csv.reader(lines)
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not any(c.strip() for c in cells):
                continue
            if header is None:
                header = [c.strip() for c in cells]
                dups = sorted({c for c in header if c and header.count(c) > 1})
                if dups:
                    raise InputError(
                        f"column {dups[0]!r} appears twice in the header", file=p, line=line
                    )
                for need in ("id", "input"):
                    if need not in header:
                        raise InputError(
                            f"missing column {need!r} (the header has: {', '.join(header)})",
                            file=p,
                            line=line,
                            field=need,
                        )
                continue
            if len(cells) > len(header):
                raise InputError(
                    f"row has {len(cells)} cells but the header has {len(header)}",
                    file=p,
                    line=line,
                )
            data = {
                col: csv_cell(col, cell, p, line)
                for col, cell in zip(header, cells, strict=False)
                if col and cell.strip()
            }
            yield Row(line, data)
    except csv.Error as e:
        raise InputError(f"not valid CSV: {e}", file=p, line=reader.line_num) from None
    if header is None:
        raise InputError("is empty; expected a header row and one case per row", file=p)
