"""The HTML report in a real headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _runbuild import XSS_PAYLOADS, sample_cases, sample_trials

from agenteval.report import write_html

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Page:
    """A page with every request, console message, page error and dialog recorded."""

    def __init__(self, browser: Any, url: str, **context: Any) -> None:
        self.requests: list[str] = []
        self.console: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)
        self.page.goto(url, wait_until="load")

    def _dialog(self, d: Any) -> None:
        self.dialogs.append(d.message)
        d.dismiss()

    def visible_rows(self) -> int:
        return int(self.page.locator("tr.trial:visible").count())


@pytest.fixture
def report(make_run: Callable[..., Path], tmp_path: Path) -> Path:
    run = make_run(
        sample_cases(xss=True),
        sample_trials(xss=True),
        scorers=["exact_match", "retrieval_recall", "judge_correctness"],
    )
    out = tmp_path / "report.html"
    write_html(run, out)
    return out


def test_renders_offline_without_errors(browser: Any, report: Path, tmp_path: Path) -> None:
    p = Page(browser, report.as_uri(), viewport={"width": 1280, "height": 900})
    assert p.requests == [report.as_uri()]
    assert [c for c in p.console if c[0] in ("error", "warning")] == []
    assert p.errors == []
    assert p.page.locator("h1").inner_text() == "agenteval report"
    assert p.page.locator("#scores svg").count() == 1
    assert p.page.locator("#latency svg").count() == 2
    p.page.screenshot(path=str(tmp_path / "shot.png"))
    assert (tmp_path / "shot.png").stat().st_size > 10_000
    p.context.close()


def test_filters_and_opening_a_trial(browser: Any, report: Path) -> None:
    p = Page(browser, report.as_uri())
    page = p.page
    total = 4 + len(XSS_PAYLOADS)
    assert p.visible_rows() == total
    assert page.locator("#f-count").inner_text() == f"{total} of {total} trials"
    page.fill("#f-text", "c2")
    assert p.visible_rows() == 1
    page.fill("#f-text", "")
    page.select_option("#f-tag", "math")
    assert p.visible_rows() == 2
    page.select_option("#f-status", "failure")
    assert p.visible_rows() == 1  # c4 timed out
    page.select_option("#f-tag", "")
    page.select_option("#f-status", "")
    page.select_option("#f-scorer", "exact_match")
    assert p.visible_rows() == total - 1  # c1 passed exact_match
    page.select_option("#f-scorer", "")
    page.select_option("#f-status", "error")
    assert p.visible_rows() == 1  # the judge scorer raised on c3
    page.select_option("#f-status", "")

    row = page.locator("tr.trial", has_text="c1").first
    detail = page.locator("tr.trial + tr.detail-row").first
    assert detail.is_hidden()
    row.click()
    assert detail.is_visible()
    text = detail.inner_text()
    for needle in ("What is 2+2?", "calc", '"e": "2+2"', "exact_match", "equal", "GRADE: C"):
        assert needle in text, needle
    row.click()
    assert detail.is_hidden()
    assert p.errors == [] and p.requests == [report.as_uri()]
    p.context.close()


def test_xss_corpus_executes_nothing(browser: Any, report: Path) -> None:
    assert len(XSS_PAYLOADS) >= 10
    p = Page(browser, report.as_uri())
    page = p.page
    for row in page.locator("tr.trial").all():  # open every trial: payloads in details render
        row.click()
    page.wait_for_timeout(300)
    body = page.locator("body").inner_text()
    for payload in XSS_PAYLOADS:
        assert payload in body or payload.strip() in body, payload
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert p.dialogs == []
    assert page.locator("img, iframe, input[autofocus], #xss-link").count() == 0
    assert page.locator("script").count() == 1
    assert p.requests == [report.as_uri()]
    assert p.errors == []
    p.context.close()


def test_readable_on_a_phone(browser: Any, report: Path) -> None:
    p = Page(browser, report.as_uri(), viewport={"width": 390, "height": 844}, is_mobile=True)
    overflow = p.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    p.page.locator("tr.trial").first.click()
    assert p.page.locator("tr.detail-row").first.is_visible()
    p.context.close()
