"""Control characters never reach an output: terminal, HTML, JUnit XML, Markdown.

Payloads (from the agent's answer, tool call names, arguments and results, raised error
messages, and from the dataset's case ids, inputs and tags): the 8-bit CSI U+009B with a
screen clear and colours, OSC/DCS in 8-bit form, ESC sequences, NUL and other C0
controls, DEL, the noncharacters U+FFFE/U+FFFF, bidi overrides, and lone surrogates
(from the agent only: a JSON dataset cannot carry them into a UTF-8 file). Every output
must be valid UTF-8 without any of them; the JUnit file must parse with a real XML parser;
the HTML shows them as visible stand-ins.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _control_agent import CONTROL_PAYLOADS
from reliability_support import no_traceback, run_cli, write_jsonl

pytestmark = pytest.mark.reliability

FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff\ud800-\udfff]"
)


def _no_surrogates(text: str) -> str:
    return text.replace("\ud800", "").replace("\udfff", "")


@pytest.fixture(scope="module")
def control_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    d = tmp_path_factory.mktemp("controls")
    rows = []
    for kind, payload in CONTROL_PAYLOADS.items():
        text = _no_surrogates(payload)
        rows.append(
            {
                "id": f"ok_{kind}_{text}",
                "input": "go " + text,
                "expected": "x",
                "tags": [text[:6]],
                "metadata": {"kind": kind},
            }
        )
        rows.append({"id": f"err_{kind}", "input": "go", "metadata": {"kind": kind, "err": True}})
    dataset = write_jsonl(d / "cases.jsonl", rows)
    run = run_cli("run", dataset, "--agent", "_control_agent:answer", "--out", d / "run")
    assert run.returncode == 0, run.stderr
    report = run_cli(
        "report",
        d / "run",
        "--html",
        d / "r.html",
        "--junit",
        d / "r.xml",
        "--markdown",
        d / "r.md",
    )
    assert report.returncode == 0, report.stderr
    streams = [run.stdout, run.stderr, report.stdout, report.stderr]
    assert no_traceback(streams)
    return d, streams


def test_terminal_output_has_no_control_character(control_run: tuple[Path, list[str]]) -> None:
    _, streams = control_run
    found = sorted({c for s in streams for c in FORBIDDEN.findall(s)})
    assert not found, found
    assert "agent_error" in streams[0]


def test_files_are_utf8_without_control_characters(control_run: tuple[Path, list[str]]) -> None:
    d, _ = control_run
    for name in ("r.html", "r.xml", "r.md", "run/trials.jsonl"):
        text = (d / name).read_bytes().decode("utf-8")  # strict: no encoded surrogate
        if name.endswith(".jsonl"):
            for line in text.rstrip("\n").split("\n"):  # C1 characters are no line ends
                json.loads(line)
            continue
        found = sorted(set(FORBIDDEN.findall(text)))
        assert not found, (name, found)


def test_junit_parses_with_a_real_xml_parser(control_run: tuple[Path, list[str]]) -> None:
    d, _ = control_run
    root = ET.parse(d / "r.xml").getroot()
    names = [tc.get("name", "") for tc in root.iter("testcase")]
    assert any(n.startswith("ok_c1_") for n in names)
    assert all(not FORBIDDEN.search(n) for n in names)


def test_html_shows_stand_ins(control_run: tuple[Path, list[str]]) -> None:
    d, _ = control_run
    page = (d / "r.html").read_text(encoding="utf-8")
    assert "&lt;U+009B&gt;" in page  # the 8-bit CSI, visible
    assert "\u241b" in page  # ESC as its Control Pictures symbol
    assert "\u2400" in page  # NUL likewise


@pytest.mark.parametrize("payload", list(CONTROL_PAYLOADS.values()))
def test_sanitisers(payload: str) -> None:
    from agenteval._util.untrusted import show_unsafe, strip_unsafe

    assert not FORBIDDEN.search(strip_unsafe(payload, keep=""))
    shown = show_unsafe(payload, keep="")
    assert not FORBIDDEN.search(shown)
    assert len(shown) >= len(payload)  # replaced, never dropped
