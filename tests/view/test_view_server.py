"""``agenteval view`` over HTTP: every page, read-only, CSP, path keys, broken runs, gate."""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from _tree import XSS, Viewer, build_tree

from agenteval.errors import EXIT_INPUT
from agenteval.gate.paired import compare_runs
from agenteval.view.app import CSP

q = urllib.parse.quote


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tree(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def view(tree: Path) -> Iterator[Viewer]:
    v = Viewer(tree)
    yield v
    v.stop()


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (p.read_bytes() if p.is_file() else b"", st.st_mtime_ns)
    return out


def _every_page(v: Viewer, tree: Path) -> list[str]:
    """The path of every page and endpoint the viewer has, for every run under the tree."""
    body = v.get("/")[2].decode()
    keys = sorted(set(re.findall(r'href="/run\?run=([^"]+)"', body)))
    paths = ["/", "/static/view.js", "/static/view.css"]
    for k in keys:
        key = urllib.parse.unquote(k)
        paths += [f"/run?run={k}", f"/api/status?run={k}", f"/api/trials?run={k}&limit=500"]
        status = json.loads(v.get(f"/api/status?run={k}")[2])
        paths += [f"/trial?run={k}&i={i}" for i in range(min(status["trials"], 40))]
        assert key
    paths.append("/compare?a=a/base&b=a/cand")
    paths.append("/compare?a=v01/demo_careful&b=v01/demo_sloppy")
    paths += [f"/pair?a=a/base&b=a/cand&case={q(c)}" for c in ("c1", "c2", "x0" + XSS[0])]
    return paths


def test_every_page_answers_with_csp_and_never_writes(view: Viewer, tree: Path) -> None:
    before = _snapshot(tree)
    paths = _every_page(view, tree)
    assert len(paths) > 100
    for path in paths:
        status, headers, body = view.get(path)
        assert status == 200, (path, body[:300])
        assert headers["Content-Security-Policy"] == CSP, path
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert b"Traceback" not in body, path
    for path in ("/nope", "/run?run=nope", "/static/x.js"):
        status, headers, _ = view.get(path)
        assert status == 404 and headers["Content-Security-Policy"] == CSP
    assert _snapshot(tree) == before  # same files, same bytes, same mtimes: nothing written


def test_csp_allows_nothing_from_elsewhere() -> None:
    parts = dict(p.strip().split(" ", 1) for p in CSP.split(";"))
    assert parts["default-src"] == "'none'"
    for d in ("script-src", "style-src", "connect-src"):
        assert parts[d] == "'self'", d
    assert "unsafe-inline" not in CSP and "http" not in CSP


@pytest.mark.parametrize(
    "path",
    [
        "/run?run=..",
        "/run?run=../..",
        "/run?run=/etc",
        "/run?run=a/../a/base",
        "/run?run=a/base/../../big",
        "/run?run=%2e%2e%2fetc",
        "/trial?run=/etc/passwd&i=0",
        "/api/trials?run=../a/base",
        "/static/..%2fapp.py",
        "/static/../app.py",
    ],
)
def test_run_keys_are_looked_up_never_joined(view: Viewer, path: str) -> None:
    assert view.get(path)[0] == 404


def test_broken_runs_show_why_and_the_others_load(view: Viewer, tree: Path) -> None:
    page = view.get("/")[2].decode()
    assert "Broken runs" in page
    assert "truncated/trials.jsonl:3: not valid JSON" in page
    assert "badjson/run.json: Invalid JSON" in page
    assert "unreadable/trials.jsonl: cannot be read (Is a directory)" in page
    for key in ("a/base", "a/cand", "big", "v01/demo_careful", "v01/repeats", "torn"):
        assert f'href="/run?run={q(key, safe="")}"' in page or f'href="/run?run={key}"' in page
    status = json.loads(view.get("/api/status?run=broken/truncated")[2])
    assert status["error"].endswith(
        "trials.jsonl:3: not valid JSON (Invalid control character at: line 1 column 41 (char 40))"
    )
    run_page = view.get("/run?run=broken/badjson")[2].decode()
    assert "This run is broken" in run_page and "Invalid JSON" in run_page
    # a torn last line (a writer died mid-line) is skipped, as every reader does
    assert json.loads(view.get("/api/status?run=torn")[2])["trials"] == 8


def test_format_1_runs_load(view: Viewer) -> None:
    page = view.get("/run?run=v01/repeats")[2].decode()
    assert "This run is broken" not in page
    assert json.loads(view.get("/api/status?run=v01/repeats")[2])["trials"] == 12
    trial = view.get("/trial?run=v01/demo_careful&i=0")[2].decode()
    assert "get_order" in trial and "exact_match" in trial


def test_compare_page_shows_the_gate_verdict(view: Viewer, tree: Path) -> None:
    expected = compare_runs(tree / "a" / "base", tree / "a" / "cand")
    page = view.get("/compare?a=a/base&b=a/cand")[2].decode()
    assert f'<span id="verdict-word">{expected.verdict}</span>' in page
    for reason in expected.reasons:
        assert reason.replace("'", "&#39;") in page
    em = next(c for c in expected.scorers if c.scorer == "exact_match")
    assert em.newly_failing == ["c1"] and em.newly_passing == ["c2"]
    assert f"{em.p_value:.3g}" in page and f"{em.p_adjusted:.3g}" in page
    assert re.search(r'class="cases newly-failing"><li><a href="/pair\?[^"]*case=c1">c1<', page)
    assert re.search(r'class="cases newly-passing"><li><a href="/pair\?[^"]*case=c2">c2<', page)


def test_compare_runs_sharing_no_case_is_the_unpaired_gate(view: Viewer, tree: Path) -> None:
    """As ``agenteval gate``: runs sharing no case are compared as two samples, and the
    page says so."""
    expected = compare_runs(tree / "a" / "base", tree / "big")
    assert expected.mode == "unpaired"
    page = view.get("/compare?a=a/base&b=big")[2].decode()
    assert "No verdict" not in page
    assert f'<span id="verdict-word">{expected.verdict}</span>' in page
    assert '<p id="mode">Unpaired: ' in page and "share no case id" in page
    em = next(c for c in expected.scorers if c.scorer == "exact_match")
    assert f"{em.baseline_n} / {em.candidate_n}" in page


def test_compare_over_different_datasets_says_why(tmp_path: Path) -> None:
    """Shared cases over a changed dataset: no verdict, the reason, and the way to get one."""
    from _tree import viewer

    tree = build_tree(tmp_path / "runs")
    run_json = tree / "a" / "cand" / "run.json"
    header = json.loads(run_json.read_text())
    header["dataset"]["sha256"] = "another-dataset"
    run_json.write_text(json.dumps(header))
    with viewer(tree) as v:
        page = v.get("/compare?a=a/base&b=a/cand")[2].decode()
        assert "No verdict" in page and "the runs are over different datasets" in page
        assert "allow_dataset_change=1" in page
        page = v.get("/compare?a=a/base&b=a/cand&allow_dataset_change=1")[2].decode()
        assert "No verdict" not in page and 'id="verdict-word"' in page


def test_trials_endpoint_filters_and_pages(view: Viewer) -> None:
    def get(qs: str) -> dict[str, object]:
        return json.loads(view.get("/api/trials?run=big&" + qs)[2])

    assert get("")["total"] == 130 and get("")["matched"] == 130
    assert len(get("limit=50")["rows"]) == 50  # type: ignore[arg-type]
    page3 = get("offset=100&limit=50")
    assert [r["case_id"] for r in page3["rows"]][:2] == ["b100", "b101"]  # type: ignore[index]
    assert get("failed=exact_match")["matched"] == len(range(0, 130, 3))
    assert get("cause=timeout")["matched"] == len(range(0, 130, 7))
    assert get("cause=-")["matched"] == 130 - len(range(0, 130, 7))
    assert get("tag=beta")["matched"] == len(range(1, 130, 3))
    answers = {i: f"answer number {i}" for i in range(130) if i % 7}
    hits = [i for i, a in answers.items() if "answer number 12" in a]
    assert get("q=ANSWER+NUMBER+12")["matched"] == len(hits) == 10  # 12, 120-129 but 126
    assert get("q=B05")["matched"] == 10  # case ids b050-b059
    both = get("failed=exact_match&tag=alpha&cause=timeout")
    assert {r["case_id"] for r in both["rows"]} == {  # type: ignore[union-attr]
        f"b{i:03d}" for i in range(130) if i % 3 == 0 and i % 7 == 0
    }
    assert view.get("/api/trials?run=big&offset=x")[0] == 400


def test_non_loopback_host_warns_once(tmp_path: Path) -> None:
    v = Viewer(tmp_path, "--host", "0.0.0.0")
    err = v.stop()
    warnings = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "--host 0.0.0.0 is not a loopback address" in warnings[0]
    v = Viewer(tmp_path)
    assert v.url.startswith("http://127.0.0.1:")
    assert "warning" not in v.stop()


def test_bad_folder_is_an_input_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = cli("view", tmp_path / "nope", "--port", "0")
    assert r.returncode == EXIT_INPUT
    assert r.stderr.strip().endswith("nope: is not a folder") and "Traceback" not in r.stderr


def test_ctrl_c_stops_it_with_130_and_a_busy_port_is_exit_2(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    v = Viewer(tmp_path)
    port = int(v.url.rsplit(":", 1)[1].strip("/"))
    r = subprocess.run(
        [sys.executable, "-m", "agenteval", "view", str(tmp_path), "--port", str(port)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == EXIT_INPUT
    assert r.stderr.startswith(f"agenteval: error: cannot listen on 127.0.0.1:{port}")
    assert "Traceback" not in r.stderr
    v.proc.send_signal(signal.SIGINT)
    assert v.proc.wait(timeout=20) == 130
    assert "Traceback" not in v.proc.stderr.read()  # type: ignore[union-attr]


def test_bytes_that_are_not_http_get_a_400_and_one_line_not_a_traceback(tmp_path: Path) -> None:
    import socket

    v = Viewer(tmp_path)
    port = int(v.url.rsplit(":", 1)[1].strip("/"))
    for raw in (
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(raw)
            assert s.recv(200).split(b" ")[1] == b"400"
    err = v.stop()
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if "request not read" in ln]
    assert lines == [
        "agenteval view: request not read: Invalid character in Content-Length",
        "agenteval view: request not read: Invalid character in chunk size",
    ]
