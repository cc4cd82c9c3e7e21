"""An HTTP/JSON agent gets the conversation id and turn in its body template."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conv_support import by_case, run, write_cases


class _Echo(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answer = f"{body['cid']}|{body['turn']}|{len(body['input'])}"
        data = json.dumps({"answer": answer}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_url() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/chat"
    finally:
        srv.shutdown()
        srv.server_close()


def test_http_agent_receives_conversation_id_and_turn(tmp_path: Path, echo_url: str) -> None:
    config = tmp_path / "agent.json"
    config.write_text(
        json.dumps(
            {
                "url": echo_url,
                "body": {"input": "{input}", "cid": "{conversation_id}", "turn": "{turn}"},
                "response": {"output": "answer"},
            }
        )
    )
    cases = write_cases(tmp_path / "c.jsonl", [{"id": "h", "turns": ["a", "b", "c"]}])
    out = tmp_path / "run"
    r = run("run", cases, "--http-config", config, "--repeats", "2", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    ids = set()
    for k in (0, 1):
        conv = by_case(out)[("h", k)]["metadata"]["conversation"]
        answers = [t["output"].split("|") for t in conv["turns"]]
        assert [(a[1], a[2]) for a in answers] == [("0", "1"), ("1", "3"), ("2", "5")]
        assert {a[0] for a in answers} == {conv["id"]}  # one id for the whole conversation
        assert conv["id"].startswith(f"h/{k}/")
        ids.add(conv["id"])
    assert len(ids) == 2  # a new id for every trial
