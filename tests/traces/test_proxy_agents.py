"""The recording proxy end to end: real agents on the official ``openai`` client, the fake
OpenAI server (another process) as upstream, trajectories recorded and scored."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

import proxy_agents
from proxy_agents import KEY, chat_agent, responses_agent

from agenteval import evaluate
from agenteval.agents.python import PythonAgent
from agenteval.cases.case import Case
from fake_server_util import fake_server_process

HERE = Path(__file__).resolve().parent
SCORERS = ("tool_selection", "trajectory_order", "tool_execution", "tool_faithfulness")


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with fake_server_process() as url:
        yield url


def case(name: str, **extra: Any) -> dict[str, Any]:
    """Look the customer up, count the orders: answer ``echo: <10 * len(name)>``."""
    script = f"[[call:find_customer {json.dumps({'name': name})}]]"
    script += f" [[call:count_orders {json.dumps({'customer_id': len(name)})}]]"
    return {
        "id": name,
        "input": f"Orders of {name}? {script}",
        "expected": f"echo: {10 * len(name)}",
        "expected_tools": ["find_customer", "count_orders"],
        "expected_trajectory": ["find_customer", "count_orders"],
        **extra,
    }


CRASH = {
    "id": "crash",
    "input": 'Orders? [[call:find_customer {"name": "crash"}]]',
    "expected_tools": ["find_customer"],
}


def check_two_steps(rec: Any, name: str, out_tokens: int = 2) -> None:
    assert rec.failure is None, rec.failure
    assert rec.output == f"echo: {10 * len(name)}"
    assert [(c.id, c.name, c.arguments, c.result, c.error) for c in rec.tool_calls] == [
        (
            "call_1",
            "find_customer",
            {"name": name},
            json.dumps({"id": len(name), "name": name}),
            None,
        ),
        ("call_2", "count_orders", {"customer_id": len(name)}, str(10 * len(name)), None),
    ]
    assert all(c.started_at is not None and c.duration_s is not None for c in rec.tool_calls)
    assert rec.metadata["trajectory_source"] == "proxy"
    assert [m["tool_calls"] for m in rec.metadata["model_calls"]] == [
        ["find_customer"],
        ["count_orders"],
        [],
    ]
    (usage,) = rec.usage
    # the fake counts words, 2 for "echo: N"; a call is 0 (chat) or 1 (Responses API)
    assert (usage.model, usage.output_tokens) == ("gpt-fake", out_tokens)
    assert usage.input_tokens > 0
    assert rec.latency.active_s is not None and 0 < rec.latency.active_s < rec.latency.total_s
    assert {d["name"] for d in rec.tools or []} == {"find_customer", "count_orders"}
    for scorer in (*SCORERS, "tool_arguments_valid"):
        assert rec.scores[scorer].value == 1.0, (name, scorer, rec.scores[scorer])


def check_crash(rec: Any) -> None:
    (call,) = rec.tool_calls
    assert (call.name, call.result) == ("find_customer", None)
    assert call.error == "Error: ValueError: customer database is down"
    assert rec.scores["tool_execution"].value == 0.0
    assert rec.scores["tool_selection"].value == 1.0


NAMES = ["Ada", "Grace", "Alan", "Barbara", "Edsger", "Frances", "Hedy", "Ken"]


def test_chat_completions_in_process_streaming_and_not_concurrent(
    tmp_path: Path, upstream: str
) -> None:
    """16 trials at --concurrency 8, half streaming: each trial has its own calls only."""
    cases = [case(n, stream=False) for n in NAMES] + [case(n + "s", stream=True) for n in NAMES]
    run = evaluate(
        [*cases, CRASH],
        PythonAgent(chat_agent, capture_proxy=upstream),
        out=tmp_path / "run",
        concurrency=8,
    )
    trials = {t.case_id: t for t in run.trials()}
    assert len(trials) == 17
    for c in cases:
        check_two_steps(trials[c["id"]], c["id"])
        streamed = [m["stream"] for m in trials[c["id"]].metadata["model_calls"]]
        assert streamed == [c["stream"]] * 3
    check_crash(trials["crash"])
    assert KEY not in "".join(p.read_text() for p in (tmp_path / "run").iterdir() if p.is_file())


def test_responses_api_streaming_and_not(tmp_path: Path, upstream: str) -> None:
    cases = [case("Ada"), case("Grace", stream=True), {**CRASH, "stream": True}]
    run = evaluate(cases, responses_agent, out=tmp_path / "run", capture_proxy=upstream)
    trials = {t.case_id: t for t in run.trials()}
    check_two_steps(trials["Ada"], "Ada", out_tokens=4)
    check_two_steps(trials["Grace"], "Grace", out_tokens=4)
    check_crash(trials["crash"])
    assert {m["api"] for m in trials["Grace"].metadata["model_calls"]} == {"responses"}


_WRAPPER = """
import os, subprocess, sys

