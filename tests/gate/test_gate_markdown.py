"""The gate verdict as a pull-request comment: everything the verdict has, and untrusted
text that can neither inject Markdown/HTML nor notify anyone."""

from __future__ import annotations

import re
from pathlib import Path

from agenteval.cases.case import Case
from agenteval.gate.paired import compare_runs
from agenteval.report.markdown import render_gate_markdown, write_markdown
from agenteval.report.text import ZWJ, md
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")  # what GitHub would turn into a ping


def _run(run_dir: Path, ids: list[str], leak: set[str], wrong: set[str]) -> Path:
    header = RunHeader(dataset=DatasetRef(path="d.jsonl", sha256="same", cases=len(ids)))
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, [Case(id=cid, input="q") for cid in ids])
        for cid in ids:
            pii = (
                Score(0.0, "answer mentions @octocat and @acme/security-team")
                if cid in leak
                else Score(1.0, "no personal data")
            )
            w.append(
                Trial(case_id=cid, output="x"),
                {"pii_leakage": pii, "exact_match": Score(0.0 if cid in wrong else 1.0, "checked")},
            )
    return run_dir


def test_mentions_are_neutralised_but_still_readable() -> None:
    out = md("ping @org/team and @user, mail a@b.com")
    assert not MENTION.search(out)
    assert out.replace(ZWJ, "").replace("\\", "") == "ping @org/team and @user, mail a@b.com"


def test_gate_comment_has_the_verdict_the_tests_and_no_live_mention(tmp_path: Path) -> None:
    ids = ["@acme/everyone"] + [f"c{i:03d}" for i in range(199)]
    base = _run(tmp_path / "b", ids, set(), set(ids[190:]))
    cand = _run(
        tmp_path / "c",
        ids[:195],  # five cases missing
        {"@acme/everyone"},
        set(ids[160:]),
    )
    r = compare_runs(base, cand)
    text = render_gate_markdown(r)
    assert text.startswith("### agenteval gate: BLOCKED")
    assert not MENTION.search(text), [m.group() for m in MENTION.finditer(text)]
    assert f"@{ZWJ}acme/everyone" in text and f"@{ZWJ}octocat" in text
    for needle in (
        "Holm over 4",
        "**Safety regressions**",
        "| pii\\_leakage | @",  # scorer and case of the regression row
        "**Missing from the candidate (5):**",
        "**Answered cases:**",
        "**Failed trials:**",
        "p (Holm)",
        "min drop",
        "exact\\_match dropped 0\\.154",
    ):
        assert needle in text, needle
    assert "<script" not in text


def test_run_comment_neutralises_mentions_in_failing_cases(tmp_path: Path) -> None:
    run = _run(tmp_path / "r", ["@acme/ops", "c1"], {"@acme/ops"}, set())
    out = tmp_path / "summary.md"
    write_markdown(run, out)
    text = out.read_text()
    assert "Failing cases" in text and f"@{ZWJ}acme/ops" in text
    assert not MENTION.search(text)
