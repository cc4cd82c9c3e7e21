"""--rubric in the monitor: judged verdicts, the sample by trace id, the budget, the cache,
and a slow judge that never holds up acknowledging.

The judge is the scripted OpenAI-style server the judge's own tests use (tests/judge/
_judge_fake.py, a real aiohttp server on 127.0.0.1); it grades ``groundedness`` by the
answer: "The answer is 42" agrees with the tool's result (42), "The answer is 7" does not.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from monitor_harness import agent_trace, all_trials, get, otlp_json, post, served, wait_for
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))
from _judge_fake import FakeJudge, Reply

from agenteval.cli import main
from agenteval.judge import Judge, JudgeConfig, load_rubric
from agenteval.llm.http import RetryPolicy
from agenteval.llm.pricing import PriceTable
from agenteval.monitor import MonitorConfig
from agenteval.monitor.judging import JudgeStage, sample_point
from agenteval.trials.trial import Trial

RIGHT, WRONG = "The answer is 42", "The answer is 7"
RULES: dict[str, Reply | list[Reply]] = {
    RIGHT: Reply("the tool returned 42, as the answer says\nGRADE: C"),
    WRONG: Reply("the tool returned 42, the answer says 7\nGRADE: I"),
}
PRICES = {"jm": {"input": 50.0, "output": 250.0}}
"""USD per million tokens: the fake's 100 input and 20 output tokens cost $0.01 a call."""


