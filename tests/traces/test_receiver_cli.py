"""``agenteval run --otlp-receiver``: an agent service in another process exports its spans
with the OpenTelemetry SDK; the real CLI records them on the right trials."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

SERVICE = Path(__file__).with_name("otlp_service.py")
NAMES = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald"]
IDS = {"Ada": 7, "Grace": 8, "Alan": 9, "Edsger": 10, "Barbara": 11, "Donald": 12}
SCORED = ("tool_selection", "trajectory_order", "tool_execution", "tool_faithfulness")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Service:
    """The agent service process; ``receiver`` is the port it exports spans to."""

    def __init__(self, receiver: int, env: dict[str, str]) -> None:
        self.receiver = receiver
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVICE)],
            env={**os.environ, "AGENT_OTLP": f"http://127.0.0.1:{receiver}", **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("port "), line + self.proc.stderr.read()
        self.port = int(line.split()[1])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        assert self.proc.stderr is not None
        err = self.proc.stderr.read()
        assert "Traceback" not in err, err  # every export succeeded, no handler crashed


@pytest.fixture
def service() -> Iterator[Any]:
    started: list[Service] = []

    def start(**env: str) -> Service:
        started.append(Service(free_port(), env))
        return started[-1]

    yield start
    for s in started:
        s.close()


def case(cid: str, name: str) -> dict[str, Any]:
    c: dict[str, Any] = {"id": cid, "input": f"How many orders has {name}?"}
    if name in IDS:
        c["expected"] = f"{name} has {IDS[name] * 3} orders"
        c["expected_tools"] = c["expected_trajectory"] = ["find_customer", "count_orders"]
    else:
        c["expected_tools"] = ["find_customer"]
    return c


def run(
    tmp_path: Path,
    cli: Any,
    svc: Service,
    cases: list[dict[str, Any]],
    *extra: str,
    endpoint: bool = False,
) -> tuple[dict[str, dict[str, Any]], subprocess.CompletedProcess[str]]:
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "agent.yaml").write_text(
        f"url: http://127.0.0.1:{svc.port}/ask\n"
        'body: {question: "{input}", id: "{id}"}\n'
        "response: {output: answer}\n"
    )
    agent = (
        ["--endpoint", f"http://127.0.0.1:{svc.port}/v1", "--model", "scripted"]
        if endpoint
        else ["--http-config", "agent.yaml"]
    )
    proc = cli(
        "run",
        "cases.jsonl",
        *agent,
        "--otlp-receiver",
        f"127.0.0.1:{svc.receiver}",
        "--out",
        "runs/r",
        "--quiet",
        *extra,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    lines = (tmp_path / "runs/r/trials.jsonl").read_text().splitlines()
    return {t["case_id"]: t for t in map(json.loads, lines)}, proc


def stats(stderr: str) -> dict[str, int]:
    m = re.search(
        r"OTLP receiver: (\d+) spans attributed to trials; dropped (\d+) of unknown traces"
        r" and (\d+) that arrived after their trial's wait \(--otlp-wait [\d.]+\); (\d+)"
        r" requests refused",
        stderr,
    )
    assert m, stderr
    return dict(zip(("spans", "unknown", "late", "refused"), map(int, m.groups()), strict=True))


def check_found(t: dict[str, Any], name: str) -> None:
    """Two calls from the spans of this trial's trace, and the scores they earn."""
    cid = IDS[name]
    calls = t["tool_calls"]
    assert [c["name"] for c in calls] == ["find_customer", "count_orders"]
    assert calls[0]["arguments"] == {"name": name}  # never another trial's
    assert calls[0]["result"] == {"id": cid, "name": name}
    assert calls[1]["arguments"] == {"customer_id": cid} and calls[1]["result"] == cid * 3
    assert all(c["error"] is None and c["started_at"] and c["duration_s"] >= 0 for c in calls)
    assert t["output"] == f"{name} has {cid * 3} orders"
    assert t["metadata"]["trajectory_source"] == "otlp"
    assert t["metadata"]["otlp_spans"] == 6  # invoke_agent, 3 x chat, 2 x execute_tool
    assert re.fullmatch(r"[0-9a-f]{32}", t["metadata"]["trace_id"])
    assert {d["name"] for d in t["tools"]} == {"find_customer", "count_orders"}
    assert all(t["scores"][s]["value"] == 1.0 for s in SCORED), t["scores"]


def check_raised(t: dict[str, Any], name: str) -> None:
    """The tool that raised is a call with an error, not a result."""
    (call,) = t["tool_calls"]
    assert call["name"] == "find_customer" and call["arguments"] == {"name": name}
    assert call["result"] is None and call["error"] == f"LookupError: no customer named {name}"
    assert t["output"] == f"I could not find {name}."
    assert t["metadata"]["otlp_spans"] == 4
    assert t["scores"]["tool_selection"]["value"] == 1.0
    assert t["scores"]["tool_execution"]["value"] == 0.0


