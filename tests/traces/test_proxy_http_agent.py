"""An agent behind HTTP gets its trial's proxy URL as ``{model_base_url}`` in the body."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from openai import OpenAI
from proxy_agents import KEY, chat_loop

from fake_server_util import fake_server_process


class _Agent(BaseHTTPRequestHandler):
    """POST {"question", "llm"} -> {"answer"}: a tool loop whose LLM client uses ``llm``."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        client = OpenAI(base_url=body["llm"], api_key=KEY, max_retries=0)
        data = json.dumps({"answer": chat_loop(client, body["question"], stream=False)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Agent)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/ask"
    finally:
        server.shutdown()
        server.server_close()


def test_http_json_agent_through_the_proxy(tmp_path: Path, cli: Any, service: str) -> None:
    config = {
        "url": service,
        "body": {"question": "{input}", "llm": "{model_base_url}"},
        "response": {"output": "answer"},
    }
    (tmp_path / "agent.json").write_text(json.dumps(config), encoding="utf-8")
    cases = []
    for name in ("Ada", "Grace", "Alan"):
        script = f'[[call:find_customer {{"name": "{name}"}}]]'
        script += f' [[call:count_orders {{"customer_id": {len(name)}}}]]'
        cases.append(
            {
                "id": name,
                "input": f"Orders of {name}? {script}",
                "expected_tools": ["find_customer", "count_orders"],
                "expected_trajectory": ["find_customer", "count_orders"],
            }
        )
    lines = "\n".join(json.dumps(c) for c in cases) + "\n"
    (tmp_path / "cases.jsonl").write_text(lines, encoding="utf-8")
    with fake_server_process() as upstream:
        proc = cli(
            "run", "cases.jsonl", "--http-config", "agent.json", "--capture-proxy", upstream,
            "--out", "run", "--quiet", cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    for line in (tmp_path / "run" / "trials.jsonl").read_text().splitlines():
        t = json.loads(line)
        n = len(t["case_id"])
        assert t["output"] == f"echo: {10 * n}"
        assert [(c["name"], c["arguments"], c["result"]) for c in t["tool_calls"]] == [
            ("find_customer", {"name": t["case_id"]}, json.dumps({"id": n, "name": t["case_id"]})),
            ("count_orders", {"customer_id": n}, str(10 * n)),
        ]
        assert t["metadata"]["trajectory_source"] == "proxy"
        assert t["usage"][0]["model"] == "gpt-fake"
        scores = {k: v["value"] for k, v in t["scores"].items()}
        assert scores["tool_selection"] == scores["trajectory_order"] == 1.0
        assert scores["tool_execution"] == scores["tool_faithfulness"] == 1.0


def test_model_base_url_in_the_body_needs_the_proxy(tmp_path: Path, cli: Any) -> None:
    config = {"url": "http://127.0.0.1:9/ask", "body": {"llm": "{model_base_url}"}}
    config["response"] = {"output": "answer"}
    (tmp_path / "agent.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text('{"id": "1", "input": "q"}\n', encoding="utf-8")
    proc = cli("run", "cases.jsonl", "--http-config", "agent.json", "--out", "r", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "agenteval: error: agent.json: field 'body': {model_base_url} needs --capture-proxy"
        " UPSTREAM_BASE_URL"
    ]
