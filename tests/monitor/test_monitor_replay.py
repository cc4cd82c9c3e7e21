"""Restarting on a directory: the crash windows between the log, the trials and the done log."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from monitor_harness import agent_trace, all_trials, otlp_json, post, served, wait_for

from agenteval.monitor import MonitorConfig
from agenteval.monitor.wal import encode_frame


def _config(out: Path) -> MonitorConfig:
    return MonitorConfig(out=out, idle_s=0.2, max_wait_s=2.0, tick_s=0.05)


def _keys(out: Path) -> Counter[tuple[str, str]]:
    return Counter((t["metadata"]["trace_id"], t["metadata"]["span_id"]) for t in all_trials(out))


def test_trials_written_but_not_in_the_done_log_are_not_written_again(tmp_path: Path) -> None:
    """A crash after a trace's trials reached its window but before its id reached the
    done log: the replay finds them in the window and writes nothing twice."""
    with served(_config(tmp_path)) as m:
        for i in range(5):
            assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(i + 1)))[0] == 200
        wait_for(lambda: len(all_trials(tmp_path)) == 5, what="5 trials")
    for p in (tmp_path / ".monitor").glob("done-*.log"):
        p.unlink()  # as if the process died before the done log's fsync
    with served(_config(tmp_path)) as m:
        wait_for(lambda: m.monitor.metrics.replayed == 5, what="5 units found written")
        assert m.monitor.metrics.trials == 0
    assert set(_keys(tmp_path).values()) == {1} and len(_keys(tmp_path)) == 5


def test_traces_in_flight_at_a_stop_are_scored_after_the_next_start(tmp_path: Path) -> None:
    slow = MonitorConfig(out=tmp_path, idle_s=30.0, max_wait_s=60.0, tick_s=0.05)
    with served(slow) as m:
        assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(1)))[0] == 200
    assert all_trials(tmp_path) == []  # stopped before the trace was done
    with served(_config(tmp_path)) as m:
        wait_for(lambda: m.monitor.metrics.trials == 1, what="the trace scored")
    assert len(all_trials(tmp_path)) == 1


def test_another_window_length_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    import pytest

    from agenteval.errors import InputError

    hourly = MonitorConfig(out=tmp_path, window_s=3600, idle_s=0.1, max_wait_s=1.0, tick_s=0.05)
    with served(hourly) as m:
        assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(1)))[0] == 200
        wait_for(lambda: m.monitor.metrics.trials == 1, what="1 trial")
    five = MonitorConfig(out=tmp_path, window_s=300, idle_s=0.1, max_wait_s=1.0, tick_s=0.05)
    with pytest.raises(InputError) as e, served(five):
        pass
    assert "holds windows of 3600 s" in str(e.value) and "same window" in str(e.value)


def test_torn_tails_of_the_log_and_of_trials_are_cut_on_restart(tmp_path: Path) -> None:
    with served(_config(tmp_path)) as m:
        assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(1)))[0] == 200
        wait_for(lambda: len(all_trials(tmp_path)) == 1, what="1 trial")
    window = next(d for d in tmp_path.iterdir() if not d.name.startswith("."))
    with open(window / "trials.jsonl", "ab") as f:
        f.write(b'{"case_id": "t-half')  # died mid-line
    with open(window / "cases.jsonl", "ab") as f:
        f.write(b'{"id": "t-ha')
    segment = max((tmp_path / ".monitor" / "wal").glob("*.wal"))
    with open(segment, "ab") as f:
        f.write(encode_frame(1, otlp_json(agent_trace(2)))[:-7])  # a request never acknowledged
    with served(_config(tmp_path)) as m:
        assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(3)))[0] == 200
        wait_for(lambda: len(all_trials(tmp_path)) == 2, what="2 trials")
        said = list(m.said)
    assert any("torn tail" in line for line in said)
    assert sorted(int(k[0], 16) for k in _keys(tmp_path)) == [1, 3]  # trace 2 never acked
    assert (window / "trials.jsonl").read_bytes().endswith(b"\n")


def test_a_second_monitor_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    import pytest

    from agenteval.errors import InputError

    with served(_config(tmp_path)), pytest.raises(InputError) as e, served(_config(tmp_path)):
        pass
    assert "is used by another agenteval monitor" in str(e.value)
    assert str(e.value).endswith("give another out") and e.value.fields == ("out",)


REFUSING = """
import json, resource, signal, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from monitor_harness import agent_trace, all_trials, otlp_json, post, served, wait_for
from agenteval.monitor import MonitorConfig

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails with EFBIG
out = Path(sys.argv[1])
cfg = MonitorConfig(out=out, idle_s=0.1, max_wait_s=1.0, tick_s=0.05, segment_bytes=1000)
with served(cfg) as m:
    assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(1)))[0] == 200
    wait_for(lambda: len(all_trials(out)) == 1)
    trials = next(out.glob("2*/trials.jsonl"))
    limit = trials.stat().st_size + 500  # the next trial line does not fit; a request does
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    for i in (2, 3, 4):
        assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(i)))[0] == 200
    wait_for(lambda: any("cannot write the windows" in x for x in m.said))
    time.sleep(0.5)  # a few ticks retry and fail
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    wait_for(lambda: len(all_trials(out)) == 4)
    time.sleep(0.3)
print(json.dumps([x for x in m.said if "cannot write" in x]))
"""


def test_a_window_write_the_disk_refuses_is_retried_and_nothing_is_torn_or_doubled(
    tmp_path: Path,
) -> None:
    """The disk refuses a trial line (EFBIG from RLIMIT_FSIZE, as ENOSPC would): requests
    are still acknowledged (the log has room), the traces wait and are retried; once the
    disk has room every trace is in the window once and the file reads as a run. ~3 s."""
    import json
    import subprocess
    import sys

    from agenteval.rundir import iter_trials

    here = str(Path(__file__).parent)
    r = subprocess.run(
        [sys.executable, "-c", REFUSING, str(tmp_path), here],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    said = json.loads(r.stdout)
    assert len(said) == 1 and "retrying (nothing acknowledged is lost)" in said[0]
    window = next(tmp_path.glob("2*"))
    assert sorted(int(t.metadata["trace_id"], 16) for t in iter_trials(window)) == [1, 2, 3, 4]


def test_a_quiet_log_is_emptied_once_what_it_holds_is_scored(tmp_path: Path) -> None:
    """No traffic after a burst: the current segment, once old and unneeded, is rolled
    and deleted, so a restart replays nothing."""
    cfg = MonitorConfig(out=tmp_path, idle_s=0.1, max_wait_s=1.0, tick_s=0.05, segment_s=0.5)
    with served(cfg) as m:
        assert post(m.endpoint + "/v1/traces", otlp_json(agent_trace(1)))[0] == 200
        wait_for(lambda: m.monitor.metrics.trials == 1, what="1 trial")
        wal = tmp_path / ".monitor" / "wal"
        wait_for(lambda: sum(p.stat().st_size for p in wal.iterdir()) == 0, what="an empty log")
    with served(cfg) as m:
        assert not [x for x in m.said if "replayed" in x]
