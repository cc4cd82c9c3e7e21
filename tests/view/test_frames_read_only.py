"""docs/view.md, data frames: "Runs are read as the commands read them (format 1 runs
are migrated, a torn last line is skipped); nothing is written." Every frame of every
run of the viewer's test folder (format 1 runs, a torn run, broken runs) leaves every
file's bytes and modification time, and the list of files, as they were."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _tree import build_tree

pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from agenteval.frames import runs_df, scores_df, tool_calls_df, trials_df


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (p.read_bytes() if p.is_file() else b"", st.st_mtime_ns)
    return out


def test_every_frame_of_every_run_writes_nothing(tmp_path: Path) -> None:
    tree = build_tree(tmp_path / "runs")
    before = _snapshot(tree)
    runs = runs_df(tree)
    good = runs[runs["error"].isna()]
    assert len(good) >= 5 and runs["error"].notna().sum() == 3
    assert {"v01/demo_careful", "torn"} <= set(good["run"])
    for path in good["path"]:
        for frame in (trials_df, scores_df, tool_calls_df):
            frame(path)
    assert _snapshot(tree) == before
