"""``agenteval monitor``'s command line: every refusal one line with exit code 2."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from monitor_harness import served

from agenteval.cli import main
from agenteval.monitor import MonitorConfig


def _err(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["monitor", *args])
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--window", "soon"], "--window must be a positive duration"),
        (["--window", "7s"], "--window must be whole seconds dividing a day"),
        (["--idle", "0"], "--idle must be a positive duration"),
        (["--idle", "10s", "--max-wait", "5s"], "--max-wait (5s) must be at least --idle"),
        (["--window", "1m", "--max-wait", "2m"], "--max-wait (2m) must be shorter than --window"),
        (["--listen", "localhost"], "--listen must be HOST:PORT"),
        (["--listen", "127.0.0.1:70000"], "--listen must be HOST:PORT"),
        (["--max-wal-bytes", "lots"], "--max-wal-bytes must be a positive size"),
        (["--max-pending-spans", "0"], "--max-pending-spans must be at least 1"),
        (["--alpha-per-day", "1.5"], "--alpha-per-day must be within (0, 1)"),
        (["--dataset", "x.jsonl"], "--dataset and --join-attr go together"),
        (["--where", "novalue"], "--where 'novalue' must look like ATTR=VALUE"),
        (["--baseline", "/nonexistent/run"], "/nonexistent/run"),
        (["--alert-webhook", "hooks.example/alert"], "--alert-webhook must be an http://"),
        (["--export-otlp", "ftp://collector:4318"], "--export-otlp must be an http://"),
        (["--export-otlp", "http://collector:99999"], "--export-otlp must be an http://"),
        (["--alert-webhook", "http:///path"], "--alert-webhook must be an http://"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    code, err = _err(capsys, "--out", str(tmp_path / "mon"), *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("agenteval: error: ") and says in err
    assert not (tmp_path / "mon").exists()  # refused before anything was made


def test_out_that_is_a_file_or_a_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    assert _err(capsys, "--out", str(f))[0] == 2
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("{}")
    code, err = _err(capsys, "--out", str(run))
    assert code == 2 and "is a run directory" in err


def test_a_port_in_use_is_exit_2_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, err = _err(capsys, "--listen", f"127.0.0.1:{port}", "--out", str(tmp_path / "m"))
    assert code == 2 and f"field '--listen': cannot listen on 127.0.0.1:{port}" in err
    assert err.count("\n") == 1
    assert not (tmp_path / "m" / ".monitor").exists()


def test_a_directory_another_monitor_uses_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with served(MonitorConfig(out=tmp_path, tick_s=0.05)):
        code, err = _err(capsys, "--listen", "127.0.0.1:0", "--out", str(tmp_path))
    assert code == 2 and "is used by another agenteval monitor" in err
    assert err.rstrip().endswith("; stop it, or give another --out")  # the flag, not the field
    assert err.count("\n") == 1


def test_a_directory_that_cannot_be_made_is_exit_5(capsys: pytest.CaptureFixture[str]) -> None:
    """/sys refuses new directories (EPERM, or EACCES for a user): exit 5, one line."""
    code, err = _err(capsys, "--listen", "127.0.0.1:0", "--out", "/sys/agenteval-monitor-test")
    assert code == 5 and "cannot write /sys/agenteval-monitor-test" in err
    assert err.count("\n") == 1


def test_the_monitor_log_the_command_line_prints_shows_flags_not_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The monitor's lines name settings by field (a library caller has no flags);
    ``agenteval monitor`` prints them with the flags that set them (FIELD_FLAGS)."""
    from agenteval.cli.monitor import said
    from agenteval.monitor.checking import Checker
    from agenteval.monitor.journal import Journal

    (tmp_path / ".monitor").mkdir()
    journal = Journal(tmp_path / ".monitor", 600)
    checker = Checker(
        tmp_path, 3600, journal, said, baseline=None, week_earlier=True, alpha_per_day=0.05
    )
    _, why = checker.reference(tmp_path, 7 * 86400)
    assert why.endswith(" and no baseline")  # the field, for a library caller
    said(why)
    said("plain text")
    assert capsys.readouterr().err.splitlines() == [
        why.replace(" and no baseline", " and no --baseline"),
        "plain text",
    ]
