"""Attacks on the monitor's judge (issue 31): the sample's key and the budget's edge.

The judge is the scripted OpenAI-style server of the judge's own tests (tests/judge/
_judge_fake.py, a real aiohttp server on 127.0.0.1).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from monitor_harness import agent_trace, all_trials, otlp_json, post, served, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
from _judge_fake import FakeJudge, Reply

from agenteval.cli import main
from agenteval.cli._common import flagged
from agenteval.judge import Judge, JudgeConfig, load_rubric
from agenteval.llm.pricing import PriceTable
from agenteval.monitor import MapOptions, MonitorConfig
from agenteval.monitor.judging import JudgeStage, sample_point
from agenteval.monitor.windows import window_name, window_start
from agenteval.trials.trial import Trial

RIGHT = "The answer is 42"
RULES = {RIGHT: Reply("the tool returned 42, as the answer says\nGRADE: C")}
PRICES = {"jm": {"input": 50.0, "output": 250.0}}
"""USD per million tokens: the fake's 100 input and 20 output tokens cost $0.01 a call."""


def test_an_exported_conversation_is_sampled_by_its_id_not_by_its_record() -> None:
    """A trial exported by ``export-otel`` carries its conversation record (a mapping with
    ``id`` and ``turns``) in ``metadata.conversation``: the sample is still the
    conversation id's, whatever its turns say (it was the record's text: a conversation
    re-exported with one turn more moved in or out of the sample)."""
    config = JudgeConfig(
        endpoint="http://127.0.0.1:9/v1", model="jm", rubrics=[load_rubric("groundedness")]
    )
    stage = JudgeStage(Judge(config), sample=0.5)
    wrong = []
    for i in range(40):
        conv = f"conv-{i}"
        for turns in (1, 2, 3):
            record = {"id": conv, "ended": "done", "turns": [{"input": "hi"}] * turns}
            t = Trial(case_id="c", metadata={"trace_id": f"{i:032x}", "conversation": record})
            if stage.sampled(t) != (sample_point(conv) < 0.5):
                wrong.append((conv, turns))
    assert wrong == []


@pytest.mark.parametrize(("budget", "calls"), [(0.1, 10), (1e-12, 1)])
def test_a_budget_spent_exactly_stops_the_judge(tmp_path: Path, budget: float, calls: int) -> None:
    """Ten calls at $0.01 spend a $0.10 budget: the eleventh trace is not judged (the
    float sum of ten 0.01 is 0.09999999999999999, below 0.1, and let an eleventh call
    through with one call in flight at a time). A budget of a fraction of a nano-dollar
    is not spent before the first call."""
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
    with FakeJudge(RULES) as srv:
        config = JudgeConfig(
            endpoint=srv.base_url, model="jm", rubrics=[load_rubric("groundedness")], concurrency=1
        )
        prices = PriceTable.default().merged(PriceTable.from_dict(PRICES))
        stage = JudgeStage(Judge(config), max_usd_per_hour=budget, prices=prices)
        with served(cfg, judge=stage) as m:
            for i in range(1, 13):
                assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(i, RIGHT)))[0] == 200
            wait_for(lambda: len(all_trials(out)) == 12, what="12 trials")
        assert srv.calls == calls
    statuses = sorted(t["scores"]["judge_groundedness"]["status"] for t in all_trials(out))
    assert statuses == ["not_applicable"] * (12 - calls) + ["passed"] * calls


WEEK = 7 * 86400
TARGET = window_start(time.time(), 3600) - 3600  # the hour before this one: closed
EARLIER = TARGET - WEEK
BAD = "I do not know"  # ignores the tool: tool_faithfulness fails


def _send_at(endpoint: str, first: int, n: int, answer: str, at: float) -> None:
    for i in range(first, first + n):
        body = otlp_json(agent_trace(i, answer, start_ns=int(at * 1e9)))
        assert post(endpoint + "/v1/traces", body)[0] == 200


def _baseline(tmp_path: Path) -> Path:
    f = tmp_path / "base.jsonl"
    f.write_text("".join(otlp_json(agent_trace(10_000 + i)).decode() + "\n" for i in range(30)))
    run = tmp_path / "baseline"
    assert main(["import-traces", str(f), "--out", str(run), "--quiet"]) == 0
    return run


