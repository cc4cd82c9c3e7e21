"""docs/monitor.md's live demo runs as shown: the demo's runs, the real OTLP exporter
(``export-otel``), the real ``agenteval monitor``. The sloppy agent's window raises the
alert; the careful agent's (the same block, its run sent instead) closes without one.

The page's block is run with bash in a temporary folder (``agenteval`` and ``python`` are
this interpreter, the port a free one); the control reuses the demo the first built.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from monitor_harness import free_port, page_block, shell_env

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "curl"], capture_output=True).returncode != 0, reason="needs curl"
)


def _block() -> str:
    return page_block("<!-- run: tests/monitor/test_monitor_demo.py -->")


def _start(where: Path, script: str) -> subprocess.Popen[str]:
    where.mkdir()
    return subprocess.Popen(
        ["timeout", "150", "bash", "-c", script],
        cwd=where,
        env=shell_env(where),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_the_sloppy_agents_window_alerts_and_the_careful_agents_does_not(tmp_path: Path) -> None:
    block = _block()
    sloppy = block.replace("4318", str(free_port()))
    # the control: the careful run sent as the traffic; no alerts.jsonl to print
    careful = block.replace("4318", str(free_port())).replace(
        "export-otel shop/runs/sloppy", "export-otel shop/runs/careful"
    )
    careful = careful.replace("python -m json.tool live/alerts.jsonl | head -12", "")
    # the control reuses the demo the first one built (it costs more than the rest)
    careful = careful.replace("agenteval demo --dir shop", f"cp -r {tmp_path / 's' / 'shop'} shop")
    out = {}
    for name, where, script in (("sloppy", "s", sloppy), ("careful", "c", careful)):
        p = _start(tmp_path / where, script)
        out[name] = p.communicate(timeout=180)
        assert p.returncode == 0, (name, out[name][1])

    stdout, stderr = out["sloppy"]
    assert "exported 34 traces (90 spans)" in stdout
    assert "Traceback" not in stderr
    alerts = [json.loads(x) for x in (tmp_path / "s" / "live" / "alerts.jsonl").open()]
    lines = [ln for ln in stderr.splitlines() if "ALERT window" in ln]
    assert len(lines) == len(alerts) >= 1
    assert any("safety scorer pii_leakage failed on" in ln for ln in lines)
    assert all(a["alpha_window"] == pytest.approx(0.05 / 8640) for a in alerts)
    windows = [d for d in (tmp_path / "s" / "live").iterdir() if d.name.startswith("2")]
    trials = sum(json.loads((w / "run.json").read_text())["summary"]["trials"] for w in windows)
    assert trials == 34  # every window closed, with its summary
    if len(windows) == 1:  # the page's numbers (the run did not straddle a 10 s boundary)
        (doc,) = alerts
        assert doc["cases"] == 34 and "(34 cases)" in lines[0]
        assert "safety scorer pii_leakage failed on 2 of 34 candidate case(s)" in lines[0]
        exact = next(s for s in doc["scorers"] if s["scorer"] == "exact_match")
        # a 35-point drop, p = 0.0008: not enough at the 10 s window's level
        assert exact["baseline"] == 1.0 and exact["window"] == pytest.approx(0.6538, abs=1e-3)
        assert exact["p_value"] == pytest.approx(0.00085, abs=5e-5)
        assert all("exact_match" not in r for r in doc["reasons"])
    assert '"window": "' in stdout and '"reasons": [' in stdout

    stdout, stderr = out["careful"]
    assert "exported 34 traces (" in stdout and "ALERT" not in stderr
    assert not (tmp_path / "c" / "live" / "alerts.jsonl").exists()
    windows = [d for d in (tmp_path / "c" / "live").iterdir() if d.name.startswith("2")]
    trials = sum(json.loads((w / "run.json").read_text())["summary"]["trials"] for w in windows)
    assert trials == 34
