"""Nothing overwritten: every command writes only where it created, never over an input.

Real ``agenteval`` subprocesses on real files. Each refusal must exit 2 with one line that
names both paths, and leave every input byte for byte as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from reliability_support import no_traceback, run_cli, tree_bytes, write_jsonl

from agenteval.cli import main

pytestmark = pytest.mark.reliability

AGENT = "_integrity_agent:answer"
CASES = [{"id": f"c{i}", "input": f"q{i}", "expected": f"a{i}"} for i in range(4)]


def _inputs(d: Path) -> tuple[Path, Path]:
    cases = write_jsonl(d / "cases.jsonl", CASES)
    trials = write_jsonl(d / "trials.jsonl", [{"case_id": c["id"], "output": "x"} for c in CASES])
    return cases, trials


def _one_error_line(stderr: str, *needles: str) -> str:
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("agenteval: error: "), stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert no_traceback([stderr])
    return lines[0]


@pytest.mark.parametrize("out", [".", "./sub/..", "link"])
def test_score_into_the_folder_of_its_inputs_is_refused_and_leaves_them_intact(
    tmp_path: Path, out: str
) -> None:
    """The bug: ``score cases.jsonl trials.jsonl --out .`` emptied both files, then said the
    dataset "contains no cases"."""
    _inputs(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path)
    before = tree_bytes(tmp_path)
    r = run_cli("score", "cases.jsonl", "trials.jsonl", "--out", out, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    _one_error_line(r.stderr, f"--out {out}", "cases.jsonl")
    assert tree_bytes(tmp_path) == before


def test_score_out_containing_or_inside_an_input_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "data"
    d.mkdir()
    cases, trials = _inputs(d)
    before = tree_bytes(tmp_path)
    r = run_cli("score", cases, trials, "--out", tmp_path)  # contains both
    assert r.returncode == 2
    _one_error_line(r.stderr, "contains the dataset", str(cases))
    r = run_cli("score", cases, trials, "--out", trials / "x")  # inside the trial file
    assert r.returncode == 2
    _one_error_line(r.stderr, "is inside the trial file", str(trials))
    assert tree_bytes(tmp_path) == before


def test_run_into_a_folder_holding_files_but_no_run_is_refused(tmp_path: Path) -> None:
    """The bug: ``run --out DIR`` where DIR held cases.jsonl/trials.jsonl but no run.json
    replaced both and exited 0."""
    data = tmp_path / "data"
    data.mkdir()
    _inputs(data)
    cases = write_jsonl(tmp_path / "mine.jsonl", CASES)
    before = tree_bytes(tmp_path)
    r = run_cli("run", cases, "--agent", AGENT, "--out", data, "--quiet")
    assert r.returncode == 2, r.stderr
    _one_error_line(r.stderr, str(data), "not empty", "no agenteval run")
    assert tree_bytes(tmp_path) == before
    # the dataset's own folder: refused as containing the dataset
    r = run_cli("run", "mine.jsonl", "--agent", AGENT, "--out", ".", "--quiet", cwd=tmp_path)
    assert r.returncode == 2
    _one_error_line(r.stderr, "--out . contains the dataset mine.jsonl")
    assert tree_bytes(tmp_path) == before


def _main(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    """The CLI entry point in this process (for matrices; one case of each runs as a
    real subprocess too)."""
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_every_writer_refuses_a_foreign_non_empty_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases, trials = _inputs(tmp_path)
    good = tmp_path / "good"
    r = run_cli("score", cases, trials, "--out", good, "--quiet")
    assert r.returncode == 0, r.stderr
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    before = tree_bytes(tmp_path)
    r = run_cli("run", cases, "--agent", AGENT, "--quiet", "--out", foreign)
    assert r.returncode == 2, r.stderr
    _one_error_line(r.stderr, str(foreign), "notes.txt")
    judge = ("--rubric", "correctness", "--judge-model", "m", "--quiet")
    commands = [
        ("score", cases, trials, "--quiet"),
        ("rescore", good, "--quiet"),
        ("judge", good, *judge, "--judge-endpoint", "http://127.0.0.1:9/v1"),
    ]
    for argv in commands:
        code, err = _main(capsys, *argv, "--out", foreign)
        assert code == 2, (argv, err)
        _one_error_line(err, str(foreign), "notes.txt")
    assert tree_bytes(tmp_path) == before


def test_rescore_and_judge_refuse_an_out_inside_or_around_the_source_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases, trials = _inputs(tmp_path)
    src = tmp_path / "runs" / "src"
    assert run_cli("score", cases, trials, "--out", src, "--quiet").returncode == 0
    before = tree_bytes(tmp_path)
    judge = ("--rubric", "correctness", "--judge-endpoint", "http://127.0.0.1:9/v1")
    judge += ("--judge-model", "m")
    for out, rel in ((src, "is"), (src / "new", "is inside"), (tmp_path / "runs", "contains")):
        for argv in (("rescore", src), ("judge", src, *judge)):
            code, err = _main(capsys, *argv, "--out", out)
            assert code == 2, err
            _one_error_line(err, f"--out {out} {rel} the source run {src}")
    r = run_cli("rescore", src, "--out", src / "new")
    assert r.returncode == 2
    _one_error_line(r.stderr, f"--out {src / 'new'} is inside the source run {src}")
    assert tree_bytes(tmp_path) == before


def test_report_never_writes_over_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bug: ``report --html RUN/trials.jsonl`` overwrote the run."""
    cases, trials = _inputs(tmp_path)
    run = tmp_path / "run"
    assert run_cli("score", cases, trials, "--out", run, "--quiet").returncode == 0
    before = tree_bytes(run)
    r = run_cli("report", run, "--html", run / "trials.jsonl")
    assert r.returncode == 2
    _one_error_line(r.stderr, f"--html {run / 'trials.jsonl'}", "run's own file trials.jsonl")
    for target in ("trials.jsonl", "run.json", "cases.jsonl", "run.lock"):
        alias = tmp_path / f"alias-{target}"
        alias.symlink_to(run / target)
        for opt in ("--html", "--json", "--junit", "--markdown"):
            for path in (run / target, alias, tmp_path / "run" / ".." / "run" / target):
                code, err = _main(capsys, "report", run, opt, path)
                assert code == 2, (opt, path, err)
                _one_error_line(err, f"{opt} {path}", target)
    assert tree_bytes(run) == before