def test_a_broken_week_earlier_window_falls_back_to_the_baseline(tmp_path: Path) -> None:
    """Last week's window closed, then its trials.jsonl was damaged (a line of garbage): the
    window is gated against --baseline instead, said in one line, and counted closed. It
    was not gated at all, said "not closed cleanly" of a window that had closed, and the
    windows_closed count stayed behind (a script waiting on it waited forever)."""
    out = tmp_path / "mon"
    base = _baseline(tmp_path)
    cfg = MonitorConfig(
        out=out, window_s=3600, idle_s=0.1, max_wait_s=0.5, tick_s=0.05, baseline=base,
        week_earlier=True,
    )  # fmt: skip
    with served(cfg) as m:
        _send_at(m.endpoint, 1, 10, RIGHT, EARLIER + 60)
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the earlier window")
        trials = out / window_name(EARLIER, 3600) / "trials.jsonl"
        lines = trials.read_text().splitlines(keepends=True)
        trials.write_text("".join(lines[:3]) + "{not json\n" + "".join(lines[3:]))
        _send_at(m.endpoint, 100, 10, BAD, TARGET + 60)
        wait_for(lambda: m.monitor.metrics.windows_closed == 2, what="the window closed")
        said = list(m.said)
    alerts = [json.loads(x) for x in (out / "alerts.jsonl").read_text().splitlines()]
    assert [(a["window"], a["reference"]) for a in alerts] == [
        (window_name(TARGET, 3600), "--baseline")
    ]
    broken = [x for x in said if window_name(EARLIER, 3600) in x and "cannot be read" in x]
    assert len(broken) == 1, said
    # the library's line names the setting; the command line shows its flag
    assert broken[0].endswith("; gated against baseline"), broken
    assert flagged(broken[0]).endswith("; gated against --baseline")
    assert not [x for x in said if "not closed cleanly" in x]


def _renumbered(spans: list[dict[str, Any]], by: int) -> list[dict[str, Any]]:
    out = []
    for s in spans:
        s = dict(s)
        for k in ("spanId", "parentSpanId"):
            if k in s:
                s[k] = f"{int(s[k], 16) + by:016x}"
        out.append(s)
    return out


def test_a_trace_holding_two_conversations_is_mapped_as_import_traces_maps_it(
    tmp_path: Path,
) -> None:
    """One trace with an invocation of conversation A and one of B (a batch job's trace),
    then a trace of each: import-traces --group conversation makes two trials (A of two
    invocations, B of two); the monitor must make the same two."""
    t0 = time.time_ns()
    a, b = {"gen_ai.conversation.id": "conv-A"}, {"gen_ai.conversation.id": "conv-B"}
    both = agent_trace(5, "A one", start_ns=t0, **a) + _renumbered(
        agent_trace(5, "B one", start_ns=t0 + 10_000_000, **b), 2
    )
    traces = [both, agent_trace(6, "B two", t0 + 20_000_000, **b)]
    traces.append(agent_trace(7, "A two", t0 + 30_000_000, **a))
    f = tmp_path / "spans.json"
    f.write_text(otlp_json([s for t in traces for s in t]).decode())
    run = tmp_path / "imported"
    assert main(["import-traces", str(f), "--out", str(run), "--group", "conversation"]) == 0
    want = sorted(
        (t["metadata"]["conversation"], t["metadata"].get("invocations", 1))
        for t in map(json.loads, (run / "trials.jsonl").read_text().splitlines())
    )
    assert want == [("conv-A", 2), ("conv-B", 2)]
    out = tmp_path / "mon"
    cfg = MonitorConfig(
        out=out, idle_s=0.1, max_wait_s=0.5, tick_s=0.05,
        mapping=MapOptions(group="conversation"), conversation_idle_s=0.6,
    )  # fmt: skip
    with served(cfg) as m:
        for spans in traces:
            assert post(m.endpoint + "/v1/traces", otlp_json(spans))[0] == 200
        convs = m.monitor.conversations
        assert convs is not None
        wait_for(lambda: len(all_trials(out)) >= 2 and not convs.held, what="conversations")
        time.sleep(0.3)
    got = sorted(
        (t["metadata"]["conversation"], t["metadata"].get("invocations", 1))
        for t in all_trials(out)
    )
    assert got == want


@pytest.mark.parametrize("text", ["[NaN, 1e999]", '{"ratio": Infinity}', "[-Infinity]"])
def test_a_tool_result_with_numbers_json_has_not_stays_the_text(tmp_path: Path, text: str) -> None:
    """A tool returned ``[NaN, 1e999]`` (Python's json.dumps of floats it cannot write):
    the model saw that text, and the trial keeps it. It was parsed, and the trial's
    result written as ``[null, null]``: what the scorers and the rescore saw was not what
    the model saw."""
    spans = agent_trace(1)
    tool = next(s for s in spans if s["name"].startswith("execute_tool"))
    for a in tool["attributes"]:
        if a["key"] == "gen_ai.tool.call.result":
            a["value"] = {"stringValue": text}
    f = tmp_path / "spans.json"
    f.write_bytes(otlp_json(spans))
    assert main(["import-traces", str(f), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    (line,) = (tmp_path / "run" / "trials.jsonl").read_text().splitlines()
    assert json.loads(line)["tool_calls"][0]["result"] == text
