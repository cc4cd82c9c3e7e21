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


URL_PASSWORD = "pw-URLPASS7777777777cccccccc"
URL_QUERY_KEY = "qk-QUERYKEY8888888888dddddddd"
JUDGE_URL_KEY = "jq-JUDGEURL3333333333eeeeeeee"
AUTH_KEY = "xa-AUTHKEY2222222222ffffffff"
COOKIE = "ck-COOKIE1111111111gggggggg"
APIM_KEY = "ap-APIMKEY6666666666hhhhhhhh"
URL_KEYS = (URL_PASSWORD, URL_QUERY_KEY, JUDGE_URL_KEY, AUTH_KEY, COOKIE, APIM_KEY)


def test_url_credentials_and_literal_headers_are_never_written(tmp_path: Path) -> None:
    """Credentials in endpoint URLs (user info, ``?api-key=``) and literal values under
    headers with no secret-looking name (``X-Auth-Key``, ``Cookie``,
    ``Ocp-Apim-Subscription-Key``) appear in no file, report or output stream."""
    dataset = write_jsonl(
        tmp_path / "cases.jsonl",
        [
            {"id": "ok", "input": "plain", "expected": "echo: plain"},
            {"id": "bad", "input": "refused [[fault:400]]"},
            {"id": "dead", "input": "always [[fault:503]]"},
        ],
    )
    outputs: list[str] = []
    with ThreadedFake(FakeConfig(retry_after_s=0.01)) as srv, ObeyingJudge([]) as judge:
        host = srv.base_url.split("://", 1)[1]
        endpoint = f"http://agent:{URL_PASSWORD}@{host}?api-key={URL_QUERY_KEY}&api-version=1"
        judge_host = judge.base_url.split("://", 1)[1]
        judge_endpoint = f"http://{judge_host}?key={JUDGE_URL_KEY}"
        config = tmp_path / "agent.yaml"
        config.write_text(
            f"url: http://svc:{URL_PASSWORD}@{host}/chat/completions?code={URL_QUERY_KEY}\n"
            "headers:\n"
            f"  X-Auth-Key: {AUTH_KEY}\n"
            f"  Cookie: session={COOKIE}\n"
            f"  Ocp-Apim-Subscription-Key: {APIM_KEY}\n"
            "  Content-Type: application/json\n"
            "body:\n"
            '  model: m\n  messages: [{role: user, content: "{input}"}]\n'
            "response:\n  output: choices.0.message.content\n",
            encoding="utf-8",
        )
        judging = ["--judge-endpoint", judge_endpoint, "--judge-model", "j"]
        judging += ["--rubric", "correctness", "--judge-cache", str(tmp_path / "cache")]
        runs = {
            "openai": ["--endpoint", endpoint, "--model", "m"],
            "http": ["--http-config", str(config)],
            # nothing listens there: every trial fails with a connection error message
            "down": ["--endpoint", f"http://a:{URL_PASSWORD}@127.0.0.1:9/v1?token={URL_QUERY_KEY}"],
        }
        runs["down"] += ["--model", "m"]
        for name, agent in runs.items():
            p = run_cli(
                "run",
                dataset,
                *agent,
                "--out",
                tmp_path / name,
                "--max-retries",
                "1",
                "--retry-base",
                "0.001",
                *judging,
            )
            assert p.returncode == (4 if name == "down" else 0), p.stderr  # 4: no answer
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
            )
            assert p.returncode == 0, p.stderr
            outputs += [p.stdout, p.stderr]
        # an MCP server that cannot be reached: its URL is in the error message
        mcp_url = f"http://u:{URL_PASSWORD}@127.0.0.1:9/mcp?token={URL_QUERY_KEY}"
        p = run_cli(
            "run",
            dataset,
            "--agent",
            "tool-loop",
            "--endpoint",
            endpoint,
            "--model",
            "m",
            "--mcp-url",
            mcp_url,
            "--out",
            tmp_path / "mcp",
        )
        assert p.returncode == 2 and "MCP server" in p.stderr, p.stderr
        assert "Unclosed" not in p.stderr, p.stderr  # nothing left open either
        outputs += [p.stdout, p.stderr]
        # an argument error that quotes the URL back
        p = run_cli("run", dataset, "--max-retries", endpoint, "--endpoint", endpoint)
        assert p.returncode == 2 and "[REDACTED]" in p.stderr, p.stderr
        outputs += [p.stdout, p.stderr]
        served = srv.counts()
    assert served["400"] and served["503"]
    assert len(judge.verdicts) > 0
    run_json = (tmp_path / "http" / "run.json").read_text(encoding="utf-8")
    assert "X-Auth-Key" in run_json and "application/json" in run_json  # names kept
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "agent.yaml"]
    leaks = [
        (str(f.relative_to(tmp_path)), k) for f in files for k in URL_KEYS if k in f.read_text()
    ]
    leaks += [("output", k) for o in outputs for k in URL_KEYS if k in o]
    assert not leaks, leaks
    record_figures(
        "secrets_urls_headers",
        {"files_checked": len(files), "streams_checked": len(outputs), "secrets": len(URL_KEYS)},
    )
