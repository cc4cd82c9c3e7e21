"""docs/monitor.md's example runs as shown: the real command, the real OTel SDK exporter.

The page's ``agent.py`` and its shell block are taken from the page, the port replaced by
a free one, and run with bash in a temporary folder (``agenteval`` and ``python`` are this
interpreter). Takes ~8 s.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from monitor_harness import free_port, page_block, shell_env

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "curl"], capture_output=True).returncode != 0, reason="needs curl"
)


def test_the_example_scores_the_traffic_and_reports_the_window(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(page_block("<!-- file: agent.py -->"))
    script = page_block("<!-- run: tests/monitor/test_monitor_docs.py -->")
    script = script.replace("4318", str(free_port()))
    env = shell_env(tmp_path)
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
