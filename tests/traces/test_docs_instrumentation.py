"""docs/agents/instrumentation.md is what the libraries recorded: its import rows are those
``bench/instrumentation_matrix.py --from-fixtures`` computes from the checked-in
fixtures (recorded from the real libraries by ``record_genai.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "agents" / "instrumentation.md"


def _matrix():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "instrumentation_matrix", ROOT / "bench" / "instrumentation_matrix.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_page_import_rows_are_the_fixtures_measured() -> None:
    m = _matrix()
    text = PAGE.read_text(encoding="utf-8")
    body = text[text.index(m.BEGIN) : text.index(m.END)]
    page_rows = {line for line in body.splitlines() if "| import |" in line}
    measured = {line for line in m.table(m.fixture_rows()).splitlines() if "| import |" in line}
    assert measured, "no fixture rows"
    assert measured <= page_rows, sorted(measured - page_rows)


def test_the_readme_links_the_page() -> None:
    assert "docs/agents/instrumentation.md" in (ROOT / "README.md").read_text(encoding="utf-8")