def _metrics(endpoint: str) -> dict[str, float]:
    """``name{labels}`` → value, read by Prometheus' own parser."""
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(get(endpoint + "/metrics")):
        for s in fam.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            out[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return out


def _start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    p = subprocess.Popen(
        [sys.executable, "-m", "agenteval", "monitor", "--listen", "127.0.0.1:0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert p.stdout is not None
    line = p.stdout.readline()
    if not line.startswith("listening on "):
        p.kill()
        raise AssertionError(p.communicate()[1])
    return p, line.split()[-1]


def _stop(p: subprocess.Popen[str]) -> str:
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    return err


def _judge_args(srv: FakeJudge, tmp_path: Path) -> list[str]:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    return [
        "--rubric", "groundedness", "--judge-endpoint", srv.base_url, "--judge-model", "jm",
        "--judge-cache", str(tmp_path / "cache"), "--prices", str(prices),
    ]  # fmt: skip


def _send(endpoint: str, traces: dict[int, str]) -> None:
    for i, answer in traces.items():
        assert post(endpoint + "/v1/traces", otlp_json(agent_trace(i, answer)))[0] == 200


def _by_trace(out: Path) -> dict[int, dict[str, Any]]:
    return {int(t["metadata"]["trace_id"], 16): t for t in all_trials(out)}


def test_a_wrong_answer_gets_a_failing_judge_score_and_the_window_says_who_judged(
    tmp_path: Path,
) -> None:
    out = tmp_path / "mon"
    traffic = {i: WRONG if i % 3 == 0 else RIGHT for i in range(1, 10)}  # 3 wrong of 9
    with FakeJudge(RULES) as srv:
        p, endpoint = _start(
            ["--out", str(out), "--idle", "0.2s", "--max-wait", "2s", *_judge_args(srv, tmp_path)]
        )
        try:
            _send(endpoint, traffic)
            wait_for(lambda: len(all_trials(out)) == 9, what="9 trials")
            # counted once the scoring thread hands its batch back, just after the lines
            wait_for(
                lambda: _metrics(endpoint).get("agenteval_monitor_trials_total") == 9,
                what="9 trials counted",
            )
            m = _metrics(endpoint)
        finally:
            _stop(p)
        assert srv.calls == 9
    got = _by_trace(out)
    for i, answer in traffic.items():
        score = got[i]["scores"]["judge_groundedness"]
        assert score["status"] == ("failed" if answer == WRONG else "passed"), (i, score)
        assert "tool_faithfulness" in got[i]["scores"]  # the deterministic scorers too
    assert got[3]["scores"]["judge_groundedness"]["reason"].startswith("GRADE I (incorrect)")
    assert m["agenteval_monitor_scorer_results_total{scorer=judge_groundedness,status=failed}"] == 3
    assert m["agenteval_monitor_judge_calls_total"] == 9
    assert m["agenteval_monitor_judge_spend_usd_total"] == pytest.approx(0.09)
    assert m["agenteval_monitor_judge_budget_skipped_total"] == 0
    window = next(d for d in out.iterdir() if not d.name.startswith("."))
    head = json.loads((window / "run.json").read_text())
    assert "judge_groundedness" in [s["name"] for s in head["scorers"]]
    judge = head["settings"]["monitor"]["judge"]
    assert (judge["model"], judge["sample"], judge["max_usd_per_hour"]) == ("jm", 1.0, None)


def test_the_sample_is_chosen_by_trace_id_and_a_replay_judges_the_same_traces_from_the_cache(
    tmp_path: Path,
) -> None:
    traffic = dict.fromkeys(range(1, 21), RIGHT)
    expected = {i for i in traffic if sample_point(f"{i:032x}") < 0.5}
    assert 4 < len(expected) < 16  # the rate picks some, not all
    with FakeJudge(RULES) as srv:
        judged: list[set[int]] = []
        for run in ("first", "replay"):  # the replay: the same traffic, another directory
            out = tmp_path / run
            cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
            config = JudgeConfig(
                endpoint=srv.base_url,
                model="jm",
                rubrics=[load_rubric("groundedness")],
                cache_dir=tmp_path / "cache",
            )
            with served(cfg, judge=JudgeStage(Judge(config), sample=0.5)) as m:
                _send(m.endpoint, traffic)
                wait_for(lambda out=out: len(all_trials(out)) == 20, what="20 trials")
                metrics = _metrics(m.endpoint)
            scores = {i: t["scores"]["judge_groundedness"] for i, t in _by_trace(out).items()}
            judged.append({i for i, s in scores.items() if s["status"] == "passed"})
            left_out = [s for i, s in scores.items() if i not in judged[-1]]
            assert all(s["status"] == "not_applicable" for s in left_out)
            assert (
                left_out[0]["reason"] == "not judged: outside the 50% sample (--judge-sample 0.5)"
            )
            assert metrics["agenteval_monitor_judge_sampled_out_total"] == 20 - len(expected)
        assert judged == [expected, expected]
        assert srv.calls == len(expected)  # the replay was answered by the judge's cache
        assert metrics["agenteval_monitor_judge_cache_hits_total"] == len(expected)
        assert metrics["agenteval_monitor_judge_calls_total"] == 0


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _stage(srv: FakeJudge, tmp_path: Path, clock: _Clock, budget: float) -> JudgeStage:
    config = JudgeConfig(
        endpoint=srv.base_url,
        model="jm",
        rubrics=[load_rubric("groundedness")],
        cache_dir=tmp_path / "cache",
        concurrency=1,
    )
    prices = PriceTable.default().merged(PriceTable.from_dict(PRICES))
    return JudgeStage(Judge(config), max_usd_per_hour=budget, prices=prices, clock=clock)


def test_over_the_budget_traces_get_deterministic_scores_and_a_not_judged_score(
    tmp_path: Path,
) -> None:
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
    clock = _Clock()
    with FakeJudge(RULES) as srv:
        stage = _stage(srv, tmp_path, clock, budget=0.025)  # $0.01 a call: 3 calls, then over
        with served(cfg, judge=stage) as m:
            _send(m.endpoint, {i: RIGHT for i in range(1, 7)})
            wait_for(lambda: len(all_trials(out)) == 6, what="6 trials")
            assert srv.calls == 3
            clock.now += 3600  # an hour later the budget is free again
            _send(m.endpoint, {7: WRONG})
            wait_for(lambda: len(all_trials(out)) == 7, what="the 7th trial")
            metrics = _metrics(m.endpoint)
        assert srv.calls == 4
    scores = [t["scores"] for t in all_trials(out)]
    statuses = [s["judge_groundedness"]["status"] for s in scores]
    assert statuses == ["passed"] * 3 + ["not_applicable"] * 3 + ["failed"]
    assert scores[4]["judge_groundedness"]["reason"] == (
        "not judged: the judge budget of $0.025 per hour is spent ($0.0300 in the last hour;"
        " --judge-max-usd-per-hour)"
    )
    assert all(s["tool_faithfulness"]["status"] == "passed" for s in scores[:6])
    assert metrics["agenteval_monitor_judge_budget_skipped_total"] == 3
    assert metrics["agenteval_monitor_judge_spend_usd_total"] == pytest.approx(0.04)


def test_a_slow_judge_never_holds_up_acknowledging(tmp_path: Path) -> None:
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
    with FakeJudge(RULES, delay_s=1.0) as srv:
        config = JudgeConfig(
            endpoint=srv.base_url, model="jm", rubrics=[load_rubric("groundedness")]
        )
        with served(cfg, judge=JudgeStage(Judge(config))) as m:
            _send(m.endpoint, {1: WRONG})
            wait_for(lambda: srv.calls == 1, what="the judge asked")
            took = []
            for i in range(2, 7):  # while the judge thinks
                t0 = time.monotonic()
                _send(m.endpoint, {i: RIGHT})
                took.append(time.monotonic() - t0)
            assert max(took) < 0.5, took
            assert _metrics(m.endpoint)["agenteval_monitor_judging_traces"] >= 1
            assert not all_trials(out)  # a judged trial is written once judged
            wait_for(lambda: len(all_trials(out)) == 6, what="6 trials")
    got = _by_trace(out)
    assert got[1]["scores"]["judge_groundedness"]["status"] == "failed"


_BASE = ["--rubric", "groundedness", "--judge-endpoint", "http://127.0.0.1:9/v1",
         "--judge-model", "jm"]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--judge-sample", "0.5"], "--judge-sample without --rubric"),
        (["--judge-max-usd-per-hour", "1"], "--judge-max-usd-per-hour without --rubric"),
        ([*_BASE, "--judge-sample", "1.5"], "--judge-sample must be within (0, 1]"),
        ([*_BASE, "--judge-sample", "0"], "--judge-sample must be within (0, 1]"),
        ([*_BASE, "--judge-max-usd-per-hour", "0"], "--judge-max-usd-per-hour must be positive"),
        (
            [*_BASE, "--judge-max-usd-per-hour", "1"],
            "needs the judge model's price: 'jm' is not in the price table; give --prices FILE",
        ),
    ],
)
def test_judge_options_that_cannot_work_are_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    out = tmp_path / "mon"
    assert main(["monitor", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_window_waits_for_its_trials_being_judged_and_a_slow_judge_pushes_back(
    tmp_path: Path,
) -> None:
    """Trace ``out_id`` is outside the sample (written at once, opening its window), trace
    ``in_id`` inside it (its judge takes 1.5 s, longer than the window's close delay): the
    window closes once, after both are written. Meanwhile the spans waiting for the judge
    count against --max-pending-spans: the next request is answered 429."""
    ids = range(1, 100)
    out_id = next(i for i in ids if sample_point(f"{i:032x}") >= 0.5)
    in_id = next(i for i in ids if sample_point(f"{i:032x}") < 0.5)
    hour_ago = (int(time.time()) // 3600 - 1) * 3600 + 60.0  # a window long closed
    out = tmp_path / "mon"
    cfg = MonitorConfig(
        out=out, idle_s=0.1, max_wait_s=0.3, tick_s=0.05, max_pending_spans=3
    )  # close delay 0.5 s
    with FakeJudge(RULES, delay_s=1.5) as srv:
        config = JudgeConfig(
            endpoint=srv.base_url, model="jm", rubrics=[load_rubric("groundedness")]
        )
        with served(cfg, judge=JudgeStage(Judge(config), sample=0.5)) as m:
            at = int(hour_ago * 1e9)
            spans = agent_trace(out_id, RIGHT, start_ns=at) + agent_trace(in_id, RIGHT, start_ns=at)
            assert post(m.endpoint + "/v1/traces", otlp_json(spans))[0] == 200  # one request
            wait_for(lambda: srv.calls == 1, what="the judge asked")
            status, headers, _ = post(m.endpoint + "/v1/traces", otlp_json(agent_trace(500)))
            assert (status, headers.get("Retry-After")) == (429, "1")
            wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the window closed")
            time.sleep(0.3)
            assert m.monitor.metrics.windows_closed == 1  # closed once: not reopened
    (window,) = [d for d in out.iterdir() if not d.name.startswith(".")]
    head = json.loads((window / "run.json").read_text())
    assert head["summary"]["trials"] == 2
    statuses = {i: t["scores"]["judge_groundedness"]["status"] for i, t in _by_trace(out).items()}
    assert statuses == {out_id: "not_applicable", in_id: "passed"}


@settings(max_examples=50, deadline=None)
@given(
    ids=st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=20),
    low=st.floats(0.01, 1.0),
    high=st.floats(0.01, 1.0),
)
def test_the_sample_depends_on_the_id_only_and_a_larger_rate_takes_a_superset(
    ids: list[str], low: float, high: float
) -> None:
    low, high = min(low, high), max(low, high)
    for key in ids:
        assert 0.0 <= sample_point(key) < 1.0
        assert sample_point(key) == sample_point(str(key))
    taken_low = {k for k in ids if sample_point(k) < low}
    taken_high = {k for k in ids if sample_point(k) < high}
    assert taken_low <= taken_high


def test_a_judge_that_cannot_be_reached_gives_inconclusive_scores_never_a_fail(
    tmp_path: Path,
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
    config = JudgeConfig(
        endpoint=f"http://127.0.0.1:{port}/v1",
        model="jm",
        rubrics=[load_rubric("groundedness")],
        policy=RetryPolicy(max_retries=0),
    )
    with served(cfg, judge=JudgeStage(Judge(config))) as m:
        _send(m.endpoint, {1: WRONG, 2: RIGHT})
        wait_for(lambda: len(all_trials(out)) == 2, what="2 trials")
    for t in all_trials(out):
        score = t["scores"]["judge_groundedness"]
        assert score["status"] == "inconclusive" and score["reason"].startswith("inconclusive:")
        assert t["scores"]["tool_faithfulness"]["status"] in ("passed", "failed")


def test_a_conversation_is_in_or_out_of_the_sample_as_a_whole() -> None:
    config = JudgeConfig(
        endpoint="http://127.0.0.1:9/v1", model="jm", rubrics=[load_rubric("groundedness")]
    )
    stage = JudgeStage(Judge(config), sample=0.5)
    convs = [f"conv-{i}" for i in range(40)]
    picked = {c for c in convs if sample_point(c) < 0.5}
    assert 0 < len(picked) < len(convs)
    for c in convs:
        trials = [
            Trial(case_id="c", metadata={"trace_id": f"{t:032x}", "conversation": c})
            for t in range(5)
        ]
        assert {stage.sampled(t) for t in trials} == {c in picked}


def test_the_pages_judge_example_is_accepted_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/monitor.md's judge command line parses and builds the judge it describes."""
    from agenteval.cli import build_parser
    from agenteval.cli.monitor import _judge

    page = (Path(__file__).resolve().parents[2] / "docs" / "monitor.md").read_text()
    block = page.split("parses this judge example -->")[1].split("```bash\n")[1].split("```")[0]
    argv = shlex.split(block.replace("\\\n", " "))
    assert argv[:2] == ["agenteval", "monitor"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    args = build_parser().parse_args([*argv[1:], "--judge-cache", str(tmp_path / "cache")])
    stage = _judge(args)
    assert (stage.sample, stage.max_usd_per_hour) == (0.1, 0.5)
    assert stage.priced and stage.names == ["judge_groundedness"]


def test_a_trace_being_judged_when_the_monitor_stops_is_judged_and_written_once_after(
    tmp_path: Path,
) -> None:
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)

    def stage(srv: FakeJudge) -> JudgeStage:
        rubrics = [load_rubric("groundedness")]
        return JudgeStage(Judge(JudgeConfig(endpoint=srv.base_url, model="jm", rubrics=rubrics)))

    with FakeJudge(RULES, delay_s=1.5) as slow:  # answers after the monitor stopped
        with served(cfg, judge=stage(slow)) as m:
            _send(m.endpoint, {1: WRONG})
            wait_for(lambda: slow.calls == 1, what="the judge asked")
        assert all_trials(out) == []  # stopped while judging: nothing written, still logged
    with FakeJudge(RULES) as fast, served(cfg, judge=stage(fast)):
        wait_for(lambda: len(all_trials(out)) == 1, what="the trial after the restart")
        time.sleep(0.3)
    (trial,) = all_trials(out)
    assert trial["scores"]["judge_groundedness"]["status"] == "failed"
