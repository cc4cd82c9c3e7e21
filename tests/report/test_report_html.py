"""The HTML report as a file: self-contained, escaped, policy-locked."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from _runbuild import XSS_PAYLOADS, sample_cases, sample_trials

from agenteval.report import write_html

SCORERS = ["exact_match", "retrieval_recall", "judge_correctness"]


def _report(make_run: Callable[..., Path], tmp_path: Path) -> str:
    run = make_run(
        sample_cases(xss=True),
        sample_trials(xss=True),
        scorers=SCORERS,
        agent={"kind": "python", "target": XSS_PAYLOADS[0]},
    )
    out = tmp_path / "report.html"
    write_html(run, out)
    return out.read_text(encoding="utf-8")


def test_no_external_resource_and_one_script(make_run: Callable[..., Path], tmp_path: Path) -> None:
    html = _report(make_run, tmp_path)
    assert re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html) is None
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert html.count("<script") == 1 and html.count("</script") == 1


def test_csp_names_the_hash_of_the_only_script(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    html = _report(make_run, tmp_path)
    m = re.search(r"script-src '(sha256-[^']+)'", html)
    assert m is not None and "default-src 'none'" in html
    script = html.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert m.group(1) == f"sha256-{digest}"
    assert "innerHTML" not in script


def test_every_payload_is_escaped(make_run: Callable[..., Path], tmp_path: Path) -> None:
    html = _report(make_run, tmp_path)
    for p in XSS_PAYLOADS:
        assert p not in html, p
    for tag in (
        "<img",
        "<svg onload",
        "<iframe",
        "<a href",
        "<body onload",
        "<details open",
        "<math",
        "<input autofocus",
    ):
        assert tag not in html, tag
    assert "&lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt;" in html


def test_sections_present(make_run: Callable[..., Path], tmp_path: Path) -> None:
    html = _report(make_run, tmp_path)
    for needle in (
        'id="scores"', 'id="tags"', 'id="latency"', 'id="cost"', 'id="failures"',
        'id="trials"', 'id="f-text"', 'id="f-status"', 'id="f-tag"', 'id="f-scorer"',
        "<svg", 'name="viewport"', "95% Wilson",
    ):  # fmt: skip
        assert needle in html, needle
    assert html.count('class="trial"') == 4 + len(XSS_PAYLOADS)
