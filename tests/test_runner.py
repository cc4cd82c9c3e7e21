from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.case import Case
from agenteval.rundir import RunHeader, RunWriter, iter_trials
from agenteval.runner import RunSettings, run_trials, work_items
from agenteval.score import scorer
from agenteval.scoring import Scorers
from agenteval.trial import Retry, ToolCall, Trial


class ScriptedAgent:
    """A real in-process agent whose behaviour depends on the case id."""

    def __init__(self) -> None:
        self.calls = 0
        self.peak = 0
        self._active = 0

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted"}

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
        self.calls += 1
        self._active += 1
        self.peak = max(self.peak, self._active)
        try:
            await asyncio.sleep(0.01)
            if case.id == "slow":
                await asyncio.sleep(5)
            if case.id == "boom":
                raise RuntimeError("agent crashed")
            if case.id == "limited":
                rec.retries.append(Retry(reason="rate_limit", wait_s=0.0))
                raise AgentFailure("rate_limited", "HTTP 429 after 1 retry")
            rec.add_usage("m", 10, 2)
            rec.add_usage("m", 5, 1)
            return AgentOutput(
                output=f"answer {case.id}/{repeat}",
                tool_calls=[ToolCall(name="t", arguments={}, result="r")],
            )
        finally:
            self._active -= 1


@scorer("answered")
def answered(case: Case, trial: Trial) -> bool | None:
    return None if trial.output is None else True


def _run(tmp_path: Path, ids: list[str], **kw: Any) -> tuple[ScriptedAgent, list[Any]]:
    agent = ScriptedAgent()
    cases = [Case(id=i, input="q") for i in ids]
    settings = RunSettings(**kw)
    run = tmp_path / "run"
    with RunWriter.create(run, RunHeader()) as w:
        asyncio.run(
            run_trials(
                agent,
                work_items(cases, settings.repeats),
                settings=settings,
                scorers=Scorers([answered]),
                writer=w,
            )
        )
    return agent, list(iter_trials(run))


def test_every_failure_is_recorded_with_its_cause_and_never_stops_the_run(tmp_path: Path) -> None:
    _, trials = _run(
        tmp_path, ["ok", "slow", "boom", "limited", "ok2"], timeout_s=0.5, concurrency=2
    )
    by_id = {t.case_id: t for t in trials}
    assert set(by_id) == {"ok", "slow", "boom", "limited", "ok2"}
    assert by_id["ok"].failure is None and by_id["ok"].output == "answer ok/0"
    assert by_id["slow"].failure.cause == "timeout"
    assert by_id["boom"].failure.cause == "agent_error"
    assert "agent crashed" in by_id["boom"].failure.message
    assert by_id["limited"].failure.cause == "rate_limited"
    assert by_id["limited"].retries[0].reason == "rate_limit"
    assert by_id["slow"].output is None
    assert by_id["slow"].scores["answered"].value is None
    assert by_id["ok"].usage[0].input_tokens == 15
    assert by_id["ok"].latency.total_s is not None and by_id["ok"].latency.total_s >= 0.01


def test_concurrency_is_bounded_and_repeats_are_all_run(tmp_path: Path) -> None:
    agent, trials = _run(tmp_path, [f"c{i}" for i in range(20)], concurrency=4, repeats=3)
    assert agent.peak <= 4
    assert sorted(t.key for t in trials) == sorted(
        (f"c{i}", r) for i in range(20) for r in range(3)
    )


def test_work_items_skips_what_is_done() -> None:
    cases = [Case(id="a", input="q"), Case(id="b", input="q")]
    items = [(c.id, r) for c, r in work_items(cases, 2, {("a", 1), ("b", 0)})]
    assert items == [("a", 0), ("b", 1)]
