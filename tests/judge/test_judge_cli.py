"""``agenteval judge`` and ``agenteval judge-agreement`` as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _judge_fake import FakeJudge, Reply

from agenteval.cases.case import Case
from agenteval.cli import main
from agenteval.rundir import RunHeader, RunWriter, iter_trials, read_header, write_cases
from agenteval.scoring.score import Score
from agenteval.trials.trial import ToolCall, Trial

CASES = [
    Case(id="a", input="6 x 7?", expected="42"),
    Case(id="b", input="capital of France?", expected="Paris"),
    Case(id="c", input="say hi"),  # no expected: correctness not applicable
]


def _source_run(tmp_path: Path) -> Path:
    run = tmp_path / "src"
    header = RunHeader(scorers=["exact_match"], settings={"concurrency": 2})
    with RunWriter.create(run, header) as w:
        write_cases(run, CASES)
        for case, out in zip(CASES, ["42", "Lyon", "hi"], strict=True):
            t = Trial(case_id=case.id, output=out, tool_calls=[ToolCall(name="t", result="42")])
            w.append(t, {"exact_match": Score(1.0 if out == case.expected else 0.0, "x")})
    return run


RULES: dict[str, Reply | list[Reply]] = {
    "42": Reply("matches\nGRADE: C"),
    "Lyon": Reply("wrong city\nGRADE: I"),
    "hi": Reply("GRADE: 5"),
}


def _judge_args(srv: FakeJudge, cache: Path) -> list[str]:
    return ["--judge-endpoint", srv.base_url, "--judge-model", "jm", "--judge-cache", str(cache)]


def test_judge_adds_scores_to_a_new_run_and_caches(tmp_path: Path, cli: Any) -> None:
    src = _source_run(tmp_path)
    custom = tmp_path / "tone.txt"
    custom.write_text("Is this answer friendly?\n{output}\n")
    cache = tmp_path / "cache"
    with FakeJudge(RULES) as srv:
        args = ["--rubric", "correctness", "--rubric", f"{custom}:likert", *_judge_args(srv, cache)]
        r = cli("judge", src, "--out", tmp_path / "out", *args)
        assert r.returncode == 0, r.stderr
        first_calls = srv.calls
        assert first_calls == 2 + 3  # correctness on a and b; tone on all three
        r2 = cli("judge", src, "--out", tmp_path / "out2", *args)
        assert r2.returncode == 0, r2.stderr
        assert srv.calls == first_calls, "the second run must be served from the cache"
    assert "judge: 0 calls, 5 cache hits" in r2.stdout
    header = read_header(tmp_path / "out")
    assert header.kind == "judge" and header.source_run == str(src)
    assert header.scorer_names == ["exact_match", "judge_correctness", "judge_tone"]
    correctness, tone = header.scorers[1:]
    assert (correctness.ref, correctness.kind, correctness.safety) == (
        "judge:correctness",
        "pass/fail",
        False,
    )
    assert (tone.ref, tone.kind) == (f"judge:{custom}", "graded")
    assert tone.settings["model"] == "jm" and tone.settings["scale"] == "likert"
    judge_desc = header.settings["judge"]
    assert judge_desc["model"] == "jm" and [r["name"] for r in judge_desc["rubrics"]] == [
        "correctness",
        "tone",
    ]
    assert (tmp_path / "out" / "cases.jsonl").read_bytes() == (src / "cases.jsonl").read_bytes()
    recs = {t.case_id: t.scores for t in iter_trials(tmp_path / "out")}
    assert list(recs) == ["a", "b", "c"]  # source order kept
    assert recs["a"]["exact_match"].value == 1.0  # existing scores kept
    assert recs["a"]["judge_correctness"].value == 1.0
    assert recs["b"]["judge_correctness"].value == 0.0
    assert recs["c"]["judge_correctness"].reason.startswith("not applicable")
    assert recs["c"]["judge_tone"].value == 1.0
    assert recs["a"]["judge_correctness"].usage[0].model == "jm"
    assert header.summary is not None  # summarised by agenteval.report
    # The source run is untouched.
    assert "judge_correctness" not in next(iter_trials(src)).scores


def test_judge_rejects_bad_input(
    tmp_path: Path, cli: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _source_run(tmp_path)
    base = ["--judge-endpoint", "http://127.0.0.1:9/v1", "--judge-model", "m"]
    r = cli("judge", src, "--out", tmp_path / "o1", "--rubric", "nope", *base)
    assert r.returncode == 2 and "unknown rubric 'nope'" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    # The same dispatcher in-process, for the other mistakes.
    monkeypatch.delenv("AGENTEVAL_TEST_UNSET_KEY", raising=False)
    cases = [
        (
            ["--judge-api-key-env", "AGENTEVAL_TEST_UNSET_KEY"],
            "AGENTEVAL_TEST_UNSET_KEY is not set",
        ),
        (["--judge-samples", "0"], "--judge-samples"),
        (["--rubric", "correctness"], "given twice"),
    ]
    for extra, message in cases:
        out = tmp_path / "o2"
        code = main(
            ["judge", str(src), "--out", str(out), "--rubric", "correctness", *base, *extra]
        )
        assert code == 2 and message in capsys.readouterr().err
        assert not out.exists()
    assert main(["judge", str(src), "--out", str(src), "--rubric", "correctness", *base]) == 2
    assert "--out must be a new directory" in capsys.readouterr().err
    missing = ["judge", str(tmp_path / "missing"), "--out", str(tmp_path / "o3")]
    assert main([*missing, "--rubric", "correctness", *base]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_judge_with_unreachable_server_is_inconclusive_not_failed(tmp_path: Path, cli: Any) -> None:
    src = _source_run(tmp_path)
    r = cli(
        "judge",
        src,
        "--out",
        tmp_path / "out",
        "--rubric",
        "correctness",
        "--judge-endpoint",
        "http://127.0.0.1:9/v1",
        "--judge-model",
        "m",
        "--no-judge-cache",
        "--judge-retries",
        "0",
    )
    # no verdict at all: exit 4 (CI must not read it as success), the run is kept
    assert r.returncode == 4, r.stderr
    assert "no verdict on any of 3 judge score(s) (inconclusive 2, not_applicable 1)" in r.stderr
    recs = {t.case_id: t.scores for t in iter_trials(tmp_path / "out")}
    assert recs["a"]["judge_correctness"].reason.startswith("inconclusive: judge error")
    assert recs["a"]["judge_correctness"].value is None


def test_api_key_never_reaches_the_run(tmp_path: Path, cli: Any) -> None:
    src = _source_run(tmp_path)
    secret = "sk-never-write-me-0987654321"
    with FakeJudge(RULES) as srv:
        r = cli(
            "judge",
            src,
            "--out",
            tmp_path / "out",
            "--rubric",
            "correctness",
            "--judge-api-key-env",
            "AGENTEVAL_JUDGE_KEY",
            *_judge_args(srv, tmp_path / "c"),
            env={"AGENTEVAL_JUDGE_KEY": secret},
        )
        assert r.returncode == 0, r.stderr
        assert srv.headers[0]["Authorization"] == f"Bearer {secret}"
    for f in [*(tmp_path / "out").iterdir(), *(tmp_path / "c").rglob("*.json")]:
        assert secret not in f.read_text()
    assert secret not in r.stdout + r.stderr


def test_judge_agreement_reports_accuracy_kappa_and_disagreements(tmp_path: Path, cli: Any) -> None:
    labels = tmp_path / "labels.jsonl"
    rows: list[dict[str, Any]] = [
        {"id": "1", "input": "q", "expected": "42", "output": "42", "label": 1},
        {"id": "2", "input": "q", "expected": "42", "output": "41", "label": "I"},
        {"id": "3", "input": "q", "expected": "42", "output": "forty-two", "label": "C"},
        {"id": "4", "input": "q", "expected": "42", "output": "42.0", "label": 0},
        {"id": "5", "input": "q", "expected": "42", "output": "??", "label": 1},
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rules: dict[str, Reply | list[Reply]] = {
        "42": Reply("GRADE: C"),
        "41": Reply("GRADE: I"),
        "forty-two": Reply("GRADE: C"),
        "42.0": Reply("GRADE: C"),  # the human said I: a disagreement
        "??": Reply("no idea"),  # inconclusive: left out of accuracy
    }
    with FakeJudge(rules) as srv:
        base = ["--rubric", "correctness", *_judge_args(srv, tmp_path / "cache")]
        r = cli("judge-agreement", labels, "--json", *base)
        assert r.returncode == 0, r.stderr
        text = cli("judge-agreement", labels, *base)
    report = json.loads(r.stdout)
    assert (report["items"], report["compared"], report["agreed"]) == (5, 4, 3)
    assert report["accuracy"] == 0.75
    # pairs: (C,C) (I,I) (C,C) (I,C): p_o=.75, p_e=.5*.75+.5*.25=.5, kappa=.5
    assert abs(report["kappa"] - 0.5) < 1e-9
    assert report["confusion"] == {"C": {"C": 2, "I": 0}, "I": {"C": 1, "I": 1}}
    assert [d["id"] for d in report["disagreements"]] == ["4"]
    assert [d["id"] for d in report["unjudged"]] == ["5"]
    assert text.returncode == 0
    assert "accuracy 0.750 (3/4)" in text.stdout and "Cohen's kappa 0.500" in text.stdout
    assert "4: label I, judge C" in text.stdout


def test_judge_agreement_needs_one_rubric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "l.jsonl"
    labels.write_text('{"id": "1", "input": "q", "output": "a", "label": 3}\n')
    base = ["judge-agreement", str(labels), "--judge-endpoint", "http://127.0.0.1:9/v1"]
    base += ["--judge-model", "m", "--rubric", "correctness"]
    assert main([*base, "--rubric", "faithfulness"]) == 2
    assert "exactly one rubric" in capsys.readouterr().err
    assert main(base) == 2
    assert "l.jsonl:1: field 'label'" in capsys.readouterr().err


def test_a_judge_answering_nonsense_exits_4_with_the_count(tmp_path: Path, cli: Any) -> None:
    src = _source_run(tmp_path)
    nonsense: dict[str, Reply | list[Reply]] = {k: Reply("I like turtles") for k in RULES}
    with FakeJudge(nonsense) as srv:
        args = _judge_args(srv, tmp_path / "cache")
        r = cli("judge", src, "--out", tmp_path / "out", "--rubric", "correctness", *args)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "no verdict on any of 3 judge score(s) (inconclusive 2, not_applicable 1)" in r.stderr
    assert "Traceback" not in r.stderr and (tmp_path / "out" / "trials.jsonl").exists()
    with FakeJudge(RULES) as srv:  # one verdict is enough: exit 0
        args = _judge_args(srv, tmp_path / "cache2")
        r = cli("judge", src, "--out", tmp_path / "ok", "--rubric", "correctness", *args)
    assert r.returncode == 0, r.stderr