def test_report_refuses_two_reports_into_one_file_and_keeps_writing_beside_the_run(
    tmp_path: Path,
) -> None:
    cases, trials = _inputs(tmp_path)
    run = tmp_path / "run"
    assert run_cli("score", cases, trials, "--out", run, "--quiet").returncode == 0
    r = run_cli("report", run, "--html", tmp_path / "r", "--json", tmp_path / "." / "r")
    assert r.returncode == 2
    _one_error_line(r.stderr, "--json", "same file as --html")
    assert not (tmp_path / "r").exists()
    r = run_cli("report", run, "--html", run / "report.html", "--json", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    assert (run / "report.html").stat().st_size > 0
    assert json.loads((tmp_path / "s.json").read_text())["trials"] == len(CASES)


def test_run_refuses_an_out_that_is_its_prompt_template_folder(tmp_path: Path) -> None:
    cases = write_jsonl(tmp_path / "cases.jsonl", CASES)
    tpl = tmp_path / "t" / "prompt.txt"
    tpl.parent.mkdir()
    tpl.write_text("{input}")
    r = run_cli(
        "run", cases, "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
        "--prompt-template", tpl, "--out", tpl.parent,
    )  # fmt: skip
    assert r.returncode == 2
    _one_error_line(r.stderr, "contains the prompt template", str(tpl))
    assert os.listdir(tpl.parent) == ["prompt.txt"]


def test_demo_refuses_a_folder_it_did_not_make(tmp_path: Path) -> None:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "cases.jsonl").write_text("my cases\n")
    r = run_cli("demo", "--dir", d)
    assert r.returncode == 2
    _one_error_line(r.stderr, str(d), "holds no agenteval demo (cases.jsonl)")
    assert (d / "cases.jsonl").read_text() == "my cases\n" and os.listdir(d) == ["cases.jsonl"]


def test_import_dataset_never_writes_over_what_it_converts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(tmp_path / "dr.jsonl", [{"id": "1", "input": "q", "ideal_response": "a"}])
    before = src.read_bytes()
    for out in (src, tmp_path / "." / "dr.jsonl"):
        code, err = _main(capsys, "import-dataset", src, "--from", "datarobot", "--out", out)
        assert code == 2, err
        _one_error_line(err, f"--out {out} is the input file {src}")
    assert src.read_bytes() == before
