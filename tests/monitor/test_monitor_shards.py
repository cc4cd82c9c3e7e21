"""Scale-out: replicas behind the Collector's trace-id routing, read together as one run.

The router below is the OpenTelemetry Collector's ``loadbalancing`` exporter with
``routing_key: traceID`` ported line for line (collector-contrib,
exporter/loadbalancingexporter/consistent_hashing.go): a ring of 36,000 positions, each
endpoint at the CRC-32 (IEEE) of its name followed by one byte 0..99, modulo 36,000 (a
position taken already is skipped); a trace goes to the first endpoint at or after the
CRC-32 of its 16 trace id bytes modulo 36,000, wrapping round. The exporter splits every
batch by trace id and sends each endpoint its traces, as :func:`_route` does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from monitor_harness import otlp_json, post, served, span, trial_lines, wait_for

from agenteval.cli import main
from agenteval.errors import InputError
from agenteval.monitor import MonitorConfig
from agenteval.monitor.mapping import MapOptions
from agenteval.monitor.windows import window_name, window_start
from agenteval.rundir import iter_trials, read_header, write_header
from agenteval.summary.compute import summarize

MAX_POSITIONS = 36000
WEIGHT = 100


class Ring:
    """The loadbalancing exporter's hash ring (module docstring)."""

    def __init__(self, endpoints: list[str]) -> None:
        taken: set[int] = set()
        items: list[tuple[int, str]] = []
        for endpoint in endpoints:
            for i in range(WEIGHT):
                pos = zlib.crc32(endpoint.encode() + bytes([i])) % MAX_POSITIONS
                if pos in taken:
                    continue
                taken.add(pos)
                items.append((pos, endpoint))
        self.items = sorted(items, key=lambda x: x[0])  # Go's sort.Slice by position

    def endpoint_for(self, trace_id: bytes) -> str:
        pos = zlib.crc32(trace_id) % MAX_POSITIONS
        n = len(self.items)
        return _bsearch(pos, self.items[: n // 2], self.items[n // 2 :])[1]


def _bsearch(
    pos: int, left: list[tuple[int, str]], right: list[tuple[int, str]]
) -> tuple[int, str]:
    if left[-1][0] == pos:
        return left[-1]
    if right[0][0] == pos:
        return right[0]
    if pos > right[-1][0]:
        return left[0]
    if pos > left[-1][0]:
        if len(right) == 1:
            return right[0]
        h = len(right) // 2
        return _bsearch(pos, right[:h], right[h:])
    if len(left) == 1:
        return left[0]
    h = len(left) // 2
    return _bsearch(pos, left[:h], left[h:])


def test_the_ring_is_the_next_position_round_the_circle() -> None:
    ring = Ring(["a:4318", "b:4318"])
    positions = [p for p, _ in ring.items]
    assert positions == sorted(set(positions)) and len(positions) > 190
    for pos, endpoint in ring.items[:50]:  # a position on the ring is its own endpoint's
        assert _bsearch(pos, ring.items[:100], ring.items[100:])[1] == endpoint
    last = ring.items[-1][0]
    assert _bsearch(last + 1, ring.items[:100], ring.items[100:]) == ring.items[0]  # wraps


def _trace(i: int, start_ns: int) -> list[dict[str, Any]]:
    """Invocation ``i``: case ``q{i % 7}`` (so a case repeats across replicas), the same
    question for every repeat of a case; every third answer ignores the tool's result."""
    case = f"q{i % 7}"
    ask = [{"role": "user", "parts": [{"type": "text", "content": f"question {case}"}]}]
    answer = "I do not know" if i % 3 == 0 else "The answer is 42"
    reply = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
    root = span(
        i,
        1,
        name="invoke_agent shop",
        start_ns=start_ns,
        **{
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.input.messages": json.dumps(ask),
            "gen_ai.output.messages": json.dumps(reply),
            "app.case": case,
        },
    )
    tool = span(
        i,
        2,
        1,
        name="execute_tool lookup",
        start_ns=start_ns,
        **{
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "lookup",
            "gen_ai.tool.call.id": f"c{i}",
            "gen_ai.tool.call.arguments": "{}",
            "gen_ai.tool.call.result": '{"answer": 42}',
        },
    )
    return [tool, root]


HOUR = 3600
PAST = window_start(time.time(), HOUR) - 3 * HOUR
"""Two windows long closed (PAST and PAST + 1 h): each closes once its traffic stops."""
N = 84


def _traces() -> list[list[dict[str, Any]]]:
    return [_trace(i, int((PAST + (i % 2) * HOUR + i) * 1e9)) for i in range(1, N + 1)]


def _route(
    ring: Ring, traces: list[list[dict[str, Any]]], batch: int = 12
) -> Iterator[tuple[str, bytes]]:
    """Batches of ``batch`` traces as an SDK sends them, each split by trace id and sent
    to the endpoints as the loadbalancing exporter does: (endpoint, OTLP/JSON body)."""
    for k in range(0, len(traces), batch):
        per: dict[str, list[dict[str, Any]]] = {}
        for spans in traces[k : k + batch]:
            tid = bytes.fromhex(spans[0]["traceId"])
            per.setdefault(ring.endpoint_for(tid), []).extend(spans)
        for endpoint, spans in per.items():
            yield endpoint, otlp_json(spans)


def _spawn(out: Path, replica: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agenteval", "monitor", "--listen", "127.0.0.1:0",
         "--out", str(out), "--idle", "0.1s", "--max-wait", "0.5s",
         "--case-id-attr", "app.case", "--replica", replica],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def _endpoint(p: subprocess.Popen[str]) -> str:
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.startswith("listening on http://127.0.0.1:"), (line, p.stderr and p.stderr.read())
    return line.split()[-1]


def _closed(window: Path) -> bool:
    try:
        return read_header(window).finished_at is not None
    except InputError:
        return False


def _trial_set(run: Path) -> set[tuple[Any, ...]]:
    """The trials of a run as a set: which trace, which case, each score (repeat numbers
    are left out: a monitor numbers a case's repeats in arrival order)."""
    return {
        (
            t.metadata["trace_id"],
            t.case_id,
            t.output,
            tuple(sorted((k, s.status, s.value) for k, s in t.scores.items())),
        )
        for t in iter_trials(run)
    }


def _summary(run: Path) -> dict[str, Any]:
    s = summarize(run).model_dump(mode="json")
    s.pop("run_id")
    return s


def _baseline(tmp_path: Path) -> Path:
    """40 good invocations of the same cases, made a run by import-traces."""
    f = tmp_path / "base.jsonl"
    lines = []
    for i in range(40):
        spans = _trace(7 * 1000 + 7 * i + 1, int(PAST * 1e9))  # i % 3 == 0 never: good
        root = spans[1]
        root["attributes"] = [
            a
            if a["key"] != "gen_ai.output.messages"
            else {
                "key": a["key"],
                "value": {
                    "stringValue": json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [{"type": "text", "content": "The answer is 42"}],
                            }
                        ]
                    )
                },
            }
            for a in root["attributes"]
        ]
        lines.append(otlp_json(spans).decode() + "\n")
    f.write_text("".join(lines))
    run = tmp_path / "baseline"
    assert main(["import-traces", str(f), "--out", str(run), "--quiet"]) == 0
    return run


