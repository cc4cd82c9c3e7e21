"""Builders for real run directories (written with RunWriter + write_cases)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agenteval.cases.case import Case
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases
from agenteval.scoring.score import GRADED_THRESHOLD, Score
from agenteval.trials.trial import Trial

TrialSpec = tuple[Trial, dict[str, Score]]


def write_run(
    run_dir: Path,
    cases: Iterable[Case],
    trials: Iterable[TrialSpec],
    *,
    sha256: str = "sha-dataset-1",
    scorers: list[str] | None = None,
    prices: dict[str, Any] | None = None,
    agent: dict[str, Any] | None = None,
) -> Path:
    """Write a complete run directory and return it."""
    cases = list(cases)
    header = RunHeader(
        dataset=DatasetRef(path="cases.jsonl", sha256=sha256, cases=len(cases)),
        scorers=scorers or [],
        prices=prices,
        agent=agent,
    )
    with RunWriter.create(run_dir, header) as w:
        write_cases(run_dir, cases)
        for trial, scores in trials:
            w.append(trial, scores)
    return run_dir


def ok(reason: str = "ok") -> Score:
    return Score(1.0, reason)


def bad(reason: str = "wrong") -> Score:
    return Score(0.0, reason)


def graded(v: float, reason: str = "graded") -> Score:
    return Score(v, reason, threshold=GRADED_THRESHOLD)


XSS_PAYLOADS = [
    "<script>window.__pwned=1;alert(1)</script>",
    '<img src=x onerror="window.__pwned=2;alert(2)">',
    '<svg onload="window.__pwned=3"></svg>',
    '"><script>window.__pwned=4</script>',
    "'><img src=x onerror=window.__pwned=5>",
    '<iframe src="javascript:window.top.__pwned=6"></iframe>',
    '<a href="javascript:window.__pwned=7" id=xss-link>click</a>',
    "</pre></td></tr></table><script>window.__pwned=8</script>",
    "<body onload=window.__pwned=9>",
    '<details open ontoggle="window.__pwned=10">',
    "{{ 7*7 }}<style>*{display:none}</style>",
    "</script><script>window.__pwned=12</script>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=13>",
    "<input autofocus onfocus=window.__pwned=14>",
]


def sample_cases(*, xss: bool = False) -> list[Case]:
    """Cases with tags, expected answers, inputs; with xss=True, payloads in ids and tags."""
    cases = [
        Case(id="c1", input="What is 2+2?", expected="4", tags=["math", "easy"]),
        Case(id="c2", input="Capital of France?", expected="Paris", tags=["geo"]),
        Case(
            id="c3",
            input=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "Q3"}],
            expected="x",
            tags=["geo", "hard"],
            relevant_docs=["d1"],
        ),
        Case(id="c4", input="Q4", expected="y", tags=["math"], relevant_docs=["d1"]),
    ]
    if xss:
        for i, p in enumerate(XSS_PAYLOADS):
            cases.append(Case(id=f"x{i}{p}", input=p, expected=p, tags=[p, "xss"]))
    return cases


def sample_trials(*, xss: bool = False) -> list[TrialSpec]:
    """Trials exercising every summary section (see the summary tests for the numbers)."""
    from agenteval.trials.trial import Failure, Latency, Retry, ToolCall, Usage

    judge_usage = [Usage(model="gpt-4o-mini", input_tokens=1000, output_tokens=100)]
    out: list[TrialSpec] = [
        (
            Trial(
                case_id="c1",
                output="4",
                tool_calls=[ToolCall(name="calc", arguments={"e": "2+2"}, result="4")],
                usage=[Usage(model="gpt-4o", input_tokens=1000, output_tokens=100)],
                latency=Latency(total_s=1.0, active_s=0.5),
            ),
            {
                "exact_match": ok("equal"),
                "retrieval_recall": Score(None, "case has no relevant_docs"),
                "judge_correctness": Score(1.0, "GRADE: C", usage=judge_usage),
            },
        ),
        (
            Trial(
                case_id="c2",
                output="Lyon",
                usage=[Usage(model="gpt-4o", input_tokens=2000, output_tokens=200)],
                latency=Latency(total_s=3.0, active_s=1.0),
                retries=[
                    Retry(reason="rate_limit", wait_s=1.5),
                    Retry(reason="timeout", wait_s=0.5),
                ],
            ),
            {
                "exact_match": bad("'Lyon' != 'Paris'"),
                "retrieval_recall": Score(None, "case has no relevant_docs"),
                "judge_correctness": Score(
                    None, "judge unparseable", usage=judge_usage, status="inconclusive"
                ),
            },
        ),
        (
            Trial(
                case_id="c3",
                output="z",
                tool_calls=[ToolCall(name="search", arguments={"q": "x"}, result="d2 text")],
                usage=[Usage(model="gpt-4o", input_tokens=1000, output_tokens=100)],
                latency=Latency(total_s=2.0, active_s=2.0),
            ),
            {
                "exact_match": bad("'z' != 'x'"),
                "retrieval_recall": bad("found 0 of 1"),
                "judge_correctness": Score(None, "boom", error="scorer raised ValueError: boom"),
            },
        ),
        (
            Trial(
                case_id="c4",
                output=None,
                failure=Failure(cause="timeout", message="no answer within 30s"),
                latency=Latency(total_s=30.0, active_s=30.0),
            ),
            {
                "exact_match": bad("no answer"),
                "retrieval_recall": ok("found 1 of 1"),
            },
        ),
    ]
    if xss:
        for i, p in enumerate(XSS_PAYLOADS):
            out.append(
                (
                    Trial(
                        case_id=f"x{i}{p}",
                        output=p,
                        tool_calls=[
                            ToolCall(name=p, arguments={"q": p}, result=p, error=p),
                        ],
                        latency=Latency(total_s=0.1 * (i + 1), active_s=0.05 * (i + 1)),
                        failure=Failure(cause=p, message=p) if i % 3 == 0 else None,
                    ),
                    {"exact_match": bad(p), p: Score(0.5, p, threshold=0.5)},
                )
            )
    return out
