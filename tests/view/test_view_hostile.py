"""The viewer against DNS rebinding and FIFOs (issue 28, cause 10): a real ``agenteval
view`` process on 127.0.0.1. A request whose Host names another server gets 421 and no
run data; a run whose files are FIFOs is listed as broken, and never blocks a page."""

from __future__ import annotations

import http.client
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from _tree import FIXTURES, viewer

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _get(url: str, path: str, host: str) -> tuple[int, bytes]:
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=15)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("hostile")
    shutil.copytree(FIXTURES / "demo_careful", root / "good")
    for name in ("trials.jsonl", "run.json", "cases.jsonl"):
        d = root / f"fifo-{name.split('.')[0]}"
        shutil.copytree(FIXTURES / "demo_careful", d)
        (d / name).unlink()
        os.mkfifo(d / name)
    yield root


def test_a_foreign_host_header_gets_421_and_no_run_data(tree: Path) -> None:
    with viewer(tree, "--allow-host", "my.box") as v:
        port = urlsplit(v.url).port
        for host in (
            "evil.example",
            f"evil.example:{port}",
            "127.0.0.1.evil.example",
            "localhost.evil",
        ):
            for path in ("/", "/run?run=good", "/api/trials?run=good", "/static/view.js"):
                status, body = _get(v.url, path, host)
                assert status == 421, (host, path, status)
                assert b"careful" not in body and b"c1" not in body
        for host in (
            f"127.0.0.1:{port}",
            f"localhost:{port}",
            "LOCALHOST.",
            f"app.localhost:{port}",
            f"[::1]:{port}",
            "my.box",
            f"My.Box:{port}",
        ):
            status, body = _get(v.url, "/run?run=good", host)
            assert status == 200, (host, status, body[:200])


def test_runs_whose_files_are_fifos_are_broken_and_block_nothing(tree: Path) -> None:
    with viewer(tree) as v:
        for _ in range(12):  # more requests than the executor has threads
            for key in ("fifo-trials", "fifo-run", "fifo-cases"):
                status, _ = _get(v.url, f"/run?run={key}", "127.0.0.1")
                assert status == 200
                status, _ = _get(v.url, f"/api/status?run={key}", "127.0.0.1")
                assert status == 200
        status, body = _get(v.url, "/", "127.0.0.1")
        assert status == 200
        page = body.decode()
        assert page.count("is not a regular file") >= 3, page
        status, body = _get(v.url, "/run?run=good", "127.0.0.1")
        assert status == 200 and b"is not a regular file" not in body
        for i in range(3):
            assert _get(v.url, f"/trial?run=good&i={i}", "127.0.0.1")[0] == 200