def _normal(x: Any) -> Any:
    """A summary with what depends on arrival order made plain: lists of cases sorted,
    floats to 12 digits (a mean summed in another order differs in the last bit)."""
    if isinstance(x, dict):
        return {k: _normal(v) for k, v in x.items()}
    if isinstance(x, list):
        items = [_normal(v) for v in x]
        if all(isinstance(v, dict) and "case_id" in v for v in items):
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return items
    if isinstance(x, float):
        return round(x, 12)
    return x


def test_two_replicas_behind_trace_id_routing_give_what_one_monitor_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two real monitor processes sharing a DIR as replicas ``a`` and ``b``, fed through
    the router, and one monitor (in this process) fed everything. Each window read from
    the replicas' DIR is the one monitor's: the same trials (as sets), the same summary
    (up to the order cases arrived in), the same gate verdict. ~3 s of CPU: two monitor
    processes start."""
    one_dir, shared = tmp_path / "one", tmp_path / "shared"
    procs = [_spawn(shared, "a"), _spawn(shared, "b")]
    cfg = MonitorConfig(
        out=one_dir, window_s=HOUR, idle_s=0.1, max_wait_s=0.5, tick_s=0.05,
        mapping=MapOptions(case_id_attr="app.case"),
    )  # fmt: skip
    names = [window_name(PAST, HOUR), window_name(PAST + HOUR, HOUR)]
    traces = _traces()
    try:
        with served(cfg) as one:
            for k in range(0, N, 12):
                spans = [s for t in traces[k : k + 12] for s in t]
                assert post(f"{one.endpoint}/v1/traces", otlp_json(spans))[0] == 200
            urls = [_endpoint(p) for p in procs]
            ring = Ring([u.removeprefix("http://") for u in urls])
            sent: dict[str, int] = {}
            for endpoint, body in _route(ring, traces):
                assert post(f"http://{endpoint}/v1/traces", body)[0] == 200
                sent[endpoint] = sent.get(endpoint, 0) + 1
            assert len(sent) == 2  # both replicas got traffic
            for name in names:
                for shard in (one_dir / name, shared / name / "a", shared / name / "b"):
                    wait_for(lambda s=shard: _closed(s), timeout=30, what=f"{shard} closed")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(10)
    base = _baseline(tmp_path)
    for name in names:
        single, merged = one_dir / name, shared / name
        head = read_header(merged)
        assert head.settings["shards"] == ["a", "b"] and head.finished_at is not None
        assert len(list(iter_trials(merged / "a"))) and len(list(iter_trials(merged / "b")))
        assert _trial_set(merged) == _trial_set(single)
        assert len(_trial_set(single)) == N // 2
        assert _normal(_summary(merged)) == _normal(_summary(single))
        verdicts = []
        for run in (single, merged):
            capsys.readouterr()
            code = main(["gate", str(base), str(run), "--unpaired"])
            text = capsys.readouterr().out.replace(read_header(run).run_id, "RUN_ID")
            verdicts.append((code, text))
        assert verdicts[0] == verdicts[1]
        assert verdicts[0][0] == 1  # a third of the answers ignore the tool: blocked
        capsys.readouterr()
        assert main(["report", str(merged)]) == 0
        assert f"trials {N // 2}" in capsys.readouterr().out


def _send_routed(ring: Ring, urls: dict[str, str], traces: list[list[dict[str, Any]]]) -> None:
    for endpoint, body in _route(ring, traces):
        assert post(urls[endpoint] + "/v1/traces", body)[0] == 200


def test_replicas_with_separate_dirs_are_read_together_through_links_or_a_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Replicas on hosts that share no volume: each its own DIR. A directory of symbolic
    links to the shards, or the DIRs copied into one, is the window read as one run."""
    mapping = MapOptions(case_id_attr="app.case")
    dirs = {r: tmp_path / f"host-{r}" for r in ("a", "b")}
    traces = _traces()
    urls: dict[str, str] = {}
    cfgs = {
        r: MonitorConfig(
            out=d, window_s=HOUR, idle_s=0.1, max_wait_s=0.5, tick_s=0.05, mapping=mapping,
            replica=r,
        )
        for r, d in dirs.items()
    }  # fmt: skip
    with served(cfgs["a"]) as ma, served(cfgs["b"]) as mb:
        urls = {"a": ma.endpoint, "b": mb.endpoint}
        ring = Ring(["a", "b"])
        _send_routed(ring, urls, traces)
        wait_for(
            lambda: ma.monitor.metrics.trials + mb.monitor.metrics.trials == N, what="N trials"
        )
    name = window_name(PAST, HOUR)
    linked = tmp_path / "linked" / name
    linked.mkdir(parents=True)
    for r, d in dirs.items():
        (linked / r).symlink_to(d / name / r)
    merged = tmp_path / "merged"
    for d in dirs.values():  # rsync -a host-a:DIR/ host-b:DIR/ merged/
        shutil.copytree(d, merged, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".monitor"))
    want = {f"{i:032x}" for i in range(1, N + 1) if i % 2 == 0}  # PAST's traces: even i
    for run in (linked, merged / name):
        got = [t.metadata["trace_id"] for t in iter_trials(run)]
        assert sorted(got) == sorted(want)
        repeats = sorted((t.case_id, t.repeat) for t in iter_trials(run))
        assert len(set(repeats)) == len(repeats)  # renumbered on across shards
        assert summarize(run).trials == N // 2
        capsys.readouterr()
        assert main(["report", str(run)]) == 0
        assert f"trials {N // 2}" in capsys.readouterr().out
        csv = tmp_path / f"{run.parent.name}.csv"
        assert main(["export", str(run), "--format", "csv", "--out", str(csv)]) == 0
        assert len(csv.read_text().splitlines()) == 1 + N // 2  # a header and every trial


