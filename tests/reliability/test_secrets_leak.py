"""Secrets: API keys in the environment and in config never reach a file, log or message.

Runs through the OpenAI-compatible adapter (key from the environment), the HTTP/JSON
adapter (a key in ``${VAR}`` headers and a literal key in the config) and the judge (key
from the environment), against endpoints that rate-limit, fail with 5xx and 4xx and reset
connections, so that retries and failures are recorded; then every report format. No
written byte, stdout or stderr may contain a key, its base64 form, or an Authorization
header
(its name may appear with the value ``[REDACTED]``, as in the agent description).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from _obeying_judge import ObeyingJudge
from reliability_support import ThreadedFake, record_figures, run_cli, write_jsonl

from agenteval.testing.fake_openai import FakeConfig

pytestmark = pytest.mark.reliability

ENV_KEY = "sk-live-ENVKEY0123456789abcdefABCDEF"
HTTP_KEY = "tok-HTTPKEY9876543210zyxwvuZYXWVU"
LITERAL_KEY = "lit-CONFIGKEY5555555555aaaaaaaa"
JUDGE_KEY = "sk-judge-JUDGEKEY4444444444bbbbbbbb"
KEYS = (ENV_KEY, HTTP_KEY, LITERAL_KEY, JUDGE_KEY)


def _forbidden() -> list[bytes]:
    # the header's name may be listed with its value redacted; never with a value
    out: list[bytes] = [b"Authorization: ", b"authorization: ", b"Bearer", b"bearer"]
    for k in KEYS:
        out += [k.encode(), base64.b64encode(k.encode()), k[8:24].encode()]
    return out


def test_no_secret_anywhere(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "input": "plain", "expected": "echo: plain"},
        {"id": "rl", "input": "slow down [[fault:429:2]]"},
        {"id": "s5", "input": "server [[fault:500:1]]"},
        {"id": "rs", "input": "reset [[fault:reset_before_headers:1]]"},
        {"id": "bad", "input": "refused [[fault:400]]"},
        {"id": "dead", "input": "always [[fault:503]]"},
        {"id": "nojs", "input": "garbage [[fault:not_json]]"},
    ]
    dataset = write_jsonl(tmp_path / "cases.jsonl", rows)
    env = {"OPENAI_API_KEY": ENV_KEY, "SERVICE_TOKEN": HTTP_KEY, "JUDGE_KEY": JUDGE_KEY}
    outputs: list[str] = []
    with ThreadedFake(FakeConfig(retry_after_s=0.01)) as srv, ObeyingJudge([]) as judge:
        config = tmp_path / "agent.yaml"
        config.write_text(
            f"url: {srv.base_url}/chat/completions\n"
            "headers:\n"
            '  Authorization: "Bearer ${SERVICE_TOKEN}"\n'
            f"  X-Api-Key: {LITERAL_KEY}\n"
            "body:\n"
            '  model: m\n  messages: [{role: user, content: "{input}"}]\n'
            "response:\n  output: choices.0.message.content\n",
            encoding="utf-8",
        )
        common = [
            "--max-retries",
            "2",
            "--retry-base",
            "0.001",
            "--judge-endpoint",
            judge.base_url,
            "--judge-model",
            "j",
            "--judge-api-key-env",
            "JUDGE_KEY",
            "--rubric",
            "correctness",
            "--judge-cache",
            str(tmp_path / "cache"),
        ]
        runs = {
            "openai": ["--endpoint", srv.base_url, "--model", "m"],
            "http": ["--http-config", str(config)],
        }
        for name, agent in runs.items():
            p = run_cli("run", dataset, *agent, "--out", tmp_path / name, *common, env=env)
            assert p.returncode == 0, p.stderr
            outputs += [p.stdout, p.stderr]
            p = run_cli(
                "report",
                tmp_path / name,
                "--html",
                tmp_path / f"{name}.html",
                "--junit",
                tmp_path / f"{name}.xml",
                "--markdown",
                tmp_path / f"{name}.md",
                "--json",
                tmp_path / f"{name}.json",
                env=env,
            )
            assert p.returncode == 0, p.stderr
            outputs += [p.stdout, p.stderr]
        # a failing command with the key around must not print it either
        p = run_cli(
            "run",
            dataset,
            "--endpoint",
            srv.base_url,
            "--model",
            "m",
            "--out",
            tmp_path / "openai",
            env=env,
        )
        assert p.returncode == 2
        outputs += [p.stdout, p.stderr]
        served = srv.counts()
    assert served["429"] and served["500"] and served["400"] and served["503"]
    assert len(judge.verdicts) > 0
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "agent.yaml"]
    leaks = [
        (str(f.relative_to(tmp_path)), bad.decode())
        for f in files
        for bad in _forbidden()
        if bad in f.read_bytes()
    ]
    leaks += [
        ("output", bad.decode()) for o in outputs for bad in _forbidden() if bad.decode() in o
    ]
    assert not leaks, leaks
    record_figures(
        "secrets",
        {
            "files_checked": len(files),
            "streams_checked": len(outputs),
            "keys": len(KEYS),
            "leaks": 0,
        },
    )