def test_concurrent_trials_get_their_own_spans_and_never_wait_the_full_wait(
    tmp_path: Path, cli: Any, service: Any
) -> None:
    """16 trials at --concurrency 8, protobuf through the official OTLP/HTTP exporter
    (BatchSpanProcessor: spans arrive after the answer); each trial ends its wait once its
    root span is in, so --otlp-wait 60 costs nothing like 16 x 60 s."""
    svc = service()
    cases = [case(f"{n.lower()}-{i}", n) for i in range(2) for n in NAMES]
    cases += [case("linus", "Linus"), case("orphan-ken", "Ken")]
    cases += [case("orphan-ada", "Ada"), case("orphan-grace", "Grace")]
    t0 = time.monotonic()
    trials, proc = run(tmp_path, cli, svc, cases, "--concurrency", "8", "--otlp-wait", "60")
    assert time.monotonic() - t0 < 40
    assert len(trials) == 16
    for c in cases:
        t = trials[c["id"]]
        name = c["input"].split()[-1].rstrip("?")
        (check_found if name in IDS else check_raised)(t, name)
        assert t["usage"] == [
            {"model": "scripted", "input_tokens": 306 if name in IDS else 203,
             "output_tokens": 30 if name in IDS else 20}
        ]  # fmt: skip
        assert t["latency"]["total_s"] < 30  # the wait is not the agent's latency
    assert len({t["metadata"]["trace_id"] for t in trials.values()}) == 16
    # the orphan-* cases each emitted one span in a trace of its own: counted, dropped
    assert stats(proc.stderr) == {"spans": 14 * 6 + 2 * 4, "unknown": 3, "late": 0, "refused": 0}
    settings = json.loads((tmp_path / "runs/r/run.json").read_text())["settings"]
    assert settings["otlp_receiver"] == f"http://127.0.0.1:{svc.receiver}/v1/traces"
    assert settings["otlp_wait_s"] == 60


@pytest.mark.parametrize("export", ["json-hex", "json-b64"])
def test_otlp_json_with_hex_or_base64_ids(
    tmp_path: Path, cli: Any, service: Any, export: str
) -> None:
    svc = service(AGENT_EXPORT=export)
    trials, proc = run(tmp_path, cli, svc, [case("ada", "Ada"), case("linus", "Linus")])
    check_found(trials["ada"], "Ada")
    check_raised(trials["linus"], "Linus")
    assert stats(proc.stderr)["spans"] == 10


def test_late_spans_within_the_wait_are_the_trials(tmp_path: Path, cli: Any, service: Any) -> None:
    """Spans held back 0.8 s after the answer still land on their trial (--otlp-wait 5),
    and the wait is counted neither in the trial's latency nor in its --timeout."""
    svc = service(AGENT_LATE_S="0.8")
    cases = [case("late-ada", "Ada")]
    trials, proc = run(tmp_path, cli, svc, cases, "--otlp-wait", "5", "--timeout", "0.6")
    check_found(trials["late-ada"], "Ada")
    assert trials["late-ada"]["latency"]["total_s"] < 0.8
    assert stats(proc.stderr) == {"spans": 6, "unknown": 0, "late": 0, "refused": 0}


def test_spans_after_the_wait_are_dropped_and_counted(
    tmp_path: Path, cli: Any, service: Any
) -> None:
    """--otlp-wait 0.2, spans 0.8 s late: the trial has no calls; its 6 spans arrive while
    the next (slow) trial runs and are counted as late, never given to that trial."""
    svc = service(AGENT_LATE_S="0.8", AGENT_SLOW_S="2")
    cases = [case("late-ada", "Ada"), case("slow-grace", "Grace")]
    trials, proc = run(tmp_path, cli, svc, cases, "--otlp-wait", "0.2", "--concurrency", "1")
    late = trials["late-ada"]
    assert late["output"] == "Ada has 21 orders"
    assert late["tool_calls"] == [] and late["metadata"]["otlp_spans"] == 0
    assert "trajectory_source" not in late["metadata"]
    assert late["scores"]["tool_selection"]["value"] == 0.0
    check_found(trials["slow-grace"], "Grace")
    assert stats(proc.stderr) == {"spans": 6, "unknown": 0, "late": 6, "refused": 0}


