"""agenteval.frames: every column's exact dtype, the values, format 1 runs, bad runs, and
the one-line error when the extra is missing."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

from agenteval import frames  # noqa: E402
from agenteval.cases.case import Case  # noqa: E402
from agenteval.errors import InputError  # noqa: E402
from agenteval.rundir import DatasetRef, RunHeader, RunWriter, write_cases  # noqa: E402
from agenteval.scoring.score import Score  # noqa: E402
from agenteval.trials.trial import Failure, Latency, Retry, ToolCall, Trial, Usage  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "runs_v0_1"
T0 = "2026-01-02T03:04:05+00:00"


def _run(d: Path) -> Path:
    header = RunHeader(
        run_id="r1",
        dataset=DatasetRef(path="cases.jsonl", sha256="sha", cases=2),
        agent={"agent": "pkg:Agent", "model": "gpt-4o"},
        scorers=["exact_match", "judge_x"],
    )
    with RunWriter.create(d, header) as w:
        write_cases(d, [Case(id="c1", input="q", tags=["math", "easy"]), Case(id="c2", input="q")])
        w.append(
            Trial(
                case_id="c1",
                output="4",
                tool_calls=[
                    ToolCall(
                        name="calc",
                        arguments={"e": "2+2"},
                        result={"v": 4},
                        started_at=T0,
                        duration_s=0.5,
                        id="k1",
                    ),
                    ToolCall(name="calc", arguments="{bad", error="boom"),
                ],
                usage=[Usage(model="gpt-4o", input_tokens=10, output_tokens=2)],
                latency=Latency(total_s=1.5, active_s=1.0),
                retries=[Retry(reason="timeout", wait_s=0.25)],
                started_at=T0,
            ),
            {
                "exact_match": Score(1.0, "equal"),
                "judge_x": Score(
                    0.0, "GRADE: I", usage=[Usage(model="m", input_tokens=7, output_tokens=3)]
                ),
            },
        )
        w.append(
            Trial(case_id="c2", output=None, failure=Failure(cause="timeout", message="slow")),
            {"exact_match": Score(None, "no answer", status="not_applicable")},
        )
    return d


def _dtypes_are(df: object, spec: dict[str, str]) -> None:
    for col, dtype in spec.items():
        got = df[col].dtype  # type: ignore[index]
        assert got == dtype, (col, got, dtype)  # "string[pyarrow]" != "string[python]" etc.
        assert type(got) is type(pd.api.types.pandas_dtype(dtype)), (col, got, dtype)


def test_trials_df_columns_dtypes_and_values(tmp_path: Path) -> None:
    df = frames.trials_df(_run(tmp_path / "r"))
    assert list(df.columns) == [
        *frames.TRIALS_COLUMNS,
        "score.exact_match",
        "score.judge_x",
        "status.exact_match",
        "status.judge_x",
    ]
    _dtypes_are(df, frames.TRIALS_COLUMNS)
    _dtypes_are(df, {"score.exact_match": "float64", "status.judge_x": "category"})
    a, b = df.iloc[0], df.iloc[1]
    assert (a.case_id, a["repeat"], a.answered, a.output) == ("c1", 0, True, "4")
    assert (a.latency_s, a.active_s, a.input_tokens, a.output_tokens) == (1.5, 1.0, 10, 2)
    assert (a.model, a.tool_calls, a.tool_errors, a.retries, a.retry_wait_s) == (
        "gpt-4o",
        2,
        1,
        1,
        0.25,
    )
    assert a.started_at == pd.Timestamp(T0) and a.tags == ("math", "easy")
    assert a["score.judge_x"] == 0.0 and a["status.judge_x"] == "failed"
    assert b.output is pd.NA and b.failure_cause == "timeout" and b.failure_message == "slow"
    assert math.isnan(b["score.exact_match"]) and b["status.exact_match"] == "not_applicable"
    assert b["status.judge_x"] is not None and pd.isna(b["status.judge_x"]) and b.tags == ()


def test_scores_df(tmp_path: Path) -> None:
    df = frames.scores_df(_run(tmp_path / "r"))
    assert list(df.columns) == list(frames.SCORES_COLUMNS)
    _dtypes_are(df, frames.SCORES_COLUMNS)
    assert len(df) == 3
    j = df[df.scorer == "judge_x"].iloc[0]
    assert (j.status, j.value, j.passed, j.reason) == ("failed", 0.0, False, "GRADE: I")
    assert (j.judge_input_tokens, j.judge_output_tokens) == (7, 3)
    na = df[(df.case_id == "c2")].iloc[0]
    assert na.passed is pd.NA and math.isnan(na.value) and na.error is pd.NA


def test_tool_calls_df(tmp_path: Path) -> None:
    df = frames.tool_calls_df(_run(tmp_path / "r"))
    assert list(df.columns) == list(frames.TOOL_CALLS_COLUMNS)
    _dtypes_are(df, frames.TOOL_CALLS_COLUMNS)
    first, second = df.iloc[0], df.iloc[1]
    assert (first.call, first["name"], first.call_id, first.arguments, first.result) == (
        0,
        "calc",
        "k1",
        '{"e": "2+2"}',
        '{"v": 4}',
    )
    assert first.arguments_valid and first.duration_s == 0.5
    assert first.started_at == pd.Timestamp(T0)
    assert (second.call, second.arguments, second.arguments_valid, second.error) == (
        1,
        "{bad",
        False,
        "boom",
    )
    assert pd.isna(second.started_at) and math.isnan(second.duration_s)


def test_runs_df(tmp_path: Path) -> None:
    _run(tmp_path / "mine")
    shutil.copytree(FIXTURES / "demo_careful", tmp_path / "old" / "careful")
    shutil.copytree(FIXTURES / "demo_careful", tmp_path / "old" / "broken")
    (tmp_path / "old" / "broken" / "run.json").write_text("[]", encoding="utf-8")
    df = frames.runs_df(tmp_path)
    _dtypes_are(df, frames.RUNS_COLUMNS)
    assert list(df.run) == ["mine", "old/broken", "old/careful"]
    assert all(
        df[c].dtype == "float64" for c in df.columns if c.startswith(("pass_rate.", "mean."))
    )
    mine, broken, careful = (df.iloc[i] for i in range(3))
    assert (mine.run_id, mine.agent, mine.model, mine.trials, mine.failed) == (
        "r1",
        "pkg:Agent",
        "gpt-4o",
        2,
        1,
    )
    assert mine["pass_rate.exact_match"] == 1.0 and math.isnan(mine["pass_rate.tool_selection"])
    assert broken.error.endswith("run.json: Input should be an object") and broken.trials is pd.NA
    assert careful.trials == 8 and careful.error is pd.NA and careful.kind == "run"
    assert pd.isna(mine.finished_at) and careful.finished_at == pd.Timestamp(
        "2026-11-30T19:21:39.314800Z"
    )
    assert math.isnan(careful.cost_usd)  # no token usage recorded: the cost is unknown


def test_format_1_runs_read_as_migrated() -> None:
    df = frames.trials_df(FIXTURES / "repeats")
    assert len(df) == 12 and set(df.repeat) == {0, 1, 2}
    _dtypes_are(df, frames.TRIALS_COLUMNS)
    s = frames.scores_df(FIXTURES / "demo_sloppy")
    assert set(s.status.astype(str)) <= {
        "passed",
        "failed",
        "not_applicable",
        "inconclusive",
        "error",
    }


def test_a_broken_run_is_an_input_error(tmp_path: Path) -> None:
    d = tmp_path / "cut"
    shutil.copytree(FIXTURES / "demo_careful", d)
    lines = (d / "trials.jsonl").read_bytes().splitlines(keepends=True)
    (d / "trials.jsonl").write_bytes(lines[0] + lines[1][:30] + b"\n")
    with pytest.raises(InputError, match=r"trials.jsonl:2: not valid JSON"):
        frames.trials_df(d)
    with pytest.raises(InputError, match="is not a run directory"):
        frames.scores_df(tmp_path / "nothing")


def test_without_the_extra_one_line_names_it() -> None:
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "from agenteval import frames\n"
        "try:\n    frames.trials_df('x')\n"
        "except frames.FramesUnavailable as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "agenteval.frames needs the 'frames' extra (pandas is not installed):"
        " pip install -e '.[frames]'"
    )
    assert (
        "pandas"
        not in subprocess.run(
            [sys.executable, "-c", "import sys, agenteval.frames; print(sorted(sys.modules))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )  # imported on first use only


def test_times_outside_the_nanosecond_range_are_missing_not_a_crash(tmp_path: Path) -> None:
    """A time pandas cannot hold (before 1677 or after 2262: an imported trace's bogus
    start time, an agent's own tool-call time) is NaT; every other value is kept."""
    d = tmp_path / "odd-times"
    header = RunHeader(
        run_id="r1",
        dataset=DatasetRef(path="cases.jsonl", sha256="sha", cases=1),
        agent={"agent": "pkg:Agent"},
        scorers=[],
    )
    with RunWriter.create(d, header) as w:
        write_cases(d, [Case(id="c1", input="q")])
        far, near = "2554-07-21T23:34:33+00:00", "1500-01-01T00:00:00+00:00"
        calls = [ToolCall(name="f", started_at=near), ToolCall(name="g", started_at=T0)]
        w.append(Trial(case_id="c1", output="x", started_at=far, tool_calls=calls), {})
        w.append(Trial(case_id="c1", repeat=1, output="y", started_at=T0), {})
    trials = frames.trials_df(d)
    assert str(trials["started_at"].dtype) == frames.TIME
    assert trials["started_at"].isna().tolist() == [True, False]
    assert trials["output"].tolist() == ["x", "y"]
    calls_df = frames.tool_calls_df(d)
    assert calls_df["started_at"].isna().tolist() == [True, False]
    assert calls_df["name"].tolist() == ["f", "g"]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenteval",
            "export",
            d,
            "--format",
            "csv",
            "--out",
            tmp_path / "t.csv",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
