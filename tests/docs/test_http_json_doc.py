"""docs/agents/http-json.md runs as written: its aiohttp service is started (on a free port
instead of 8000), its command run, the trial shown is the trial recorded, and each bad
config gives the error line shown. AGENTEVAL_WRITE_DOCS=1 rewrites the error lines."""

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

from _blocks import ROOT, parse

PAGE = ROOT / "docs" / "agents" / "http-json.md"
_SAVE_AS = re.compile(r"Save as `(\S+)`:\n\n```\w+\n(.*?)```", re.S)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the service did not start")


def _files(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _SAVE_AS.finditer(text)}


def _blocks() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for b in parse(PAGE):
        out.setdefault(b.lang, []).append(b.text)
    return out


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SUPPORT_TOKEN"}
    env.update({"PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "120", "CI": "1"})
    return {**env, **(extra or {})}


_EACH = """
import contextlib, io, json, sys
from agenteval.cli import main
out = []
for name in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(["run", "cases.jsonl", "--http-config", name, "--out", "runs/x"])
        except SystemExit as e:
            code = e.code
    out.append({"code": code, "stderr": err.getvalue()})
print(json.dumps(out))
"""


def test_the_page_runs_and_records_what_it_shows(tmp_path: Path, cli: Any) -> None:
    text = PAGE.read_text(encoding="utf-8")
    port = str(_free_port())
    files = _files(text)
    assert list(files) == ["support_service.py", "support.yaml", "cases.jsonl"]
    for name, body in files.items():
        (tmp_path / name).write_text(body.replace("8000", port), encoding="utf-8")
    start, command = _blocks()["sh"][1].strip().splitlines()
    assert start == "python support_service.py 8000 &"
    service = subprocess.Popen(
        [sys.executable, "support_service.py", port], cwd=tmp_path, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        _wait_listening(int(port), service)
        words = shlex.split(command)
        var, _, value = words[0].partition("=")
        assert var == "SUPPORT_TOKEN" and words[1] == "agenteval"
        proc = cli(*words[2:], cwd=tmp_path, env=_env({var: value}))
    finally:
        service.terminate()
        _, err = service.communicate(timeout=10)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Traceback" not in err, err
    out = tmp_path / "runs" / "support"
    trials = [json.loads(x) for x in (out / "trials.jsonl").read_text().splitlines()]
    shown = json.loads(next(b for b in _blocks()["json"] if '"case_id": "shipped"' in b))
    first = next(t for t in trials if t["case_id"] == "shipped")
    assert {k: first[k] for k in shown} == shown
    assert first["scores"]["exact_match"]["passed"] is True
    unknown = next(t for t in trials if t["case_id"] == "unknown")
    (call,) = unknown["tool_calls"]
    assert (call["error"], call["result"]) == ("no order O-9", None) and "no order O-9" in text
    assert unknown["scores"]["tool_execution"]["value"] == 0.0
    header = json.loads((out / "run.json").read_text())
    assert header["agent"]["headers"] == {"Authorization": "[REDACTED]"}
    assert '"headers": {"Authorization": "[REDACTED]"}' in text
    for p in out.rglob("*"):
        assert "s3cret-token" not in p.read_text(errors="replace"), p


def test_a_wrong_token_fails_each_trial_as_the_page_says(tmp_path: Path, cli: Any) -> None:
    port = str(_free_port())
    for name, body in _files(PAGE.read_text(encoding="utf-8")).items():
        (tmp_path / name).write_text(body.replace("8000", port), encoding="utf-8")
    service = subprocess.Popen([sys.executable, "support_service.py", port], cwd=tmp_path)
    try:
        _wait_listening(int(port), service)  # type: ignore[arg-type]
        proc = cli("run", "cases.jsonl", "--http-config", "support.yaml", "--out", "r",
                   "--quiet", cwd=tmp_path, env=_env({"SUPPORT_TOKEN": "wrong"}))  # fmt: skip
    finally:
        service.terminate()
        service.wait(10)
    assert proc.returncode == 4, proc.stderr
    for line in (tmp_path / "r" / "trials.jsonl").read_text().splitlines():
        failure = json.loads(line)["failure"]
        assert failure == {"cause": "http_error", "message": 'HTTP 401: {"error": "unauthorized"}'}
    assert 'HTTP 401: {"error": "unauthorized"}' in PAGE.read_text(encoding="utf-8")


def test_each_bad_config_gives_the_error_shown(tmp_path: Path, cli: Any) -> None:
    text = PAGE.read_text(encoding="utf-8")
    bad = next(b for b in _blocks()["yaml"] if b.startswith("# bad-key.yaml"))
    shown = next(b for b in _blocks()["text"] if b.startswith("agenteval: error: bad-key"))
    (tmp_path / "cases.jsonl").write_text(_files(text)["cases.jsonl"], encoding="utf-8")
    names = []
    for doc in bad.split("---\n"):
        names.append(doc.splitlines()[0].removeprefix("# "))
        (tmp_path / names[-1]).write_text(doc, encoding="utf-8")
    # one interpreter for all six (startup is most of the cost): the real CLI entry point
    proc = subprocess.run(
        [sys.executable, "-c", _EACH, *names], cwd=tmp_path, env=_env(), capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    got = []
    for name, result in zip(names, json.loads(proc.stdout), strict=True):
        assert result["code"] == 2, (name, result)
        got.append(result["stderr"].strip())
    assert not (tmp_path / "runs").exists()
    printed = "\n".join(got) + "\n"
    if os.environ.get("AGENTEVAL_WRITE_DOCS") == "1":
        PAGE.write_text(text.replace(shown, printed), encoding="utf-8")
    assert printed == shown, "docs/agents/http-json.md is stale: AGENTEVAL_WRITE_DOCS=1"
