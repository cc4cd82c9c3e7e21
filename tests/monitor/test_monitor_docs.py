"""docs/monitor.md's example runs as shown: the real command, the real OTel SDK exporter.

The page's ``agent.py`` and its shell block are taken from the page, the port replaced by
a free one, and run with bash in a temporary folder (``agenteval`` and ``python`` are this
interpreter). Takes ~8 s.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "monitor.md"

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "curl"], capture_output=True).returncode != 0, reason="needs curl"
)


def _block_after(marker: str) -> str:
    text = PAGE.read_text()
    at = text.index(marker)
    m = re.compile(r"```\w*\n(.*?)```", re.S).search(text, at)
    assert m is not None
    return m.group(1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_example_scores_the_traffic_and_reports_the_window(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(_block_after("<!-- file: agent.py -->"))
    script = _block_after("<!-- run: tests/monitor/test_monitor_docs.py -->")
    script = script.replace("4318", str(_free_port()))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shims = (("agenteval", f"{sys.executable} -m agenteval"), ("python", sys.executable))
    for name, target in shims:
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONUNBUFFERED": "1"}
    r = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "agenteval_monitor_traces_scored_total 20" in out
    assert 'scorer="tool_faithfulness",status="failed"} 4' in out
    assert 'scorer="tool_faithfulness",status="passed"} 16' in out
    assert "trials 20" in out  # the report of the window
    assert "is still being written" in r.stderr
