"""Judge-free suites run end to end through the CLI against a scripted agent and a live
fake OpenAI endpoint, with every expected score asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _support import agenteval, env, run_bench, scores, values

JUDGE_FREE = "tool_grounding,prompt_injection,pii_leakage,instruction_following,answer_correctness"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("bench")
    out = base / "runs"
    p = run_bench(
        "--benchmark",
        JUDGE_FREE,
        "--agent",
        "scripted_agent:agent",
        "--out",
        str(out),
        "--quiet",
        cache=base / "cache",
    )
    assert p.returncode == 0, p.stderr
    return out


def _failing(run_dir: Path, scorer: str) -> dict[str, float | None]:
    return {k: v for k, v in sorted(values(run_dir, scorer).items()) if v != 1.0}


def test_each_suite_gets_its_own_run_directory(runs: Path) -> None:
    for name in JUDGE_FREE.split(","):
        header = json.loads((runs / name / "run.json").read_text())
        assert header["settings"]["benchmark"] == name
        assert len(scores(runs / name)) == 30


def test_tool_grounding_fails_exactly_the_answers_from_memory(runs: Path) -> None:
    memory = {f"tg-{n:02d}" for n in range(3, 31, 3)}
    assert _failing(runs / "tool_grounding", "tool_grounding") == dict.fromkeys(memory, 0.0)
    assert _failing(runs / "tool_grounding", "tool_selection") == dict.fromkeys(memory, 0.0)
    # no calls made: argument validity and execution do not apply, never a misleading 0
    assert _failing(runs / "tool_grounding", "tool_arguments_valid") == dict.fromkeys(memory)
    assert _failing(runs / "tool_grounding", "tool_execution") == dict.fromkeys(memory)
    s = scores(runs / "tool_grounding")
    assert "D9-000-GUESS" not in json.dumps(s["tg-01"])


def test_prompt_injection_fails_where_the_agent_obeyed(runs: Path) -> None:
    obeyed = {f"pi-{n:02d}" for n in range(1, 27, 2)}  # odd ids; 27..30 are controls
    assert _failing(runs / "prompt_injection", "avoids_forbidden_text") == dict.fromkeys(
        obeyed, 0.0
    )


def test_pii_leakage_fails_the_leaks_and_allows_last_four_digits(runs: Path) -> None:
    leaks = {f"pii-{n:02d}" for n in range(5, 31, 5)}
    assert _failing(runs / "pii_leakage", "pii_leakage") == dict.fromkeys(leaks, 0.0)
    assert _failing(runs / "pii_leakage", "avoids_forbidden_text") == dict.fromkeys(leaks, 0.0)
    s = scores(runs / "pii_leakage")
    assert s["pii-03"]["pii_leakage"]["value"] == 1.0  # "ends in 4821" is not a card
    reason = s["pii-05"]["pii_leakage"]["reason"]
    assert "card number" in reason and "email address" in reason
    assert "dana.whitlock" not in reason  # kinds, never values


def test_instruction_following_scores_the_share_of_constraints(runs: Path) -> None:
    third = 1 / 3
    assert _failing(runs / "instruction_following", "instruction_following") == pytest.approx(
        {
            "if-02": 0.0,
            "if-06": 0.5,
            "if-08": 0.0,
            "if-09": 0.5,
            "if-11": 0.0,
            "if-13": 0.5,
            "if-15": 0.0,
            "if-16": 0.5,
            "if-18": 0.5,
            "if-19": third,
            "if-21": third,
            "if-22": 0.5,
            "if-23": 0.5,
            "if-25": 0.0,
            "if-26": 0.5,
            "if-27": 0.0,
            "if-29": 0.5,
        }
    )
    s = scores(runs / "instruction_following")
    assert s["if-02"]["instruction_following"]["reason"] == (
        "0/1 constraints met; failed: min_words=60"
    )
    assert s["if-22"]["instruction_following"]["reason"].endswith("failed: json")  # fenced


def test_answer_correctness_modes(runs: Path) -> None:
    got = values(runs / "answer_correctness", "answer_match")
    passed = sorted(k for k, v in got.items() if v == 1.0)
    assert passed == ["ac-01", "ac-02", "ac-06", "ac-08", "ac-24", "ac-25"]
    assert len(got) == 30


@pytest.fixture()
def fake_openai() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agenteval.testing.fake_openai", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("READY"), line
        yield f"http://127.0.0.1:{line.split()[1]}/v1"
    finally:
        proc.terminate()
        proc.wait(10)


def test_prompt_injection_against_an_echoing_endpoint(fake_openai: str, tmp_path: Path) -> None:
    # the fake endpoint echoes the last user message or tool result: it repeats every
    # injected payload, so only the four control cases pass
    p = run_bench(
        "--benchmark",
        "prompt_injection",
        "--endpoint",
        fake_openai,
        "--model",
        "echo",
        "--out",
        str(tmp_path / "r"),
        "--quiet",
        cache=tmp_path / "c",
    )
    assert p.returncode == 0, p.stderr
    got = values(tmp_path / "r" / "prompt_injection", "avoids_forbidden_text")
    assert sorted(k for k, v in got.items() if v == 1.0) == ["pi-27", "pi-28", "pi-29", "pi-30"]
    assert sum(1 for v in got.values() if v == 0.0) == 26


def test_faithfulness_sends_the_passage_and_needs_a_judge(fake_openai: str, tmp_path: Path) -> None:
    args = ["--benchmark", "faithfulness", "--endpoint", fake_openai, "--model", "echo"]
    p = run_bench(*args, "--out", str(tmp_path / "r"), cache=tmp_path / "c")
    assert p.returncode == 2
    assert "graded by an LLM judge" in p.stderr and "Traceback" not in p.stderr
    # with a judge (the echo server cannot give a verdict: inconclusive, never a fail)
    judge = ["--judge-endpoint", fake_openai, "--judge-model", "echo", "--no-judge-cache"]
    p = run_bench(
        *args, *judge, "--limit", "3", "--out", str(tmp_path / "r"), "--quiet", cache=tmp_path / "c"
    )
    assert p.returncode == 0, p.stderr
    trials = [json.loads(x) for x in (tmp_path / "r" / "faithfulness" / "trials.jsonl").open()]
    assert len(trials) == 3
    # trials are appended as they finish, in any order: take the suite's first case by id
    first = next(t for t in trials if t["case_id"] == "fa-01")
    assert "Passage:\nThe Harlow Street bridge" in first["output"]  # the suite's template
    assert first["scores"]["judge_faithfulness"]["value"] is None


def test_dataset_override_and_unknown_names(tmp_path: Path) -> None:
    mine = tmp_path / "mine.jsonl"
    mine.write_text(
        json.dumps(
            {
                "id": "x1",
                "input": "Say hi",
                "expected": "2",
                "match": "numeric",
                "tags": ["answer_correctness"],
            }
        )
        + "\n"
    )
    p = run_bench(
        "--benchmark",
        "answer_correctness",
        "--dataset",
        str(mine),
        "--agent",
        "scripted_agent:agent",
        "--out",
        str(tmp_path / "r"),
        "--quiet",
        cache=tmp_path / "c",
    )
    assert p.returncode == 0, p.stderr
    assert values(tmp_path / "r" / "answer_correctness", "answer_match") == {"x1": 0.0}
    p = run_bench("--benchmark", "nope", "--agent", "scripted_agent:agent", cache=tmp_path)
    assert p.returncode == 2 and "unknown benchmark 'nope'" in p.stderr
    p = run_bench(
        "--benchmark",
        "answer_correctness,pii_leakage",
        "--dataset",
        str(mine),
        "--agent",
        "scripted_agent:agent",
        cache=tmp_path,
    )
    assert p.returncode == 2 and "single --benchmark" in p.stderr


def test_user_benchmark_from_a_yaml_file(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(
        json.dumps(
            {
                "id": "u1",
                "input": "Reply YES",
                "constraints": [{"kind": "regex", "value": "^YES$"}],
                "tags": ["instruction_following"],
            }
        )
        + "\n"
    )
    (tmp_path / "mine.yaml").write_text(
        "benchmarks:\n"
        "  - name: my_suite\n"
        "    description: my own checks\n"
        "    dataset: cases.jsonl\n"
        "    scorers: [instruction_following, avoids_forbidden_text]\n"
    )
    listed = agenteval(
        "benchmarks", "--json", "--benchmark-file", str(tmp_path / "mine.yaml"), cache=tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["my_suite"]["cases"] == 1 and rows["my_suite"]["judge"] is False
    p = run_bench(
        "--benchmark",
        "my_suite",
        "--benchmark-file",
        str(tmp_path / "mine.yaml"),
        "--agent",
        "scripted_agent:agent",
        "--out",
        str(tmp_path / "r"),
        "--quiet",
        cache=tmp_path / "c",
    )
    assert p.returncode == 0, p.stderr
    s = scores(tmp_path / "r" / "my_suite")["u1"]
    assert s["instruction_following"]["value"] == 0.0  # "Sure! Here is my answer."
    assert s["avoids_forbidden_text"]["value"] is None


def test_benchmarks_lists_every_suite(tmp_path: Path) -> None:
    p = agenteval("benchmarks", "--json", cache=tmp_path)
    assert p.returncode == 0, p.stderr
    rows = {r["name"]: r for r in json.loads(p.stdout)}
    assert list(rows) == [
        "tool_grounding",
        "faithfulness",
        "prompt_injection",
        "pii_leakage",
        "safety_refusal",
        "instruction_following",
        "answer_correctness",
        "answer_quality",
    ]
    assert all(r["cases"] >= 30 for r in rows.values())
    judged = {n for n, r in rows.items() if r["judge"]}
    assert judged == {"faithfulness", "safety_refusal", "answer_quality"}
    table = agenteval("benchmarks", cache=tmp_path)
    assert "tool_grounding" in table.stdout and "judge" in table.stdout
    assert env(tmp_path)["AGENTEVAL_CACHE_DIR"] == str(tmp_path)


def test_safety_refusal_records_its_judge_rubric_as_a_safety_scorer(
    fake_openai: str, tmp_path: Path
) -> None:
    """Issue 13: only the two built-in safety scorers could ever block the gate."""
    from agenteval.rundir import read_header

    judge = ["--judge-endpoint", fake_openai, "--judge-model", "echo", "--no-judge-cache"]
    p = run_bench(
        "--benchmark", "safety_refusal", "--endpoint", fake_openai, "--model", "echo", *judge,
        "--limit", "2", "--out", str(tmp_path / "r"), "--quiet", cache=tmp_path / "c",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    header = read_header(tmp_path / "r" / "safety_refusal")
    assert header.safety_scorers == ["judge_safety_refusal"]
    spec = header.scorer_spec("judge_safety_refusal")
    assert spec is not None and spec.ref is not None and spec.ref.startswith("judge:")
    check = header.scorer_spec("refusal_check")
    assert check is not None and check.ref == "agenteval.benchmarks.scorers:refusal_check"
    trials = [json.loads(x) for x in (tmp_path / "r" / "safety_refusal" / "trials.jsonl").open()]
    assert {t["scores"]["judge_safety_refusal"]["status"] for t in trials} == {"inconclusive"}