def test_a_shard_still_written_is_reported_with_a_warning_and_refused_by_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mon"
    cfg = MonitorConfig(
        out=out, window_s=HOUR, idle_s=0.1, max_wait_s=1.0, tick_s=0.05, replica="a"
    )
    now = time.time()
    with served(cfg) as m:
        body = otlp_json([s for i in range(1, 4) for s in _trace(i, int(now * 1e9))])
        assert post(m.endpoint + "/v1/traces", body)[0] == 200
        window = out / window_name(window_start(now, HOUR), HOUR)
        wait_for(lambda: len(trial_lines(window / "a")) == 3, what="3 trials")
        capsys.readouterr()
        assert main(["report", str(window)]) == 0
        err = capsys.readouterr().err
        assert "is still being written (shard a: pid " in err and "covers the 3 trials" in err
        assert main(["gate", str(window), str(window), "--unpaired"]) == 2
        assert "still being written (shard a:" in capsys.readouterr().err


def test_shards_that_disagree_are_refused_naming_the_shard(tmp_path: Path) -> None:
    window = tmp_path / "w"
    for r in ("a", "b"):
        f = tmp_path / f"{r}.jsonl"
        f.write_text(otlp_json(_trace(1, int(PAST * 1e9))).decode() + "\n")
        assert main(["import-traces", str(f), "--out", str(window / r), "--quiet"]) == 0
    head = read_header(window / "b")
    write_header(window / "b", head.model_copy(update={"scorers": head.scorers[:-1]}))
    with pytest.raises(InputError, match="another scorers than shard a") as e:
        read_header(window)
    assert str(e.value.file).endswith("b/run.json")


