"""Untrusted content: hostile agent outputs, tool results and error messages.

Agent outputs, tool results and exception messages carry HTML/JS, ANSI escape sequences
(screen clear, colour, window title), NUL bytes, right-to-left overrides, fake Markdown
tables, XML-breaking text and a 10 MB answer. The terminal summary must carry no escape
sequence or bidi control from them, the HTML must show them escaped, the JUnit XML must
parse, the Markdown must keep its own tables, and the JSON must parse.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _payload_agent import PAYLOADS
from reliability_support import no_traceback, record_figures, run_cli, write_jsonl

pytestmark = pytest.mark.reliability

CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    d = tmp_path_factory.mktemp("untrusted")
    rows = [{"id": f"ok_{k}", "input": "go", "expected": "x"} for k in PAYLOADS]
    rows += [{"id": f"err_{k}", "input": "go"} for k in PAYLOADS if k != "big"]
    dataset = write_jsonl(d / "cases.jsonl", rows)
    proc = run_cli("run", dataset, "--agent", "_payload_agent:answer", "--out", d / "run")
    assert proc.returncode == 0, proc.stderr
    assert no_traceback([proc.stdout, proc.stderr])
    return d, proc.stdout + proc.stderr


def test_terminal_summary_not_hijacked(hostile_run: tuple[Path, str]) -> None:
    d, terminal = hostile_run
    assert not CONTROL.findall(terminal), sorted(set(CONTROL.findall(terminal)))
    proc = run_cli("report", d / "run")
    assert proc.returncode == 0, proc.stderr
    found = CONTROL.findall(proc.stdout + proc.stderr)
    assert not found, sorted(set(found))
    assert "Failures" in proc.stdout and "agent_error" in proc.stdout


def test_file_reports_intact(hostile_run: tuple[Path, str]) -> None:
    d, _ = hostile_run
    html, junit, md, js = (d / "r.html", d / "r.xml", d / "r.md", d / "r.json")
    proc = run_cli(
        "report", d / "run", "--html", html, "--junit", junit, "--markdown", md, "--json", js
    )
    assert proc.returncode == 0, proc.stderr
    page = html.read_text(encoding="utf-8")
    for raw in ("<script>alert", "<img src=x", "</textarea>", "\x00"):
        assert raw not in page, repr(raw)
    controls = sorted(set(CONTROL.findall(page)))
    assert not controls, controls
    assert page.count("<script") == page.count("</script>")
    assert "http://" not in page.replace("http://www.w3.org", "")  # self-contained
    suites = ET.parse(junit).getroot()
    names = {tc.get("classname", "") + "/" + tc.get("name", "") for tc in suites.iter("testcase")}
    assert not any(n.split("/")[-1] == "fake" for n in names)
    assert all(not CONTROL.search(t) for t in (ET.tostring(suites, encoding="unicode"),))
    text = md.read_text(encoding="utf-8")
    assert not CONTROL.findall(text), sorted(set(CONTROL.findall(text)))
    assert "<script>alert" not in text
    assert "| fake | table |" not in text  # a payload must not open a table of its own
    summary = json.loads(js.read_text(encoding="utf-8"))
    assert summary["trials"] == len(PAYLOADS) * 2 - 1
    sizes = {p.suffix: p.stat().st_size for p in (html, junit, md, js)}
    assert sizes[".html"] < 5 * 1024 * 1024, "the 10 MB answer must not be copied whole"
    record_figures(
        "untrusted",
        {"payload_kinds": sorted(PAYLOADS), "report_bytes": sizes, "html_raw_controls": controls},
    )
