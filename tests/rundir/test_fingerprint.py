from __future__ import annotations

from typing import Any

from agenteval.rundir import DatasetRef, RunHeader
from agenteval.rundir.fingerprint import describe_differences, differences, digest, fingerprint


def _header(**over: Any) -> RunHeader:
    judge = {"model": "j", "rubrics": [{"name": "correctness"}], "temperature": 0.0}
    judge.update(over.pop("judge", {}))
    agent = {"kind": "openai_chat", "model": "m", "prompt_template": "Q: {input}", "judge": judge}
    agent.update(over.pop("agent", {}))
    settings = {"repeats": 2, "limit": None, "concurrency": 8, "timeout_s": None}
    settings.update(over.pop("settings", {}))
    return RunHeader(agent=agent, settings=settings, dataset=DatasetRef(sha256="abc", cases=3))


def test_how_the_run_is_worked_is_not_part_of_the_fingerprint() -> None:
    a = _header()
    b = _header(
        settings={"concurrency": 1, "timeout_s": 30, "max_retries": 0, "retry_base_s": 2},
        judge={"concurrency": 2, "max_retries": 9, "cache": "/elsewhere"},
    )
    b.prices = {"m": {"input": 1, "output": 2}}
    assert differences(a, b) == [] and digest(a) == digest(b)


def test_what_the_run_measures_is() -> None:
    a = _header()
    b = _header(
        settings={"repeats": 3, "limit": 2},
        agent={"model": "m2", "prompt_template": "other {input}"},
        judge={"temperature": 0.7},
    )
    diffs = differences(a, b)
    assert [k for k, _, _ in diffs] == [
        "agent.model", "agent.prompt_template", "judge.temperature", "repeats", "limit"
    ]  # fmt: skip
    assert digest(a) != digest(b)
    text = describe_differences(diffs)
    assert text.startswith("the run was made with agent.model=m, agent.prompt_template=sha256:")
    assert "; now agent.model=m2, agent.prompt_template=sha256:" in text
    assert "repeats=2, limit=none; now" in text and "repeats=3, limit=2" in text
    assert "Q: {input}" not in text  # a template is shown by its hash
    assert fingerprint(a)["dataset"] == "abc"


def test_the_same_run_spelled_differently_has_one_fingerprint() -> None:
    """Attack: reordered --scorer options, or a --limit at or above the number of cases,
    were refused on resume though they define the same run."""
    s1 = {"name": "s1", "ref": "m:s1"}
    s2 = {"name": "s2", "ref": "m:s2", "threshold": 0.5, "kind": "graded"}
    a = _header(settings={"limit": 3})
    b = _header(settings={"limit": None})
    a.scorers = RunHeader.model_validate({"scorers": [s1, s2]}).scorers
    b.scorers = RunHeader.model_validate({"scorers": [s2, s1]}).scorers
    assert differences(a, b) == [] and digest(a) == digest(b)  # 3 cases: limit 3 = none
    c = _header(settings={"limit": 2})
    c.scorers = RunHeader.model_validate({"scorers": [s1]}).scorers
    assert differences(a, c) == [("scorers", "s2", "none"), ("limit", "none", "2")]
    d = _header()
    d.scorers = RunHeader.model_validate({"scorers": [s1, {**s2, "threshold": 0.7}]}).scorers
    assert differences(a, d) == [("scorers.s2.threshold", "0.5", "0.7")]