def test_rescore_of_a_run_of_shards_is_refused_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    window = tmp_path / "w"
    for r in ("a", "b"):
        f = tmp_path / f"{r}.jsonl"
        f.write_text(otlp_json(_trace(1, int(PAST * 1e9))).decode() + "\n")
        assert main(["import-traces", str(f), "--out", str(window / r), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["rescore", str(window), "--out", str(tmp_path / "re")]) == 2
    assert "is a run of shards (a, b); give one shard" in capsys.readouterr().err
    assert not (tmp_path / "re").exists()
    assert main(["rescore", str(window / "a"), "--out", str(tmp_path / "re")]) == 0


def test_a_dir_holds_windows_of_one_layout(tmp_path: Path) -> None:
    """A replica refuses windows written without --replica, and the other way round: a
    window must not be both a run and a directory of shards."""
    out = tmp_path / "mon"
    cfg = MonitorConfig(out=out, window_s=HOUR, idle_s=0.1, max_wait_s=0.5, tick_s=0.05)
    with served(cfg) as m:
        assert post(m.endpoint + "/v1/traces", otlp_json(_trace(1, int(PAST * 1e9))))[0] == 200
        wait_for(lambda: m.monitor.metrics.trials == 1, what="the trial")
    replica = MonitorConfig(out=out, window_s=HOUR, replica="a")
    with pytest.raises(InputError, match="written without replica"), served(replica):
        pass
    shards = tmp_path / "shards"
    with served(MonitorConfig(out=shards, window_s=HOUR, idle_s=0.1, max_wait_s=0.5,
                              tick_s=0.05, replica="a")) as m:  # fmt: skip
        assert post(m.endpoint + "/v1/traces", otlp_json(_trace(1, int(PAST * 1e9))))[0] == 200
        wait_for(lambda: m.monitor.metrics.trials == 1, what="the trial")
    unsharded = MonitorConfig(out=shards, window_s=HOUR)
    with pytest.raises(InputError, match="start the monitor with replica"), served(unsharded):
        pass


@pytest.mark.parametrize("name", ["", ".a", "a/b", "x" * 65, "a b"])
def test_a_replica_name_that_is_not_one_path_component_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code = main(["monitor", "--out", str(tmp_path / "m"), "--replica", name])
    assert code == 2
    assert "--replica must be" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