def answer(case, model_base_url):
    env = {**os.environ, "OPENAI_BASE_URL": model_base_url, "OPENAI_API_KEY": KEY}
    args = [sys.executable, AGENT, case.input] + (["stream"] if case.metadata.get("stream") else [])
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return done.stdout.strip()
"""


def wrapper(tmp_path: Path) -> dict[str, str]:
    """A Python agent that runs the real agent in a child process, one per trial, with
    OPENAI_BASE_URL set to the trial's proxy URL."""
    head = f"KEY = {KEY!r}\nAGENT = {str(HERE / 'proxy_agents.py')!r}\n"
    (tmp_path / "wrapper.py").write_text(head + _WRAPPER, encoding="utf-8")
    path = os.pathsep.join([str(tmp_path), str(HERE), os.environ.get("PYTHONPATH", "")])
    return {"PYTHONPATH": path}


def test_agent_in_another_process_through_the_cli(tmp_path: Path, cli: Any, upstream: str) -> None:
    cases = [case("Ada"), case("Grace", stream=True)]  # one child process per trial
    lines = [json.dumps(c) for c in [*cases, CRASH]]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = cli(
        "run", "cases.jsonl", "--agent", "wrapper:answer", "--capture-proxy", upstream,
        "--concurrency", "8", "--out", "run", "--quiet",
        cwd=tmp_path, env=wrapper(tmp_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    trials = {}
    for line in (tmp_path / "run" / "trials.jsonl").read_text().splitlines():
        t = json.loads(line)
        trials[t["case_id"]] = t
    for c in cases:
        rec = _as_record(trials[c["id"]])
        check_two_steps(rec, c["id"])
    check_crash(_as_record(trials["crash"]))
    header = json.loads((tmp_path / "run" / "run.json").read_text())
    assert header["agent"]["capture_proxy"] == upstream
    for p in (tmp_path / "run").rglob("*"):
        assert not p.is_file() or KEY not in p.read_text(errors="replace"), p


def _as_record(t: dict[str, Any]) -> Any:
    from agenteval.rundir import TrialRecord

    return TrialRecord.model_validate(t)


def test_returned_calls_win_and_calls_before_a_failure_are_kept(
    tmp_path: Path, upstream: str
) -> None:
    def explicit(case: Case, model_base_url: str) -> dict[str, Any]:
        out = chat_agent(case, model_base_url)
        return {"output": out, "tool_calls": [{"name": "mine", "arguments": {}}]}

    def fails(case: Case, model_base_url: str) -> str:
        from openai import OpenAI

        client = OpenAI(base_url=model_base_url, api_key=KEY, max_retries=0)
        r = client.chat.completions.create(
            model="gpt-fake",
            messages=[{"role": "user", "content": str(case.input)}],
            tools=proxy_agents.TOOLS,  # type: ignore[arg-type]
        )
        raise RuntimeError(f"gave up after {r.choices[0].message.tool_calls[0].function.name}")  # type: ignore[index]

    (rec,) = evaluate(
        [case("Ada")], PythonAgent(explicit, capture_proxy=upstream), out=tmp_path / "a"
    ).trials()
    assert [c.name for c in rec.tool_calls] == ["mine"]
    assert "trajectory_source" not in rec.metadata
    (rec,) = evaluate(
        [case("Ada")], PythonAgent(fails, capture_proxy=upstream), out=tmp_path / "b"
    ).trials()
    assert rec.failure is not None and rec.failure.cause == "agent_error"
    assert rec.failure.message == "RuntimeError: gave up after find_customer"
    assert [(c.name, c.arguments, c.result) for c in rec.tool_calls] == [
        ("find_customer", {"name": "Ada"}, None)
    ]
    assert rec.usage[0].model == "gpt-fake"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_upstream_down_fails_the_trial_with_a_clear_cause(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    (rec,) = evaluate(
        [case("Ada")], PythonAgent(chat_agent, capture_proxy=dead), out=tmp_path / "run"
    ).trials()
    assert rec.failure is not None and rec.failure.cause == "connection"
    assert rec.failure.message.startswith(f"model upstream {dead} unreachable: ")
    assert rec.failure.message.endswith("(the agent then raised InternalServerError)")


def test_malformed_upstream_json_passes_through_and_is_recorded_unparsed(
    tmp_path: Path, upstream: str
) -> None:
    import httpx

    def raw(case: Case, model_base_url: str) -> str:
        body = {"model": "gpt-fake", "messages": [{"role": "user", "content": "hi"}]}
        seen = []
        for base in (upstream, model_base_url):  # directly, then through the proxy
            r = httpx.post(
                f"{base}/chat/completions",
                json=body,
                headers={"X-Fault": "not_json", "Authorization": f"Bearer {KEY}"},
            )
            seen.append((r.status_code, r.headers["content-type"], r.content))
        assert seen[0] == seen[1], seen
        return seen[1][2].decode()

    (rec,) = evaluate(
        [{"id": "x", "input": "hi"}], PythonAgent(raw, capture_proxy=upstream), out=tmp_path / "r"
    ).trials()
    assert rec.output == "<html><body>Bad Gateway</body></html>", rec.failure
    (call,) = rec.metadata["model_calls"]
    assert call["unparsed"] == "response is not JSON: <html><body>Bad Gateway</body></html>"
    assert (call["status"], call["model"], rec.tool_calls) == (200, "gpt-fake", [])


def test_model_base_url_without_capture_proxy_is_an_input_error(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "cases.jsonl").write_text('{"id": "1", "input": "q"}\n', encoding="utf-8")
    env = wrapper(tmp_path)
    proc = cli(
        "run", "cases.jsonl", "--agent", "wrapper:answer", "--out", "r", cwd=tmp_path, env=env
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "agenteval: error: agent 'wrapper:answer' takes 'model_base_url': run it with"
        " --capture-proxy UPSTREAM_BASE_URL (or give the parameter a default)"
    ]
    for args, message in (
        (["--endpoint", "http://x/v1", "--model", "m", "--capture-proxy", "http://x/v1"],
         "--capture-proxy applies to --agent MODULE:FN and --http-config FILE"),
        (["--agent", "wrapper:answer", "--capture-proxy", "api.openai.com/v1"],
         "the upstream must be an http(s) base URL such as https://api.openai.com/v1,"
         " got 'api.openai.com/v1'"),
    ):  # fmt: skip
        proc = cli("run", "cases.jsonl", *args, "--out", "r", cwd=tmp_path, env=env)
        assert proc.returncode == 2, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("agenteval: error: ") and message in line, line
    assert sys.executable  # the CLI ran under this interpreter


def test_optional_parameter_and_the_accessor(tmp_path: Path, upstream: str) -> None:
    """``model_base_url=None`` runs with or without the proxy; ``model_base_url()`` gives
    the same URL anywhere inside the call (here in a helper on the agent's thread)."""
    from agenteval.traces.proxy import model_base_url

    def helper_client() -> Any:
        from openai import OpenAI

        return OpenAI(base_url=model_base_url(), api_key=KEY, max_retries=0)

    def optional(case: Case, model_base_url: str | None = None) -> str:
        if model_base_url is None:
            return "no proxy"
        return proxy_agents.chat_loop(helper_client(), str(case.input), stream=False)

    (rec,) = evaluate([case("Ada")], optional, out=tmp_path / "a").trials()
    assert (rec.output, rec.tool_calls) == ("no proxy", [])
    run = evaluate([case("Ada")], PythonAgent(optional, capture_proxy=upstream), out=tmp_path / "b")
    (rec,) = run.trials()
    check_two_steps(rec, "Ada")


def test_span_capture_wins_over_the_proxy(tmp_path: Path, upstream: str) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry import trace

    tracer = trace.get_tracer("test-proxy")

    def traced(case: Case, model_base_url: str) -> str:
        with tracer.start_as_current_span("execute_tool lookup") as s:
            s.set_attribute("gen_ai.operation.name", "execute_tool")
            s.set_attribute("gen_ai.tool.name", "lookup")
        return chat_agent(case, model_base_url)

    (rec,) = evaluate(
        [case("Ada")], PythonAgent(traced, capture_proxy=upstream), out=tmp_path / "r"
    ).trials()
    assert rec.metadata["trajectory_source"] == "otel"
    assert [c.name for c in rec.tool_calls] == ["lookup"]


def test_capture_proxy_with_an_agent_adapter_is_an_input_error(tmp_path: Path) -> None:
    from agenteval.errors import InputError

    adapter = PythonAgent(chat_agent, capture_proxy="http://127.0.0.1:9/v1")
    with pytest.raises(InputError, match="capture_proxy applies to a callable"):
        evaluate([case("Ada")], adapter, out=tmp_path / "x", capture_proxy="http://h/v1")


def test_pickled_agent_keeps_its_capture_proxy() -> None:
    """A worker process (--processes, Ray) rebuilds the agent from its pickle: the copy
    records through its own proxy in front of the same upstream, and a factory too."""
    import pickle

    from agenteval.agents.factory import FactoryAgent

    agent = PythonAgent("proxy_agents:chat_agent", capture_proxy="http://127.0.0.1:9/v1")
    copy = pickle.loads(pickle.dumps(agent))
    assert copy.describe() == agent.describe()
    assert copy.describe()["capture_proxy"] == "http://127.0.0.1:9/v1"
    assert copy._proxy is not agent._proxy

    made = FactoryAgent("proxy_agents:make_chat_agent", capture_proxy="http://127.0.0.1:9/v1")
    assert pickle.loads(pickle.dumps(made))._capture_proxy == "http://127.0.0.1:9/v1"