def test_openai_compatible_agent_service(tmp_path: Path, cli: Any, service: Any) -> None:
    """--endpoint: an agent service speaking chat completions; its final message has no
    tool calls, so the calls come from its spans; the usage it reports wins."""
    svc = service()
    cases = [case(n.lower(), n) for n in NAMES] + [case("linus", "Linus")]
    trials, proc = run(tmp_path, cli, svc, cases, endpoint=True)
    for n in NAMES:
        t = trials[n.lower()]
        check_found(t, n)
        # the usage the response reported, not the spans' 306/30
        assert t["usage"] == [{"model": "scripted", "input_tokens": 999, "output_tokens": 99}]
        assert t["metadata"]["finish_reason"] == "stop"
    check_raised(trials["linus"], "Linus")
    assert stats(proc.stderr)["spans"] == 6 * 6 + 4


def test_auto_port_is_printed_exported_and_recorded(tmp_path: Path, cli: Any) -> None:
    """auto: a free loopback port, one line on stderr, AGENTEVAL_OTLP_ENDPOINT in the
    environment (here read back through ${AGENTEVAL_OTLP_ENDPOINT} in the HTTP config's
    URL: the agent is the receiver itself, which answers {} to an empty OTLP request)."""
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "input": "hi"}\n')
    (tmp_path / "agent.yaml").write_text(
        "url: ${AGENTEVAL_OTLP_ENDPOINT}/v1/traces\nbody: {resourceSpans: []}\n"
        "response: {output: resourceSpans}\n"
    )
    proc = cli(
        "run", "cases.jsonl", "--http-config", "agent.yaml", "--otlp-receiver", "auto",
        "--out", "runs/r", "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stderr  # exit 4: no trial got an answer
    m = re.search(
        r"^agenteval: OTLP receiver on (http://127\.0\.0\.1:(\d+))/v1/traces"
        r" \(AGENTEVAL_OTLP_ENDPOINT=\1\)$",
        proc.stderr,
        re.M,
    )
    assert m and int(m.group(2)) > 0, proc.stderr
    # the receiver answered 200 {} (no resourceSpans: the agent gave no answer)
    (t,) = map(json.loads, (tmp_path / "runs/r/trials.jsonl").read_text().splitlines())
    assert t["failure"]["cause"] == "malformed_response", t
    settings = json.loads((tmp_path / "runs/r/run.json").read_text())["settings"]
    assert settings["otlp_receiver"] == m.group(1) + "/v1/traces"
    assert stats(proc.stderr) == {"spans": 0, "unknown": 0, "late": 0, "refused": 0}


def test_conversation_turns_share_the_trials_trace(tmp_path: Path, cli: Any, service: Any) -> None:
    """A scripted two-turn conversation: every turn's request carries the trial's one
    traceparent, and the spans of both turns become the trial's four calls."""
    svc = service()
    cases = [
        {"id": "two-turns", "turns": ["How many orders has Ada?", "How many orders has Grace?"]},
        case("alan", "Alan"),
    ]
    trials, proc = run(tmp_path, cli, svc, cases, endpoint=True)
    t = trials["two-turns"]
    calls = t["tool_calls"]
    assert [c["name"] for c in calls] == ["find_customer", "count_orders"] * 2
    assert [c["arguments"] for c in calls[::2]] == [{"name": "Ada"}, {"name": "Grace"}]
    assert t["output"] == "Grace has 24 orders"
    assert t["metadata"]["trajectory_source"] == "otlp"
    assert t["metadata"]["otlp_spans"] == 12
    assert len(t["metadata"]["conversation"]["turns"]) == 2
    # each turn's calls are the spans of that turn's request (procedure rules read them)
    assert [turn["calls"] for turn in t["metadata"]["conversation"]["turns"]] == [[0, 2], [2, 4]]
    check_found(trials["alan"], "Alan")
    assert stats(proc.stderr) == {"spans": 18, "unknown": 0, "late": 0, "refused": 0}


def test_a_conversations_last_turn_spans_are_waited_for(
    tmp_path: Path, cli: Any, service: Any
) -> None:
    """Bug: the wait ended early once *a* root span had arrived: the first turn's root
    (arrived before the turn answered) ended it as soon as the last turn answered, so the
    last turn's spans, exported 0.6 s later, came after the wait and were dropped as late."""
    svc = service(AGENT_BATCH_MS="1", AGENT_SLOW_S="0.3", AGENT_LATE_S="0.6")
    # the first turn answers 0.3 s after its spans ended: they have arrived by then
    turns = ["slow- How many orders has Ada?", "late- How many orders has Grace?"]
    cases = [{"id": "c", "turns": turns}]
    trials, proc = run(tmp_path, cli, svc, cases, "--otlp-wait", "5", endpoint=True)
    t = trials["c"]
    assert stats(proc.stderr) == {"spans": 12, "unknown": 0, "late": 0, "refused": 0}
    assert t["metadata"]["otlp_spans"] == 12
    assert [c["arguments"] for c in t["tool_calls"][::2]] == [{"name": "Ada"}, {"name": "Grace"}]
