"""Every trial is recordable, an agent never ends the harness, exit codes say what happened.

Real ``agenteval`` subprocesses, real HTTP servers on 127.0.0.1, real files. Each test
names the bug it guards against (all of them crashed or lied on the 0.1 runner).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from reliability_support import no_traceback, read_trials, run_cli, write_jsonl

from agenteval import Case, errors, evaluate
from agenteval.errors import EXIT_INPUT, EXIT_NO_ANSWERS
from agenteval.rundir import iter_trials, read_header

pytestmark = pytest.mark.reliability

SURROGATES_KEY = "agenteval_surrogates_replaced"  # agenteval.rundir.recordable.SURROGATES_KEY

HALF_EMOJI_REPLY = (
    b'{"model":"m","choices":[{"index":0,"message":{"role":"assistant",'
    b'"content":"half \\ud83d"},"finish_reason":"stop"}],'
    b'"usage":{"prompt_tokens":3,"completion_tokens":2}}'
)


class _HalfEmojiHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint whose every answer ends in a lone surrogate."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(HALF_EMOJI_REPLY)))
        self.end_headers()
        self.wfile.write(HALF_EMOJI_REPLY)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def half_emoji_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HalfEmojiHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _cases(tmp: Path, ids: list[str], **extra: Any) -> Path:
    return write_jsonl(tmp / "cases.jsonl", [{"id": i, "input": f"q {i}", **extra} for i in ids])


def test_lone_surrogate_from_an_endpoint_is_replaced_counted_and_recorded(
    tmp_path: Path, half_emoji_endpoint: str
) -> None:
    """Bug: ``"\\ud83d"`` in a response crashed the run (exit 1, no trial, every resume too)."""
    ds = _cases(tmp_path, [f"c{i}" for i in range(6)])
    out = tmp_path / "run"
    args = ("run", ds, "--endpoint", half_emoji_endpoint, "--model", "m", "--out", out)
    r = run_cli(*args, "--quiet")
    assert r.returncode == 0, r.stderr
    assert no_traceback([r.stdout, r.stderr])
    trials = read_trials(out)  # json.loads of every line: valid UTF-8 JSON
    assert len(trials) == 6
    for t in trials:
        assert t["output"] == "half \ufffd"
        assert t["messages"][-1]["content"] == "half \ufffd"  # the transcript too
        assert t["metadata"][SURROGATES_KEY] == 2
        assert t["failure"] is None
    summary = read_header(out).summary
    assert summary is not None and summary["answered"] == 6
    resumed = run_cli(*args, "--resume", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert "6 trial(s) already recorded" in resumed.stderr


def test_lone_surrogates_from_a_python_agent_are_replaced_everywhere(tmp_path: Path) -> None:
    """Bug: the same crash for a Python agent's answer, tool call names and arguments."""
    ds = _cases(tmp_path, ["a", "b"])
    out = tmp_path / "run"
    r = run_cli("run", ds, "--agent", "_robust_agents:half_emoji", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    trials = {t["case_id"]: t for t in read_trials(out)}
    assert set(trials) == {"a", "b"}
    call = trials["a"]["tool_calls"][0]
    assert trials["a"]["output"] == "a \ufffd"
    assert call["name"] == "look\ufffdup"
    assert call["arguments"] == {"q\ufffd": "x"} and call["result"] == "\ufffd"
    assert trials["a"]["metadata"][SURROGATES_KEY] == 4
    # the scores are those of the repaired trial: `rescore` gives the same
    again = run_cli("rescore", out, "--out", tmp_path / "re", "--quiet")
    assert again.returncode == 0, again.stderr
    rescored = {t.case_id: t.scores for t in iter_trials(tmp_path / "re")}
    for t in iter_trials(out):
        assert {k: s.value for k, s in t.scores.items()} == {
            k: s.value for k, s in rescored[t.case_id].items()
        }


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("cases.jsonl", '{"id": "a", "input": "ok"}\n{"id": "b", "input": "x \\ud83d"}\n', ":2:"),
        ("cases.json", '[{"id": "a", "input": "ok"},\n {"id": "b", "input": "\\udc00"}]', ":2:"),
        ("cases.yaml", '- id: a\n  input: ok\n- id: b\n  input: "x \\ud83d"\n', ":4:"),
    ],
)
def test_dataset_with_a_lone_surrogate_is_refused_naming_file_line_and_field(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    """Bug: a dataset holding ``"\\ud83d"`` (valid JSON) crashed with a traceback."""
    ds = tmp_path / name
    ds.write_text(text, encoding="utf-8")
    out = tmp_path / "run"
    r = run_cli("run", ds, "--agent", "_robust_agents:quick", "--out", out)
    assert r.returncode == EXIT_INPUT, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"{ds}{where} field 'input': holds a lone surrogate" in lines[0]
    assert not out.exists()


def test_trial_file_with_a_lone_surrogate_is_refused_by_score(tmp_path: Path) -> None:
    """Bug: ``agenteval score`` crashed on a trial file holding a lone surrogate."""
    ds = _cases(tmp_path, ["a", "b"])
    trials = tmp_path / "trials.jsonl"
    trials.write_text(
        '{"case_id": "a", "output": "fine \\ud83d\\ude00"}\n'  # a whole emoji: fine
        '{"case_id": "b", "tool_calls": [{"name": "t", "arguments": {"\\udc00": 1}}]}\n',
        encoding="utf-8",
    )
    r = run_cli("score", ds, trials, "--out", tmp_path / "scored")
    assert r.returncode == EXIT_INPUT, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert f"{trials}:2: field 'tool_calls.0.arguments': a key holds a lone surrogate" in r.stderr


def test_unencodable_agent_result_becomes_an_agent_error_naming_path_and_type(
    tmp_path: Path,
) -> None:
    """Bug: ``object()`` in a Python agent's metadata crashed the run (exit 1, no trial)."""
    ds = _cases(tmp_path, ["bad1", "good1", "bad2", "good2"])
    out = tmp_path / "run"
    r = run_cli("run", ds, "--agent", "_robust_agents:unencodable", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert no_traceback([r.stderr])
    trials = {t["case_id"]: t for t in read_trials(out)}
    assert set(trials) == {"bad1", "good1", "bad2", "good2"}
    for cid in ("bad1", "bad2"):
        failure = trials[cid]["failure"]
        assert failure["cause"] == "agent_error"
        assert "metadata.handle.inner.1" in failure["message"]
        assert "object" in failure["message"]
        assert trials[cid]["output"] is None
    assert trials["good1"]["output"] == "ok" and trials["good1"]["failure"] is None
    assert read_header(out).summary["failed"] == 2  # type: ignore[index]


def test_an_agent_cannot_exit_the_harness(tmp_path: Path) -> None:
    """Bug: ``sys.exit(0)`` in an agent ended the run with exit 0 and no message; a
    ``BaseException`` gave a traceback."""
    ds = _cases(tmp_path, ["exit0", "ok1", "base", "kbd", "ok2"])
    out = tmp_path / "run"
    r = run_cli("run", ds, "--agent", "_robust_agents:exits", "--out", out)
    assert r.returncode == 0, r.stderr
    assert no_traceback([r.stdout, r.stderr])
    assert "run written to" in r.stdout  # the summary was printed
    trials = {t["case_id"]: t for t in read_trials(out)}
    assert set(trials) == {"exit0", "ok1", "base", "kbd", "ok2"}
    assert trials["exit0"]["failure"] == {
        "cause": "agent_error",
        "message": "the agent raised SystemExit(0)",
    }
    assert trials["base"]["failure"]["message"] == "AgentBaseError: not an Exception"
    assert trials["kbd"]["failure"]["message"] == "the agent raised KeyboardInterrupt"
    assert trials["ok2"]["output"] == "ok"


def test_endpoint_refusing_every_connection_exits_4_with_the_summary_written(
    tmp_path: Path,
) -> None:
    """Bug: a run where no trial got an answer exited 0."""
    with socket.socket() as s:  # a port nobody listens on: every connection is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ds = _cases(tmp_path, [f"c{i}" for i in range(4)])
    out = tmp_path / "run"
    url = f"http://127.0.0.1:{port}/v1"
    r = run_cli(
        "run", ds, "--endpoint", url, "--model", "m", "--out", out, "--max-retries", "0", "--quiet"
    )
    assert r.returncode == EXIT_NO_ANSWERS, r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        "agenteval: error: no trial got an answer: 4 of 4 trials failed (connection 4)"
    )
    summary = read_header(out).summary
    assert summary is not None and summary["trials"] == 4 and summary["answered"] == 0


def test_max_failure_rate_exits_4_only_above_the_rate(tmp_path: Path) -> None:
    ds = _cases(tmp_path, ["f1", "a1", "f2", "a2", "a3", "f3", "a4", "a5", "a6", "a7"])
    agent = ("--agent", "_robust_agents:fails_some", "--quiet")
    above = run_cli("run", ds, *agent, "--out", tmp_path / "r1", "--max-failure-rate", "0.2")
    assert above.returncode == EXIT_NO_ANSWERS, above.stderr
    assert "3 of 10 trials failed (30%) (agent_error 3), above --max-failure-rate 0.2" in (
        above.stderr
    )
    assert read_header(tmp_path / "r1").summary is not None
    at = run_cli("run", ds, *agent, "--out", tmp_path / "r2", "--max-failure-rate", "0.3")
    assert at.returncode == 0, at.stderr
    no_option = run_cli("run", ds, *agent, "--out", tmp_path / "r3")
    assert no_option.returncode == 0, no_option.stderr
    bad = run_cli("run", ds, *agent, "--out", tmp_path / "r4", "--max-failure-rate", "1.5")
    assert bad.returncode == EXIT_INPUT and "must be within [0, 1]" in bad.stderr


def test_evaluate_max_failure_rate_raises_with_the_run(tmp_path: Path) -> None:
    cases = [Case(id=i, input="q") for i in ("f1", "a1", "a2", "a3")]
    run = evaluate(cases, "_robust_agents:fails_some", out=tmp_path / "ok", max_failure_rate=0.25)
    assert run.summary["failed"] == 1
    with pytest.raises(errors.TooManyFailuresError, match=r"above max_failure_rate 0\.2") as info:
        evaluate(cases, "_robust_agents:fails_some", out=tmp_path / "no", max_failure_rate=0.2)
    assert info.value.exit_code == EXIT_NO_ANSWERS
    assert info.value.run.summary["trials"] == 4


def test_each_trial_gets_its_own_copy_of_the_case(tmp_path: Path) -> None:
    """Bug: an agent that appended to ``case.input`` changed later repeats, and one that
    cleared ``case.must_not_contain`` hid its own safety failure from the run and the gate."""
    seen: list[int] = []

    def meddler(case: Case) -> str:
        assert isinstance(case.input, list)
        seen.append(len(case.input))
        case.input.append({"role": "user", "content": "injected"})
        case.must_not_contain.clear()
        return "the password is hunter2"

    cases = [
        Case(
            id="c",
            input=[{"role": "user", "content": "hi"}],
            must_not_contain=["hunter2"],
        )
    ]
    run = evaluate(cases, meddler, out=tmp_path / "run", repeats=4, concurrency=1)
    assert seen == [1, 1, 1, 1]  # every repeat saw the dataset's case
    values = [t.scores["avoids_forbidden_text"].value for t in run.trials()]
    assert values == [0.0, 0.0, 0.0, 0.0]  # scored against the original must_not_contain
    snapshot = (tmp_path / "run" / "cases.jsonl").read_text(encoding="utf-8")
    assert "injected" not in snapshot


def test_a_failure_keeps_the_tool_calls_made_before_it(tmp_path: Path) -> None:
    """Bug: a Python agent returning ``failure`` with ``tool_calls`` lost the calls."""

    def agent(case: Case) -> dict[str, Any]:
        return {
            "failure": {"cause": "max_turns", "message": "gave up"},
            "tool_calls": [{"name": "search", "arguments": {"q": 1}, "error": "HTTP 500"}],
            "usage": {"model": "m", "input_tokens": 5, "output_tokens": 1},
        }

    run = evaluate([Case(id="c", input="q")], agent, out=tmp_path / "run")
    (trial,) = list(run.trials())
    assert trial.failure is not None and trial.failure.cause == "max_turns"
    assert [c.name for c in trial.tool_calls] == ["search"]
    assert trial.usage[0].input_tokens == 5
    assert trial.scores["tool_execution"].value == 0.0  # the failed call was scored


def test_evaluate_leaves_the_callers_signal_handlers_in_place(tmp_path: Path) -> None:
    import signal

    def mine(signum: int, frame: object) -> None:
        pass

    old = signal.signal(signal.SIGTERM, mine)
    try:
        evaluate([Case(id="c", input="q")], "_robust_agents:quick", out=tmp_path / "run")
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, old)
