"""The report's "By tag" table keeps each tag name on one line (it used to wrap letter by
letter when the run had many scorer columns)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from _runbuild import bad, ok

from agenteval.cases.case import Case
from agenteval.report import write_html
from agenteval.trials.trial import Trial

CHROMIUM = "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
]

SCORERS = [f"a_rather_long_scorer_name_{i}" for i in range(12)]
TAGS = ["multi-step", "retrieval", "customer_support", "math"]


def test_tag_names_stay_on_one_line(make_run: Callable[..., Path], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    cases = [Case(id=f"c{i}", input="q", expected="a", tags=[t]) for i, t in enumerate(TAGS)]
    trials = [
        (
            Trial(case_id=c.id, output="a"),
            {n: ok() if i % 2 else bad() for i, n in enumerate(SCORERS)},
        )
        for c in cases
    ]
    run = make_run(cases, trials, scorers=SCORERS)
    out = tmp_path / "report.html"
    write_html(run, out)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        page = b.new_page(viewport={"width": 1280, "height": 900})
        page.goto(out.as_uri())
        lines = page.evaluate(
            """() => Array.from(document.querySelectorAll('#tags tbody tr td:first-child'))
                .map(td => { const r = document.createRange(); r.selectNodeContents(td);
                             return [td.textContent, r.getClientRects().length]; })"""
        )
        b.close()
    assert sorted(t for t, _ in lines) == sorted(TAGS)
    assert all(n == 1 for _, n in lines), lines
