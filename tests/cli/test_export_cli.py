"""``agenteval export``: CSV and Parquet of a run's tables, never over a file or into a run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

from agenteval import frames  # noqa: E402
from agenteval.errors import EXIT_INPUT, EXIT_IO, EXIT_OK  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runs_v0_1"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    d = tmp_path / "runs" / "careful"
    shutil.copytree(FIXTURES / "demo_careful", d)
    return d


def _state(d: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(d.iterdir())}


def test_csv_by_default_in_the_current_folder(cli, run: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    before = _state(run)
    r = cli("export", run, "--format", "csv", cwd=tmp_path)
    assert r.returncode == EXIT_OK, r.stderr
    out = tmp_path / "careful.trials.csv"
    assert r.stdout.strip() == "careful.trials.csv (8 rows)"
    df = pd.read_csv(out)
    assert list(df.columns) == list(frames.trials_df(run).columns)
    assert len(df) == 8 and set(df.case_id) == set(frames.trials_df(run).case_id)
    assert _state(run) == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "careful.trials.csv",
        "runs",
    ]


@pytest.mark.parametrize("table", ["trials", "scores", "tool_calls"])
def test_parquet_keeps_every_dtype(cli, run: Path, tmp_path: Path, table: str) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / f"{table}.parquet"
    r = cli("export", run, "--format", "parquet", "--table", table, "--out", out)
    assert r.returncode == EXIT_OK, r.stderr
    expected = getattr(frames, f"{table}_df")(run)
    got = pd.read_parquet(out)
    assert dict(got.dtypes.astype(str)) == dict(expected.dtypes.astype(str))
    pd.testing.assert_frame_equal(got, expected, check_categorical=False)


def test_never_replaces_a_file_without_overwrite(cli, run: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "x.csv"
    out.write_text("precious\n")
    r = cli("export", run, "--format", "csv", "--out", out)
    assert r.returncode == EXIT_INPUT
    assert r.stderr.strip() == (
        f"agenteval: error: --out {out}: already exists; pass --overwrite to replace it"
    )
    assert out.read_text() == "precious\n"
    r = cli("export", run, "--format", "csv", "--out", out, "--overwrite")
    assert r.returncode == EXIT_OK and out.read_text().startswith("run_id,case_id")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left


@pytest.mark.parametrize("where", ["trials.jsonl", "run.json", "inside.csv", "."])
def test_never_writes_into_the_run(cli, run: Path, where: str) -> None:  # type: ignore[no-untyped-def]
    before = _state(run)
    r = cli("export", run, "--format", "csv", "--out", run / where, "--overwrite")
    assert r.returncode == EXIT_INPUT and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and "agenteval: error: --out" in r.stderr
    assert _state(run) == before


def test_bad_runs_and_unwritable_folders(cli, run: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = cli("export", tmp_path / "nope", "--format", "csv")
    assert r.returncode == EXIT_INPUT and "is not a run directory" in r.stderr
    lines = (run / "trials.jsonl").read_bytes().splitlines(keepends=True)
    (run / "trials.jsonl").write_bytes(lines[0] + b"{oops\n" + lines[1])
    r = cli("export", run, "--format", "csv", "--out", tmp_path / "t.csv")
    assert r.returncode == EXIT_INPUT and "trials.jsonl:2: not valid JSON" in r.stderr
    assert not (tmp_path / "t.csv").exists()
    r = cli("export", FIXTURES / "demo_careful", "--format", "csv", "--out", tmp_path / "no" / "x")
    assert r.returncode == EXIT_INPUT and "the folder to write into does not exist" in r.stderr
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        r = cli("export", FIXTURES / "demo_careful", "--format", "csv", "--out", ro / "x.csv")
        assert r.returncode == EXIT_IO and "cannot write" in r.stderr


def test_without_the_extra_exit_2_naming_it(run: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "from agenteval.cli import main\n"
        f"sys.exit(main(['export', {str(run)!r}, '--format', 'csv', '--out', 'x.csv']))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == EXIT_INPUT
    assert r.stderr == (
        "agenteval: error: agenteval.frames needs the 'frames' extra (pandas is not"
        " installed): pip install -e '.[frames]'\n"
    )
    assert not (tmp_path / "x.csv").exists()


def test_ctrl_c_while_writing_leaves_no_file(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted mid-write: neither the output nor its temporary file is left."""
    from agenteval.cli import main

    def interrupted(self: object, path: object, **kw: object) -> None:
        Path(str(path)).write_text("case_id,half")
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_csv", interrupted)
    out = tmp_path / "out"
    out.mkdir()
    code = main(["export", str(run), "--format", "csv", "--out", str(out / "t.csv")])
    assert code == 130
    assert list(out.iterdir()) == []
