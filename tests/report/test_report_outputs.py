"""Terminal, JUnit XML and Markdown outputs."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from _runbuild import XSS_PAYLOADS, bad, ok, sample_cases, sample_trials
from rich.console import Console

from agenteval.cases.case import Case
from agenteval.report import render_terminal, summarize, write_json, write_junit, write_markdown
from agenteval.trials.trial import Failure, Trial

SCORERS = ["exact_match", "retrieval_recall", "judge_correctness"]


def _render(run: Path, *, terminal: bool = False) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=terminal, color_system="standard")
    render_terminal(summarize(run), console)
    return buf.getvalue()


def test_terminal_shows_every_section(make_run: Callable[..., Path]) -> None:
    text = _render(make_run(sample_cases(), sample_trials(), scorers=SCORERS))
    for needle in (
        "Scores", "exact_match", "25.0%", "Latency", "p95", "Cost", "judge", "Retries",
        "rate_limit", "Failures", "timeout", "Wrong answers", "retrieval 1", "Pass rate by tag",
        "inconcl.",
    ):  # fmt: skip
        assert needle in text, needle


def test_terminal_escapes_markup_and_strips_ansi(make_run: Callable[..., Path]) -> None:
    evil = "[bold red]boom[/] \x1b[31mRED\x1b[0m \x1b]8;;http://x\x07link"
    run = make_run(
        [Case(id=evil, input="q", tags=[evil])],
        [
            (
                Trial(case_id=evil, output=None, failure=Failure(cause=evil, message=evil)),
                {evil: bad(evil)},
            )
        ],
    )
    text = _render(run, terminal=True)
    assert "[bold red]boom[/]" in text  # printed literally, not interpreted
    assert "\x1b[31mRED" not in text and "\x1b]8;;" not in text
    assert "RED" in text


def test_terminal_repeats_section(make_run: Callable[..., Path]) -> None:
    trials = [
        (Trial(case_id="a", repeat=r, output="x"), {"m": ok() if r else bad()}) for r in range(2)
    ]
    text = _render(make_run([Case(id="a", input="q")], trials))
    assert "Repeats (k = 2)" in text and "pass^2" in text and "flaky cases: 1" in text


def _junit(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    total = {"tests": 0, "failures": 0, "errors": 0}
    for suite in root:
        assert suite.tag == "testsuite"
        cases = list(suite)
        assert all(c.tag == "testcase" and c.get("name") and c.get("classname") for c in cases)
        n_fail = sum(1 for c in cases if c.find("failure") is not None)
        n_err = sum(1 for c in cases if c.find("error") is not None)
        assert int(suite.get("tests", "-1")) == len(cases)
        assert int(suite.get("failures", "-1")) == n_fail
        assert int(suite.get("errors", "-1")) == n_err
        for c in cases:
            float(c.get("time", "x"))
            for child in c:
                assert child.tag in ("failure", "error") and child.get("message") is not None
        total["tests"] += len(cases)
        total["failures"] += n_fail
        total["errors"] += n_err
    for k, v in total.items():
        assert int(root.get(k, "-1")) == v
    return root


def test_junit_shape_counts_and_reasons(make_run: Callable[..., Path], tmp_path: Path) -> None:
    run = make_run(sample_cases(xss=True), sample_trials(xss=True), scorers=SCORERS)
    out = tmp_path / "junit.xml"
    write_junit(run, out)
    root = _junit(out)
    em = root.find("testsuite[@name='agenteval.exact_match']")
    assert em is not None
    # one testcase per case where the scorer applies: 4 + 14
    assert len(em) == 4 + len(XSS_PAYLOADS)
    c2 = em.find("testcase[@name='c2']")
    assert c2 is not None
    fail = c2.find("failure")
    assert fail is not None and fail.get("message") == "'Lyon' != 'Paris'"
    rr = root.find("testsuite[@name='agenteval.retrieval_recall']")
    assert rr is not None and len(rr) == 2  # not applicable to c1, c2: no testcase
    jc = root.find("testsuite[@name='agenteval.judge_correctness']")
    assert jc is not None
    err = jc.find("testcase[@name='c3']/error")
    assert err is not None and "boom" in (err.get("message") or "")
    assert jc.find("testcase[@name='c2']") is None  # inconclusive only: not a test


def test_junit_repeats_and_control_characters(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    cid = "ctrl\x01\x1b[31mid"
    trials = [
        (Trial(case_id=cid, repeat=r, output="x"), {"m": ok() if r else bad("bad\x00 reason")})
        for r in range(3)
    ]
    run = make_run([Case(id=cid, input="q")], trials)
    out = tmp_path / "j.xml"
    write_junit(run, out)
    root = _junit(out)
    cases = root.findall(".//testcase")
    assert len(cases) == 1 and cases[0].get("name") == "ctrlid"
    fail = cases[0].find("failure")
    assert fail is not None and fail.get("message") == "bad reason"
    assert "1 of 3" not in (fail.text or "") and "2 of 3" in (fail.text or "")


def test_markdown_escapes_untrusted_text(make_run: Callable[..., Path], tmp_path: Path) -> None:
    run = make_run(sample_cases(xss=True), sample_trials(xss=True), scorers=SCORERS)
    out = tmp_path / "s.md"
    write_markdown(run, out)
    text = out.read_text()
    assert "| exact_match |" in text.replace("exact\\_match", "exact_match")
    assert "<script" not in text and "<img" not in text and "<svg" not in text
    assert "&lt;script&gt;" in text
    for line in text.splitlines():
        if line.startswith("| x"):  # a failing-case row: exactly 3 cells despite the payloads
            assert line.count(" | ") == 2, line


def test_write_json(make_run: Callable[..., Path], tmp_path: Path) -> None:
    import json

    out = tmp_path / "s.json"
    write_json(make_run(sample_cases(), sample_trials(), scorers=SCORERS), out)
    assert json.loads(out.read_text())["trials"] == 4


def test_cli_report_writes_every_output(
    cli: Callable[..., object], make_run: Callable[..., Path], tmp_path: Path
) -> None:
    run = make_run(sample_cases(), sample_trials(), scorers=SCORERS)
    outs = {opt: tmp_path / f"out.{opt}" for opt in ("html", "json", "junit", "markdown")}
    args = [x for opt, path in outs.items() for x in (f"--{opt}", path)]
    proc = cli("report", run, *args)
    assert proc.returncode == 0, proc.stderr  # type: ignore[attr-defined]
    for opt, path in outs.items():
        assert path.stat().st_size > 100, opt
        assert f"wrote {opt} report" in proc.stdout  # type: ignore[attr-defined]


def test_cli_report_terminal_and_bad_input(
    cli: Callable[..., object], make_run: Callable[..., Path], tmp_path: Path
) -> None:
    run = make_run(sample_cases(), sample_trials(), scorers=SCORERS)
    proc = cli("report", run)
    assert proc.returncode == 0 and "exact_match" in proc.stdout  # type: ignore[attr-defined]
    proc = cli("report", tmp_path / "missing")
    assert proc.returncode == 2  # type: ignore[attr-defined]
    assert "Traceback" not in proc.stderr and "not a run directory" in proc.stderr  # type: ignore[attr-defined]
    bad_prices = tmp_path / "p.yaml"
    bad_prices.write_text("gpt-4o: {input: -1, output: 2}\n")
    proc = cli("report", run, "--prices", bad_prices)
    assert proc.returncode == 2 and "gpt-4o.input" in proc.stderr  # type: ignore[attr-defined]


def test_cli_compare_side_by_side(
    cli: Callable[..., object], make_run: Callable[..., Path]
) -> None:
    a = make_run(sample_cases(), sample_trials(), scorers=SCORERS)
    b = make_run(sample_cases(), sample_trials()[:2], scorers=SCORERS)
    proc = cli("compare", a, b)
    assert proc.returncode == 0, proc.stderr  # type: ignore[attr-defined]
    assert a.name in proc.stdout and b.name in proc.stdout  # type: ignore[attr-defined]
    assert "exact_match" in proc.stdout and "latency p50" in proc.stdout  # type: ignore[attr-defined]


def test_every_output_handles_a_run_without_trials(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    from agenteval.report import write_html

    run = make_run([Case(id="a", input="q")], [], scorers=["exact_match"])
    assert "trials 0" in _render(run)
    write_html(run, tmp_path / "e.html")
    write_junit(run, tmp_path / "e.xml")
    write_markdown(run, tmp_path / "e.md")
    write_json(run, tmp_path / "e.json")
    assert _junit(tmp_path / "e.xml").get("tests") == "0"
    assert "0 of 0 trials" not in (tmp_path / "e.html").read_text()  # filled in by the script


def test_money_format() -> None:
    from agenteval.report.terminal import fmt_usd

    assert fmt_usd(None) == "unknown" and fmt_usd(0) == "$0"
    assert fmt_usd(0.000021) == "$0.0000210" and fmt_usd(0.0267) == "$0.0267"
    assert fmt_usd(1234.5) == "$1,234.50" and fmt_usd(1e-9) == "< $0.000001"
