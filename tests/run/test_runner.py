from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agenteval.agents.base import AgentFailure, AgentOutput, Recorder
from agenteval.cases.case import Case
from agenteval.run.runner import RunSettings, run_trials, work_items
from agenteval.rundir import RunHeader, RunWriter, iter_trials
from agenteval.scoring.apply import Scorers
from agenteval.scoring.spec import scorer
from agenteval.trials.trial import Retry, ToolCall, Trial


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


def test_recordable_repairs_lone_surrogates_and_counts_them() -> None:
    from agenteval.rundir.recordable import SURROGATES_KEY, recordable

    clean = Trial(case_id="a", output="fine 😀", metadata={"k": [1, "v"]})
    same, failed = recordable(clean)
    assert same == clean and not failed
    broken = Trial(
        case_id="a",
        output="half \ud83d",
        tool_calls=[ToolCall(name="t", arguments={"\udc00": ["\ude00"]}, result="ok")],
        metadata={"nested": {"deep": ("\ud83d",)}},
    )
    fixed, failed = recordable(broken)
    assert not failed
    assert fixed.output == "half \ufffd"
    assert fixed.tool_calls[0].arguments == {"\ufffd": ["\ufffd"]}
    assert fixed.metadata == {"nested": {"deep": ["\ufffd"]}, SURROGATES_KEY: 4}
    assert fixed.model_dump_json()  # writable now


def test_recordable_turns_an_unencodable_value_into_an_agent_error_naming_it() -> None:
    from agenteval.rundir.recordable import recordable

    loop: dict[str, object] = {}
    loop["self"] = loop
    for metadata, where in (
        ({"a": [0, {"b": object()}]}, "metadata.a.1.b: a value of type object"),
        ({"s": {1, 2}}, None),  # a set is encodable (as a list): kept
        ({"loop": loop}, "nested too deeply (or circular)"),
    ):
        trial = Trial(
            case_id="a",
            output="x",
            metadata=metadata,
            usage=[{"model": "m", "input_tokens": 3}],
            retries=[Retry(reason="timeout", wait_s=0.1)],
        )
        out, failed = recordable(trial)
        if where is None:
            assert not failed and out.metadata == {"s": [1, 2]}
            continue
        assert failed and out.failure is not None
        assert out.failure.cause == "agent_error" and where in out.failure.message
        assert out.output is None and out.metadata == {}
        assert out.usage[0].input_tokens == 3 and len(out.retries) == 1  # observations kept
        assert out.model_dump_json()


def test_run_trials_never_stops_for_an_unrecordable_trial(tmp_path: Path) -> None:
    class Odd(ScriptedAgent):
        async def run(self, case: Case, repeat: int, rec: Recorder) -> AgentOutput:
            if case.id == "odd":
                return AgentOutput(output="x", metadata={"o": object()})
            if case.id == "tools":
                return AgentOutput(output="x", tools="not a list")  # type: ignore[arg-type]
            if case.id == "exit":
                raise SystemExit(3)
            return AgentOutput(output="ok \ud83d")

    cases = [Case(id=i, input="q") for i in ("odd", "fine", "tools", "exit")]
    with RunWriter.create(tmp_path / "run", RunHeader()) as w:
        prog = asyncio.run(
            run_trials(
                Odd(),
                work_items(cases, 1),
                settings=RunSettings(concurrency=2),
                scorers=Scorers([answered]),
                writer=w,
            )
        )
    assert prog.done == 4 and prog.failed == 3
    by_id = {t.case_id: t for t in iter_trials(tmp_path / "run")}
    assert by_id["fine"].output == "ok \ufffd"
    assert by_id["fine"].scores["answered"].value == 1.0
    assert by_id["odd"].failure is not None and "metadata.o" in by_id["odd"].failure.message
    assert by_id["odd"].scores["answered"].value is None  # scored as the trial written
    assert by_id["tools"].failure is not None and "tools" in by_id["tools"].failure.message
    assert by_id["exit"].failure is not None
    assert by_id["exit"].failure.message == "the agent raised SystemExit(3)"


def test_a_write_error_stops_the_run_and_appends_nothing_after_it(tmp_path: Path) -> None:
    from agenteval.run.runner import RunControl

    cases = [Case(id=f"c{i}", input="q") for i in range(20)]
    ctl = RunControl()
    w = RunWriter.create(tmp_path / "run", RunHeader())
    w._fh.close()
    w._fh = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115 - every write: ENOSPC
    agent = ScriptedAgent()
    asyncio.run(
        run_trials(
            agent,
            work_items(cases, 1),
            settings=RunSettings(concurrency=2),
            scorers=Scorers([answered]),
            writer=w,
            control=ctl,
        )
    )
    assert ctl.io_error is not None and ctl.stop
    assert "No space left on device" in str(ctl.io_error)
    assert ctl.io_error.exit_code == 5
    assert w.written == 0
    assert agent.calls <= 3  # stopped starting trials at the first error (2 were in flight)


class _SlowJudge:
    """A judge that takes a long time; the runner must be able to cancel it."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def score(self, case: Case, trial: Trial) -> dict[str, Any]:
        self.started.set()
        await asyncio.sleep(30)
        raise AssertionError("not cancelled")

    def inconclusive(self, reason: str) -> dict[str, Any]:
        from agenteval.scoring.score import Score

        return {"judge_x": Score(None, f"inconclusive: {reason}", status="inconclusive")}


def test_cancelling_the_run_records_judge_calls_in_flight_as_inconclusive(
    tmp_path: Path,
) -> None:
    from agenteval.run.runner import RunControl

    cases = [Case(id=f"c{i}", input="q") for i in range(10)]
    ctl = RunControl()
    judge = _SlowJudge()

    async def go(w: RunWriter) -> None:
        task = asyncio.ensure_future(
            run_trials(
                ScriptedAgent(),
                work_items(cases, 1),
                settings=RunSettings(concurrency=3),
                scorers=Scorers([answered]),
                writer=w,
                judge=judge,
                control=ctl,
            )
        )
        await judge.started.wait()
        await asyncio.sleep(0.05)  # every worker is in a judge call now
        ctl.cancel()
        await asyncio.wait_for(task, 5)

    with RunWriter.create(tmp_path / "run", RunHeader()) as w:
        asyncio.run(go(w))
    trials = list(iter_trials(tmp_path / "run"))
    assert len(trials) == 3
    for t in trials:
        assert t.output is not None and t.failure is None
        assert t.scores["judge_x"].status == "inconclusive"
        assert t.scores["judge_x"].reason.startswith("inconclusive: cancelled by an interrupt")


def test_failure_problem_says_why_a_run_exits_4() -> None:
    from agenteval.run.runner import failure_problem

    causes = {"failures": {"by_cause": {"timeout": {"count": 1}, "connection": {"count": 3}}}}
    none_answered = {"trials": 4, "answered": 0, "failed": 4, **causes}
    assert failure_problem(none_answered, None) == (
        "no trial got an answer: 4 of 4 trials failed (connection 3, timeout 1)"
    )
    some = {"trials": 10, "answered": 6, "failed": 4, **causes}
    assert failure_problem(some, None) is None
    assert failure_problem(some, 0.4) is None  # not above
    assert failure_problem(some, 0.39) == (
        "4 of 10 trials failed (40%) (connection 3, timeout 1), above max_failure_rate 0.39"
    )
    assert failure_problem(some, 0.39, name="--max-failure-rate") == (
        "4 of 10 trials failed (40%) (connection 3, timeout 1), above --max-failure-rate 0.39"
    )
    assert failure_problem({"trials": 0}, 0.0) is None
