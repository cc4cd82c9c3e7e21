"""The monitor makes the trials import-traces makes, from the same spans.

Each recorded fixture (PydanticAI OTLP/JSON lines, LangGraph protobuf, the GenAI
instrumentations with their log files) is imported with ``agenteval import-traces`` and
sent to a monitor; the trial lines (scores included) must be the same, and so must the
cases. This holds the monitor's copy of the case-id rules (:mod:`agenteval.monitor.mapping`)
equal to the importer's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from monitor_harness import all_trials, post, served, wait_for

from agenteval.cli import main
from agenteval.monitor import MapOptions, MonitorConfig

FIX = Path(__file__).parent.parent / "fixtures" / "traces"
GENAI = Path(__file__).parent.parent / "traces" / "fixtures" / "genai"


def _lines(run: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / name).read_text().splitlines() if x.strip()]


def _canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def _monitor_cases(out: Path) -> list[dict[str, Any]]:
    return [
        c for d in sorted(out.iterdir()) if not d.name.startswith(".")
        for c in _lines(d, "cases.jsonl")
    ]  # fmt: skip


CASES = [
    ("pydantic_ai", [FIX / "pydantic_ai.jsonl"], []),
    ("langgraph", [FIX / "langgraph.pb"], []),
    ("openai-v2-events", [GENAI / "openai-v2-2.4b0-events.traces.json"],
     [GENAI / "openai-v2-2.4b0-events.logs.json"]),
    ("openinference", [GENAI / "openinference-0.1.66-on.traces.json"], []),
    ("openllmetry", [GENAI / "openllmetry-0.62.4-on.traces.json"], []),
]  # fmt: skip


@pytest.mark.parametrize(("name", "traces", "logs"), CASES, ids=[c[0] for c in CASES])
def test_same_trials_as_import_traces(
    tmp_path: Path, name: str, traces: list[Path], logs: list[Path]
) -> None:
    run = tmp_path / "imported"
    assert main(["import-traces", *map(str, traces + logs), "--out", str(run), "--quiet"]) == 0
    out = tmp_path / "mon"
    with served(MonitorConfig(out=out, idle_s=0.2, max_wait_s=1.0, tick_s=0.05)) as m:
        for f in logs:
            assert post(m.endpoint + "/v1/logs", f.read_bytes())[0] == 200
        for f in traces:
            if f.suffix == ".pb":
                bodies, ctype = [f.read_bytes()], "application/x-protobuf"
            else:
                bodies = [x.encode() for x in f.read_text().splitlines() if x.strip()]
                ctype = "application/json"
            for b in bodies:
                assert post(m.endpoint + "/v1/traces", b, ctype)[0] == 200
        want = _lines(run, "trials.jsonl")
        assert want
        wait_for(lambda: len(all_trials(out)) >= len(want), what=f"{len(want)} trials")
    got = all_trials(out)
    for t in got + want:
        t.pop("repeat")  # numbered per run: both 0 here, as every case id is a hash
    assert _canon(got) == _canon(want)
    assert _canon(_monitor_cases(out)) == _canon(_lines(run, "cases.jsonl"))


def test_case_id_attr_and_where_as_import_traces(tmp_path: Path) -> None:
    """--case-id-attr names the case (repeats numbered in the window), --where filters."""
    from monitor_harness import agent_trace, otlp_json

    out = tmp_path / "mon"
    opts = MapOptions(case_id_attr="app.case", where=(("app.env", "prod"),))
    cfg = MonitorConfig(out=out, idle_s=0.2, max_wait_s=1.0, tick_s=0.05, mapping=opts)
    with served(cfg) as m:
        sent = [("a", "prod"), ("a", "prod"), ("b", "dev"), ("b", "prod")]
        for i, (case, env) in enumerate(sent):
            body = otlp_json(agent_trace(i + 1, **{"app.case": case, "app.env": env}))
            assert post(m.endpoint + "/v1/traces", body)[0] == 200
        wait_for(lambda: len(all_trials(out)) == 3, what="3 trials")
        wait_for(lambda: m.monitor.metrics.traces_dropped.get("where") == 1, what="1 dropped")
    got = sorted((t["case_id"], t["repeat"]) for t in all_trials(out))
    assert got == [("a", 0), ("a", 1), ("b", 0)]
    assert sorted(c["id"] for c in _monitor_cases(out)) == ["a", "b"]


def test_dataset_join_scores_against_the_dataset_case(tmp_path: Path) -> None:
    """--dataset/--join-attr: a trace naming a dataset case is scored against it (its
    expected answer); one naming none keeps its recorded case."""
    from monitor_harness import agent_trace, otlp_json

    from agenteval.cases.case import Case

    out = tmp_path / "mon"
    dataset = {"q1": Case(id="q1", input="What is the answer?", expected="42")}
    opts = MapOptions(dataset=dataset, join_attr="app.case")
    cfg = MonitorConfig(out=out, idle_s=0.2, max_wait_s=1.0, tick_s=0.05, mapping=opts)
    with served(cfg) as m:
        for i, (case, answer) in enumerate([("q1", "42"), ("q1", "41"), ("zz", "42")]):
            body = otlp_json(agent_trace(i + 1, answer, **{"app.case": case}))
            assert post(m.endpoint + "/v1/traces", body)[0] == 200
        wait_for(lambda: len(all_trials(out)) == 3, what="3 trials")
    got = sorted(
        (t["case_id"], t["repeat"], t["scores"]["exact_match"]["status"]) for t in all_trials(out)
    )
    assert [g[:2] for g in got[:2]] == [("q1", 0), ("q1", 1)]  # repeats of the joined case
    assert sorted(g[2] for g in got[:2]) == ["failed", "passed"]  # "42" passes, "41" fails
    assert got[2][0].startswith("t-") and got[2][2] == "not_applicable"
    cases = {c["id"]: c for c in _monitor_cases(out)}
    assert cases["q1"]["expected"] == "42"
