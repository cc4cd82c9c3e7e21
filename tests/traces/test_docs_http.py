"""docs/agents/http.md runs as written (on free ports instead of 8000 and 4318): the
service file, its config and cases are written out, the service started as the page
says, and the one agenteval command run."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents" / "http.md"
_BLOCK = re.compile(r"(?:Save as `(\S+)`[^\n]*:\n\n)?```(\w+)\n(.*?)```", re.S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the service did not start")


def test_http_page_runs_and_records_every_call(tmp_path: Path, cli: Any) -> None:
    ports = {"8000": str(free_port()), "4318": str(free_port())}

    def local(text: str) -> str:
        return re.sub(r"\b(8000|4318)\b", lambda m: ports[m.group(1)], text)

    files, shell = [], []
    for name, lang, body in _BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        if name:
            (tmp_path / name).write_text(local(body), encoding="utf-8")
            files.append(name)
        elif lang == "sh":
            shell += [local(ln) for ln in body.splitlines() if not ln.startswith("pip ")]
    assert files == ["shop_service.py", "shop.yaml", "cases.jsonl"]
    start, command = shell  # start the service; the one agenteval command
    words = shlex.split(start.removesuffix("&"))
    env_var, _, value = words[0].partition("=")
    assert env_var == "OTEL_EXPORTER_OTLP_ENDPOINT" and words[1] == "python"
    service = subprocess.Popen(
        [sys.executable, *words[2:]],
        cwd=tmp_path,
        env={**os.environ, env_var: value},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(int(ports["8000"]), service)
        argv = shlex.split(command)
        assert argv[0] == "agenteval"
        proc = cli(*argv[1:], cwd=tmp_path)
    finally:
        service.terminate()
        _, err = service.communicate(timeout=10)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Traceback" not in err, err
    out = tmp_path / argv[argv.index("--out") + 1]
    trials = {t["case_id"]: t for t in map(json.loads, (out / "trials.jsonl").open())}
    for name, cid, orders in (("ada", 7, 3), ("grace", 8, 5)):
        t = trials[name]
        calls = t["tool_calls"]
        assert [c["name"] for c in calls] == ["find_customer", "count_orders"]
        assert calls[0]["arguments"] == {"name": name.capitalize()}
        assert calls[0]["result"] == {"id": cid, "name": name.capitalize()}
        assert calls[1]["arguments"] == {"customer_id": cid} and calls[1]["result"] == orders
        assert all(c["error"] is None and c["started_at"] for c in calls)
        assert t["usage"] == [{"model": "shop-model", "input_tokens": 240, "output_tokens": 24}]
        assert t["metadata"]["trajectory_source"] == "otlp"
        assert t["metadata"]["otlp_spans"] == 6
        for scorer in ("tool_selection", "trajectory_order", "tool_execution", "tool_faithfulness"):
            assert t["scores"][scorer]["value"] == 1.0, (scorer, t["scores"][scorer])
    (call,) = trials["linus"]["tool_calls"]
    assert call["error"] == "LookupError: no customer named Linus" and call["result"] is None
    assert trials["linus"]["scores"]["tool_execution"]["value"] == 0.0
    assert (
        "agenteval: OTLP receiver: 16 spans attributed to trials; dropped 0 of unknown traces"
        " and 0 that arrived after their trial's wait (--otlp-wait 2); 0 requests refused"
    ) in proc.stderr.splitlines()
