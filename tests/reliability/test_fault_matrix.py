"""Fault matrix: > 2,000 trials against a fake endpoint that injects every kind of fault.

Two runs of the real ``agenteval run`` command:

- *marker matrix*: a seeded schedule assigns each case a fault (or none) and, for a
  transient fault, how many requests it hits (``[[fault:KIND:N]]``); permanent faults hit
  every request. Every (case, repeat) must have exactly one trial; a transient fault must
  end in success with exactly N retries of the right reason over the case's repeats; a
  permanent fault must end in a failure with the right cause. Faults that corrupt only
  the content (empty answer, invalid tool-call JSON) are not infrastructure failures: the
  trial is kept as observed (empty output / the raw argument string) for the scorers.
- *random schedule*: the server draws faults per request from ``FakeConfig.fault_rates``
  with a fixed seed; the retries recorded per reason (plus the failures) must equal what
  the server injected, request for request.

In both, the summary in ``run.json`` must equal a recount from ``trials.jsonl``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from reliability_support import ThreadedFake, read_trials, record_figures, run_cli, write_jsonl

from agenteval.testing.fake_openai import FakeConfig

pytestmark = pytest.mark.reliability

SEED = 20261130
MAX_RETRIES = 3
REQUEST_TIMEOUT = "1.5"

# kind -> retry reason (transient: retried, then success)
TRANSIENT = {
    "429": "rate_limit",
    "429_noretry": "rate_limit",
    "500": "server_error",
    "502": "server_error",
    "503": "server_error",
    "hang": "timeout",
    "reset_before_headers": "connection",
    "reset_after_headers": "connection",
}
# kind -> failure cause (permanent: every request hit)
PERMANENT = {
    "400": "http_error",
    "404": "http_error",
    "truncated": "malformed_response",
    "not_json": "malformed_response",
    "no_choices": "malformed_response",
    "429": "rate_limited",
    "503": "server_error",
    "reset_before_headers": "connection",
    "hang": "timeout",
}
CONTENT = ("empty_content", "bad_tool_json")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "look a thing up",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]


def _schedule(n_cases: int, rng: random.Random) -> list[tuple[str, str | None, int | None]]:
    """(mode, kind, count) per case; mode is none / transient / permanent / content."""
    plan: list[tuple[str, str | None, int | None]] = []
    for _ in range(n_cases):
        r = rng.random()
        if r < 0.30:
            plan.append(("none", None, None))
        elif r < 0.75:
            kind = rng.choice(sorted(TRANSIENT))
            if kind == "hang" and rng.random() < 0.6:  # keep slow hangs rare
                kind = "500"
            plan.append(("transient", kind, rng.randint(1, MAX_RETRIES)))
        elif r < 0.93:
            kind = rng.choice(sorted(PERMANENT))
            if kind in ("hang", "reset_before_headers", "429", "503") and rng.random() < 0.7:
                kind = "400"  # the retried permanent faults cost 4 requests each
            if kind == "hang" and rng.random() < 0.5:
                kind = "not_json"
            plan.append(("permanent", kind, None))
        else:
            plan.append(("content", rng.choice(CONTENT), None))
    return plan


def _recount(trials: list[dict[str, Any]]) -> dict[str, Any]:
    retries: Counter[str] = Counter()
    causes: Counter[str] = Counter()
    for t in trials:
        retries.update(r["reason"] for r in t["retries"])
        if t["failure"] is not None:
            causes[t["failure"]["cause"]] += 1
    return {
        "trials": len(trials),
        "failed": sum(causes.values()),
        "answered": sum(1 for t in trials if t["failure"] is None),
        "retries": dict(retries),
        "causes": dict(causes),
    }


def _summary_counts(run_dir: Path) -> dict[str, Any]:
    s = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["summary"]
    return {
        "trials": s["trials"],
        "failed": s["failed"],
        "answered": s["answered"],
        "retries": {k: v["count"] for k, v in s["retries"]["by_reason"].items()},
        "causes": {k: v["count"] for k, v in s["failures"]["by_cause"].items()},
    }


def _run(dataset: Path, url: str, out: Path, *extra: str) -> None:
    proc = run_cli(
        "run",
        dataset,
        "--endpoint",
        url,
        "--model",
        "m",
        "--out",
        out,
        "--concurrency",
        "24",
        "--request-timeout",
        REQUEST_TIMEOUT,
        "--retry-base",
        "0.001",
        "--quiet",
        *extra,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_marker_matrix(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    n_cases, repeats = 650, 2
    plan = _schedule(n_cases, rng)
    rows = []
    for i, (_mode, kind, n) in enumerate(plan):
        marker = "" if kind is None else f" [[fault:{kind}{'' if n is None else f':{n}'}]]"
        row: dict[str, Any] = {"id": f"c{i:04d}", "input": f"question {i}{marker}"}
        if kind == "bad_tool_json":
            row["tools"] = TOOLS
        rows.append(row)
    dataset = write_jsonl(tmp_path / "cases.jsonl", rows)
    out = tmp_path / "run"
    with ThreadedFake(FakeConfig(retry_after_s=0.01)) as srv:
        _run(
            dataset, srv.base_url, out, "--repeats", str(repeats), "--max-retries", str(MAX_RETRIES)
        )
        served = srv.counts()
    trials = read_trials(out)

    keys = Counter((t["case_id"], t["repeat"]) for t in trials)
    expected_keys = {(r["id"], k) for r in rows for k in range(repeats)}
    assert set(keys) == expected_keys
    assert all(c == 1 for c in keys.values()), "a (case, repeat) has more than one trial"

    by_case: dict[str, list[dict[str, Any]]] = {}
    for t in trials:
        by_case.setdefault(t["case_id"], []).append(t)
    wrong: list[str] = []
    injected: Counter[str] = Counter()
    for row, (mode, kind, n) in zip(rows, plan, strict=True):
        ts = by_case[row["id"]]
        reasons = [r["reason"] for t in ts for r in t["retries"]]
        if mode == "none":
            ok = all(t["failure"] is None and t["output"] for t in ts) and not reasons
        elif mode == "transient":
            assert kind is not None and n is not None
            injected[kind] += n
            ok = (
                all(t["failure"] is None and t["output"].startswith("echo:") for t in ts)
                and reasons == [TRANSIENT[kind]] * n
            )
        elif mode == "permanent":
            assert kind is not None
            cause = PERMANENT[kind]
            retried = cause in ("rate_limited", "server_error", "connection", "timeout")
            injected[kind] += repeats * (MAX_RETRIES + 1 if retried else 1)
            ok = all(
                t["failure"] is not None and t["failure"]["cause"] == cause and t["output"] is None
                for t in ts
            ) and len(reasons) == (repeats * MAX_RETRIES if retried else 0)
        else:
            assert kind is not None
            injected[kind] += repeats
            if kind == "empty_content":
                ok = all(t["failure"] is None and t["output"] == "" for t in ts)
            else:
                ok = all(
                    t["failure"] is None
                    and isinstance(t["tool_calls"][-1]["arguments"], str)
                    and t["scores"]["tool_arguments_valid"]["value"] == 0.0
                    for t in ts
                )
        if not ok:
            wrong.append(f"{row['id']} {mode} {kind}:{n} -> {json.dumps(ts)[:400]}")
    assert not wrong, f"{len(wrong)} cases ended wrongly, e.g. {wrong[:3]}"
    for kind, count in injected.items():
        assert served[kind] == count, (kind, served[kind], count)

    recount = _recount(trials)
    assert _summary_counts(out) == recount
    record_figures(
        "fault_matrix_markers",
        {
            "trials": len(trials),
            "cases": n_cases,
            "repeats": repeats,
            "faults_injected": dict(sorted(injected.items())),
            "retries_by_reason": recount["retries"],
            "failures_by_cause": recount["causes"],
        },
    )


RATES = {
    "429": 0.03,
    "429_noretry": 0.03,
    "500": 0.03,
    "502": 0.03,
    "503": 0.03,
    "reset_before_headers": 0.03,
    "reset_after_headers": 0.03,
}


def test_seeded_random_schedule(tmp_path: Path) -> None:
    n_cases = 700
    dataset = write_jsonl(
        tmp_path / "cases.jsonl", ({"id": f"r{i}", "input": f"ask {i}"} for i in range(n_cases))
    )
    out = tmp_path / "run"
    config = FakeConfig(fault_rates=RATES, seed=SEED, retry_after_s=0.01)
    with ThreadedFake(config) as srv:
        _run(dataset, srv.base_url, out, "--max-retries", "8")
        served = srv.counts()
    trials = read_trials(out)
    assert sorted(t["case_id"] for t in trials) == sorted(f"r{i}" for i in range(n_cases))
    assert all(t["failure"] is None and t["output"].startswith("echo: ask") for t in trials)

    recount = _recount(trials)
    injected_by_reason: Counter[str] = Counter()
    for kind in RATES:
        injected_by_reason[TRANSIENT[kind]] += served[kind]
    assert recount["retries"] == dict(injected_by_reason)
    assert served["ok"] == n_cases
    assert _summary_counts(out) == recount
    record_figures(
        "fault_matrix_random",
        {
            "trials": len(trials),
            "requests": sum(served.values()),
            "faults_injected": {k: served[k] for k in sorted(RATES)},
            "retries_by_reason": recount["retries"],
            "failures_by_cause": recount["causes"],
        },
    )
