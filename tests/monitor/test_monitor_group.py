"""--group conversation live: a conversation's traces make one multi-turn trial once the
conversation is done (no trace of it done for --conversation-idle, or
--conversation-max-wait after its first), the trial import-traces makes of the same spans;
a conversation held across a restart is not lost."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from monitor_harness import agent_trace, all_trials, otlp_json, post, served, wait_for

from agenteval.cli import main
from agenteval.monitor import MapOptions, MonitorConfig

CONV = {"gen_ai.conversation.id": "conv-1"}
T0 = time.time_ns()


def _turn(trace: int, answer: str, at_ms: int, **attrs: Any) -> list[dict[str, Any]]:
    return agent_trace(trace, answer, start_ns=T0 + at_ms * 1_000_000, **attrs)


TURNS = [
    _turn(1, "The answer is 42", 0, **CONV),
    _turn(2, "Still 42", 100, **CONV),
    _turn(3, "On its own", 150),  # no conversation id: a trial as soon as it is done
    _turn(4, "42, as I said", 200, **CONV),
]


def _config(out: Path, *, idle: float = 0.8, max_wait: float = 30.0) -> MonitorConfig:
    return MonitorConfig(
        out=out,
        idle_s=0.1,
        max_wait_s=0.5,
        tick_s=0.05,
        mapping=MapOptions(group="conversation"),
        conversation_idle_s=idle,
        conversation_max_wait_s=max_wait,
    )


def _lines(p: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]


def test_a_conversation_over_several_traces_is_one_trial_once_done_as_import_traces_has_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "mon"
    with served(_config(out)) as m:
        for spans in TURNS:
            assert post(m.endpoint + "/v1/traces", otlp_json(spans))[0] == 200
        wait_for(lambda: len(all_trials(out)) == 1, what="the lone trace's trial")
        (alone,) = all_trials(out)
        assert alone["output"] == "On its own"  # the conversation is not done yet
        assert m.monitor.conversations is not None and list(m.monitor.conversations.held) == [
            "conv-1"
        ]
        wait_for(lambda: len(all_trials(out)) == 2, what="the conversation's trial")
        assert not m.monitor.conversations.held
    conv = next(t for t in all_trials(out) if t["metadata"].get("conversation") == "conv-1")
    assert conv["metadata"]["invocations"] == 3 and conv["output"] == "42, as I said"
    # the same spans in a file, imported with --group conversation: the same trials
    f = tmp_path / "spans.json"
    f.write_text(otlp_json([s for spans in TURNS for s in spans]).decode())
    run = tmp_path / "imported"
    args = ["import-traces", str(f), "--out", str(run), "--group", "conversation", "--quiet"]
    assert main(args) == 0
    want = _lines(run / "trials.jsonl")
    got = all_trials(out)
    canon = sorted  # trial lines compared whole, scores included

    def key(rows: list[dict[str, Any]]) -> list[str]:
        return canon(json.dumps(r, sort_keys=True) for r in rows)

    assert key(got) == key(want)
    window = next(d for d in out.iterdir() if not d.name.startswith("."))
    assert key(_lines(window / "cases.jsonl")) == key(_lines(run / "cases.jsonl"))
    case = next(c for c in _lines(window / "cases.jsonl") if c["id"] == conv["case_id"])
    roles = [msg["role"] for msg in case["input"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]  # turns but the last answer


def test_a_conversation_that_never_goes_quiet_is_cut_at_max_wait_and_the_rest_counted(
    tmp_path: Path,
) -> None:
    out = tmp_path / "mon"
    with served(_config(out, idle=0.6, max_wait=0.9)) as m:
        for i in range(6):  # a turn every 0.25 s for 1.5 s: never 0.6 s quiet
            spans = _turn(10 + i, f"turn {i}", i * 10, **CONV)
            assert post(m.endpoint + "/v1/traces", otlp_json(spans))[0] == 200
            time.sleep(0.25)
        wait_for(lambda: len(all_trials(out)) == 2, what="two trials of the conversation")
        convs = m.monitor.conversations
        assert convs is not None
        wait_for(lambda: not convs.held, what="nothing held")
        assert convs.split == 1
    trials = all_trials(out)
    assert sum(t["metadata"].get("invocations", 1) for t in trials) == 6
    assert {t["case_id"] for t in trials} == {trials[0]["case_id"]}  # repeats of one case
    assert sorted(t["repeat"] for t in trials) == [0, 1]


def test_a_conversation_held_when_the_monitor_stops_is_written_after_the_restart(
    tmp_path: Path,
) -> None:
    out = tmp_path / "mon"
    with served(_config(out, idle=30.0)) as m:
        for spans in TURNS[:2]:
            assert post(m.endpoint + "/v1/traces", otlp_json(spans))[0] == 200
        convs = m.monitor.conversations
        assert convs is not None
        wait_for(lambda: "conv-1" in convs.held and len(convs.held["conv-1"].traces) == 2)
    assert all_trials(out) == []  # held, not written: still in the write-ahead log
    with served(_config(out, idle=0.3)) as m:
        wait_for(lambda: len(all_trials(out)) == 1, what="the conversation after the restart")
    (trial,) = all_trials(out)
    assert trial["metadata"]["invocations"] == 2 and trial["output"] == "Still 42"


def test_a_window_stays_open_while_a_conversation_begun_in_it_is_held(tmp_path: Path) -> None:
    """Traffic of an hour ago: the lone trace's trial opens the window, whose close delay
    (0.7 s) is shorter than the conversation's idle time (1 s); the window closes once,
    after the conversation is written, holding both trials."""
    hour_ago = (int(time.time()) // 3600 - 1) * 3600 + 60
    at = hour_ago * 1000 - T0 // 1_000_000  # ms offsets from T0 that land an hour ago
    turns = [_turn(30, "one", at, **CONV), _turn(31, "two", at + 10, **CONV), _turn(32, "x", at)]
    out = tmp_path / "mon"
    cfg = _config(out, idle=1.0)
    with served(cfg) as m:
        assert post(m.endpoint + "/v1/traces", otlp_json([s for t in turns for s in t]))[0] == 200
        wait_for(lambda: m.monitor.metrics.windows_closed == 1, what="the window closed")
        time.sleep(0.3)
        assert m.monitor.metrics.windows_closed == 1
    (window,) = [d for d in out.iterdir() if not d.name.startswith(".")]
    assert json.loads((window / "run.json").read_text())["summary"]["trials"] == 2


def test_conversation_waits_that_cannot_work_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mon"
    args = ["monitor", "--out", str(out), "--group", "conversation"]
    assert main([*args, "--conversation-idle", "10m", "--conversation-max-wait", "5m"]) == 2
    assert "--conversation-max-wait (5m) must be at least --conversation-idle (10m)" in (
        capsys.readouterr().err
    )
    assert main([*args, "--conversation-idle", "never"]) == 2
    assert "--conversation-idle must be a positive duration" in capsys.readouterr().err
    assert not out.exists()
