"""docs/view.md says what the code does: the dtype tables, the step size, the summary."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from _tree import FIXTURES, Viewer

from agenteval.report import summarize
from agenteval.report.terminal import fmt_rate
from agenteval.view.catalog import STEP, find_run_dirs

DOC = Path(__file__).resolve().parents[2] / "docs" / "view.md"


def _tables(text: str) -> dict[str, dict[str, str]]:
    """Each dtype table of the page, keyed by the function named in the line before it."""
    out: dict[str, dict[str, str]] = {}
    name = ""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^`(\w+_df)\(", line)
        if m:
            name, rows = m.group(1), {}
            out[name] = rows
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] not in ("column",) and name:
            rows[cells[0]] = cells[1]
    return out


def test_the_dtype_tables_are_the_code() -> None:
    pytest.importorskip("pandas")
    from agenteval import frames

    tables = _tables(DOC.read_text(encoding="utf-8"))
    assert tables["runs_df"] == frames.RUNS_COLUMNS
    assert tables["trials_df"] == frames.TRIALS_COLUMNS
    assert tables["scores_df"] == frames.SCORES_COLUMNS
    assert tables["tool_calls_df"] == frames.TOOL_CALLS_COLUMNS


def test_steps_of_one_mib_and_no_symlinked_folders(tmp_path: Path) -> None:
    assert STEP == 1 << 20
    shutil.copytree(FIXTURES / "repeats", tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert find_run_dirs(tmp_path) == [tmp_path / "real"]


def test_a_run_file_linked_to_outside_the_folder_is_not_served(tmp_path: Path) -> None:
    """docs/view.md: a run whose files are symlinks out of DIR is left out (one linked to a
    file inside DIR is fine)."""
    root, outside = tmp_path / "viewed", tmp_path / "secret"
    shutil.copytree(FIXTURES / "repeats", outside)
    shutil.copytree(FIXTURES / "repeats", root / "inner")
    for name, target in (("escape", outside), ("ok", root / "inner")):
        (root / name).mkdir()
        (root / name / "trials.jsonl").symlink_to(target / "trials.jsonl")
    assert find_run_dirs(root) == [root / "inner", root / "ok"]
    v = Viewer(root)
    try:
        assert v.get("/run?run=escape")[0] == 404
        assert v.get("/run?run=ok")[0] == 200
    finally:
        v.stop()


def test_the_run_page_summary_is_the_reports(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "demo_sloppy", tmp_path / "sloppy")
    s = summarize(tmp_path / "sloppy")
    v = Viewer(tmp_path)
    try:
        page = v.get("/run?run=sloppy")[1]
        body = v.get("/run?run=sloppy")[2].decode()
    finally:
        v.stop()
    assert page["Content-Security-Policy"]
    kpis = dict(re.findall(r'data-kpi="(\w+)">([^<]*)<', body))
    assert kpis == {"trials": str(s.trials), "answered": str(s.answered), "failed": str(s.failed)}
    for name, ss in s.scorers.items():
        row = re.search(rf"<tr><td>{name}</td>.*?</tr>", body, re.S)
        assert row and fmt_rate(ss.pass_rate) in row.group(0), name


def test_every_picture_of_the_page_exists() -> None:
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", DOC.read_text(encoding="utf-8"))
    assert len(pictures) == 5
    for rel in pictures:
        assert (DOC.parent / rel).stat().st_size > 10_000, rel
