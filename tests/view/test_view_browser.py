"""``agenteval view`` in a real headless Chromium (Debian's, driven by Playwright): every
page, the filters, compare, live updates, and the XSS corpus through every view."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _runbuild import sample_cases
from _tree import XSS, Viewer, build_tree, wait_for

from agenteval.cases.case import Case
from agenteval.gate.paired import compare_runs
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import Trial

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
SHOTS = "AGENTEVAL_VIEW_SHOTS"
"""When set, the screenshots of the pages are also written into this folder (docs/shots.py)."""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists() and not os.environ.get("CI"),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
]
q = urllib.parse.quote


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def view(tree: Path) -> Iterator[Viewer]:
    v = Viewer(tree, poll=0.3)
    yield v
    v.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Tab:
    """A page whose requests are all recorded; any request not to the viewer is aborted
    and recorded in :attr:`blocked`."""

    def __init__(self, browser: Any, view: Viewer, **context: Any) -> None:
        self.origin = view.url.rstrip("/")
        self.requests: list[str] = []
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.console: list[str] = []
        self.dialogs: list[str] = []
        self.headers: list[tuple[str, str | None]] = []
        self.context = browser.new_context(**context)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on(
            "response",
            lambda r: self.headers.append((r.url, r.headers.get("content-security-policy"))),
        )
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("dialog", self._dialog)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.origin + "/"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def _dialog(self, d: Any) -> None:
        self.dialogs.append(d.message)
        d.dismiss()

    def go(self, path: str) -> Any:
        self.page.goto(self.origin + path, wait_until="load")
        return self.page

    def clean(self) -> None:
        """Nothing left the viewer, nothing failed, every response had the CSP."""
        assert self.blocked == []
        assert all(u.startswith(self.origin + "/") for u in self.requests), self.requests
        assert self.errors == [] and self.dialogs == []
        assert [c for c in self.console if c.startswith(("error", "warning"))] == []
        assert all(csp and "default-src 'none'" in csp for _, csp in self.headers), self.headers
        self.context.close()


def _shot(page: Any, name: str, tmp_path: Path) -> None:
    for folder in filter(None, (tmp_path, os.environ.get(SHOTS))):
        out = Path(folder) / f"{name}.png"
        page.screenshot(path=str(out), full_page=False)
        assert out.stat().st_size > 10_000


def test_every_page_renders(browser: Any, view: Viewer, tree: Path, tmp_path: Path) -> None:
    t = Tab(browser, view, viewport={"width": 1280, "height": 860})
    page = t.go("/")
    assert page.locator("h1").inner_text() == "Runs"
    assert page.locator("tr.run").count() == 10
    page = t.go("/run?run=a/base")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#trial-table tbody tr").count() == 4 + len(XSS)
    assert page.locator("#scores tbody tr").count() == 3 + len(XSS)  # a scorer per payload
    page.locator("#trial-table a", has_text="c1").first.click()
    page.wait_for_load_state("load")
    text = page.locator("main").inner_text()
    for needle in (
        "What is 2+2?",
        "calc",
        '"e": "2+2"',
        "exact_match",
        "equal",
        "GRADE: C",
        "Raw JSON",
        "1.00s total",
    ):
        assert needle in text, needle
    page = t.go("/compare?a=a/base&b=a/cand")
    expected = compare_runs(tree / "a" / "base", tree / "a" / "cand")
    assert page.locator("#verdict-word").inner_text() == expected.verdict
    page.locator("ul.newly-failing a", has_text="c1").click()
    page.wait_for_load_state("load")
    sides = page.locator("section.side")
    assert sides.count() == 2
    assert "now wrong" in sides.nth(1).inner_text() and "equal" in sides.nth(0).inner_text()
    t.clean()


def test_screenshots(browser: Any, view: Viewer, tmp_path: Path) -> None:
    """The pictures of docs/view.md (written there by docs/shots.py), over the 0.1 demo runs."""
    t = Tab(browser, view, viewport={"width": 1280, "height": 800})
    _shot(t.go("/"), "runs", tmp_path)
    page = t.go("/run?run=v01/demo_sloppy")
    page.wait_for_selector("body[data-ready='1']")
    _shot(page, "run", tmp_path)
    page.locator("#trials").scroll_into_view_if_needed()
    _shot(page, "trials", tmp_path)
    page = t.go("/trial?run=v01/demo_sloppy&i=3")
    assert page.locator("li.tool").count() >= 1
    _shot(page, "trial", tmp_path)
    page = t.go("/compare?a=v01/demo_careful&b=v01/demo_sloppy")
    assert page.locator("#verdict-word").inner_text() in ("BLOCKED", "PASSED", "UNDERPOWERED")
    _shot(page, "compare", tmp_path)
    t.clean()


def test_runs_table_filters_sorts_and_compares(browser: Any, view: Viewer) -> None:
    t = Tab(browser, view)
    page = t.go("/")
    visible = page.locator("tr.run:visible")
    assert page.locator("#f-count").inner_text() == "10 of 10 runs"
    page.select_option("#f-agent", "pkg.agents:Other")
    assert visible.count() == 1 and "a/cand" in visible.first.inner_text()
    page.select_option("#f-agent", "")
    page.select_option("#f-tag", "beta")
    assert visible.count() == 1 and "big" in visible.first.inner_text()
    page.select_option("#f-tag", "")
    page.select_option("#f-dataset", "cases.jsonl")
    assert visible.count() == 4  # a/base, a/cand, big and v01/repeats name cases.jsonl
    page.select_option("#f-dataset", "")
    group = page.locator("section.group").filter(has_text="demo_careful")
    group.locator("th", has_text="main score").click()  # ascending: the sloppy runs first
    assert "demo_careful" not in group.locator("tbody tr").first.inner_text()
    group.locator("th", has_text="main score").click()  # descending
    assert "demo_careful" in group.locator("tbody tr").first.inner_text()
    base_group = page.locator("section.group").filter(has_text="a/base")
    base_group.locator("select[name=a]").select_option("a/base")
    base_group.locator("select[name=b]").select_option("a/cand")
    base_group.locator("button").click()
    page.wait_for_load_state("load")
    assert page.locator("#verdict").count() == 1
    t.clean()


def test_trials_filters_and_paging(browser: Any, view: Viewer) -> None:
    t = Tab(browser, view)
    page = t.go("/run?run=big")
    page.wait_for_selector("body[data-ready='1']")
    rows = page.locator("#trial-table tbody tr")
    count = page.locator("#f-count")
    assert count.inner_text() == "1–50 of 130 matching (130 trials)" and rows.count() == 50
    page.click("#p-next")
    wait_for(lambda: count.inner_text().startswith("51–100 of 130"))
    assert rows.first.locator("a").inner_text() == "b050"
    page.select_option("#f-failed", "exact_match")
    wait_for(lambda: count.inner_text() == "1–44 of 44 matching (130 trials)")
    page.select_option("#f-tag", "beta")  # beta cases (i % 3 == 1) all pass exact_match
    wait_for(lambda: count.inner_text() == "0 of 0 matching (130 trials)")
    page.select_option("#f-tag", "alpha")  # alpha cases (i % 3 == 0) are the failing ones
    wait_for(lambda: count.inner_text() == "1–44 of 44 matching (130 trials)")
    page.select_option("#f-cause", "timeout")
    m = len([i for i in range(130) if i % 21 == 0])
    wait_for(lambda: count.inner_text() == f"1–{m} of {m} matching (130 trials)")
    page.select_option("#f-failed", "")
    page.select_option("#f-tag", "")
    page.select_option("#f-cause", "")
    page.fill("#f-text", "answer number 12")
    wait_for(lambda: count.inner_text() == "1–10 of 10 matching (130 trials)")
    t.clean()


def test_a_run_being_written_updates_live(browser: Any, view: Viewer, tree: Path) -> None:
    cases = [Case(id=f"L{i}", input="q", expected="a") for i in range(8)]
    header = RunHeader(dataset=DatasetRef(path="live.jsonl", sha256="sha-live", cases=8))
    run = tree / "live"
    with RunWriter.create(run, header) as w:
        write_cases(run, cases)
        for c in cases[:3]:
            w.append(Trial(case_id=c.id, output="a"), {"exact_match": Score(1.0, "ok")})
        t = Tab(browser, view)
        page = t.go("/run?run=live")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("[data-kpi=trials]").inner_text() == "3"
        live = page.locator("#live")
        assert live.is_visible() and "Being written (pid" in live.inner_text()
        for c in cases[3:]:
            w.append(Trial(case_id=c.id, output=None), {"exact_match": Score(0.0, "no")})
        wait_for(lambda: page.locator("[data-kpi=trials]").inner_text() == "8")
        wait_for(lambda: page.locator("#trial-table tbody tr").count() == 8)
        assert page.locator("[data-kpi=answered]").inner_text() == "3"
    wait_for(lambda: "No longer being written" in live.inner_text())
    t.clean()


def _xss_paths(tree: Path) -> list[str]:
    ids = [c.id for c in sample_cases(xss=True)]
    paths = [
        "/",
        "/run?run=a/base",
        "/run?run=a/cand",
        "/compare?a=a/base&b=a/cand",
        "/compare?a=a/base&b=big",
    ]
    paths += [f"/trial?run=a/base&i={i}" for i in range(len(ids))]
    paths += [f"/pair?a=a/base&b=a/cand&case={q(cid, safe='')}" for cid in ids[4:]]
    return paths


def test_xss_corpus_executes_nothing_anywhere(browser: Any, view: Viewer, tree: Path) -> None:
    assert len(XSS) >= 10
    t = Tab(browser, view)
    shown = ""
    for path in _xss_paths(tree):
        page = t.go(path)
        if path.startswith("/run"):
            page.wait_for_selector("body[data-ready='1']")
            for sel in ("#f-tag", "#f-failed"):  # filters built from payload tags/scorers
                page.select_option(sel, index=page.locator(f"{sel} option").count() - 1)
            page.fill("#f-text", XSS[3][:12])
            page.wait_for_timeout(350)
        if path.startswith("/trial"):
            page.locator("details.raw summary").click()
        assert page.evaluate("typeof window.__pwned") == "undefined", path
        assert (
            page.locator(
                "main img, main iframe, main input[autofocus], #xss-link, main svg,"
                " main style, main math"
            ).count()
            == 0
        ), path
        assert page.locator("script").count() == 1, path
        shown += page.locator("body").inner_text()
    for payload in XSS:  # shown as text, not run
        assert payload.strip() in shown, payload
    t.clean()


def test_readable_on_a_phone(browser: Any, view: Viewer) -> None:
    t = Tab(browser, view, viewport={"width": 390, "height": 844}, is_mobile=True)
    for path in ("/", "/run?run=big", "/trial?run=big&i=1", "/compare?a=a/base&b=a/cand"):
        page = t.go(path)
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 1, path
    t.clean()
