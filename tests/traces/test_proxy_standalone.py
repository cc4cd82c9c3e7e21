"""``agenteval proxy``: standalone recording for an agent run outside agenteval, and
``read_recording`` turning the file into trajectories per label."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("openai")

from openai import OpenAI
from proxy_agents import KEY, chat_loop

from agenteval.errors import InputError
from agenteval.traces.proxy_records import read_recording
from fake_server_util import fake_server_process


@contextmanager
def proxy_process(upstream: str, out: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    p = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "proxy", upstream, "--out", str(out), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield line.split()[-1], p
    finally:
        if p.poll() is None:
            p.kill()
        p.wait(10)


def test_standalone_proxy_records_labelled_calls_without_the_key(tmp_path: Path) -> None:
    out = tmp_path / "calls.jsonl"
    with fake_server_process() as upstream, proxy_process(upstream, out) as (base, p):
        root = base.removesuffix("/v1")
        for label, name in (("ada", "Ada"), ("grace", "Grace")):
            client = OpenAI(base_url=f"{root}/t/{label}/v1", api_key=KEY, max_retries=0)
            text = f'[[call:find_customer {{"name": "{name}"}}]] secret {KEY}'
            assert chat_loop(client, text, stream=label == "grace").startswith("echo: ")
        plain = OpenAI(base_url=base, api_key=KEY, max_retries=0)
        assert [m.id for m in plain.models.list()] == ["fake"]
        p.send_signal(signal.SIGINT)
        assert p.wait(10) == 0
        assert p.stderr is not None
        assert "5 call(s) recorded" in p.stderr.read()
    text = out.read_text(encoding="utf-8")
    assert KEY not in text and "Bearer" not in text
    lines = [json.loads(x) for x in text.splitlines()]
    assert [(x["label"], x["api"]) for x in lines] == [
        ("ada", "chat"),
        ("ada", "chat"),
        ("grace", "chat"),
        ("grace", "chat"),
        ("", "other"),
    ]
    trajectories = read_recording(out)
    assert list(trajectories) == ["ada", "grace", ""]
    for label, name in (("ada", "Ada"), ("grace", "Grace")):
        (call,) = trajectories[label].tool_calls
        assert (call.name, call.arguments) == ("find_customer", {"name": name})
        assert call.result == json.dumps({"id": len(name), "name": name})
        assert trajectories[label].usage[0].model == "gpt-fake"


def test_standalone_proxy_bad_input_and_unwritable_output(tmp_path: Path, cli: object) -> None:
    run = cli  # the conftest fixture: the real CLI in a subprocess
    proc = run("proxy", "ftp://x/v1", "--out", str(tmp_path / "o.jsonl"))  # type: ignore[operator]
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("agenteval: error: ")
    assert "http(s) base URL" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "dir").mkdir()
    proc = run("proxy", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "dir"))  # type: ignore[operator]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "is a directory; give a file path" in proc.stderr


def test_read_recording_names_the_bad_line(tmp_path: Path) -> None:
    f = tmp_path / "calls.jsonl"
    f.write_text('{"label": "a", "api": "chat", "path": "/chat/completions"}\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_recording(f)
    assert (e.value.file, e.value.line) == (str(f), 1)
