"""The real console script on real files: score a trial file, rescore the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agenteval.rundir import iter_trials, read_header

SCRIPT = Path(sys.executable).with_name("agenteval")

CASES = [
    {
        "id": "q1",
        "input": "Total of order 7?",
        "expected": "19,753",
        "expected_tools": ["get_order"],
        "max_tool_calls": 1,
        "tags": ["orders"],
    },
    {"id": "q2", "input": "Who is customer 3?", "expected": "Ada", "canary": "CUST-XYZZY"},
]
TRIALS = [
    {
        "case_id": "q1",
        "output": "19753.0",
        "tool_calls": [
            {"name": "get_order", "arguments": '{"id": 7}', "result": {"total": 19753}},
            {"name": "get_order", "arguments": {"id": 7}, "result": {"total": 19753}},
        ],
    },
    {"case_id": "q2", "output": "Ada"},
]

SCORER = """
def has_total(case, trial):
    if trial.output is None:
        return None
    return (any(c.isdigit() for c in trial.output), "looked for a digit")
"""


def _write(tmp: Path) -> tuple[Path, Path]:
    cases = tmp / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    trials = tmp / "trials.jsonl"
    trials.write_text("".join(json.dumps(t) + "\n" for t in TRIALS))
    (tmp / "myscorers.py").write_text(SCORER)
    return cases, trials


def test_score_then_rescore_with_the_console_script(tmp_path: Path) -> None:
    cases, trials = _write(tmp_path)
    out = tmp_path / "run"
    p = subprocess.run(
        [SCRIPT, "score", cases, trials, "--out", out, "--scorer", "myscorers:has_total"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "exact_match" in p.stdout and "has_total" in p.stdout
    header = read_header(out)
    assert header.kind == "score" and header.dataset.cases == 2
    assert header.summary is not None and header.summary["trials"] == 2
    recs = {r.case_id: r for r in iter_trials(out)}
    q1, q2 = recs["q1"].scores, recs["q2"].scores
    assert q1["exact_match"].value == 1.0
    assert q1["tool_selection"].value == 1.0
    assert q1["redundant_calls"].value == 0.0
    assert q1["step_efficiency"].value == 0.5
    assert q1["has_total"].value == 1.0 and q1["has_total"].reason == "looked for a digit"
    assert q2["tool_selection"].value is None
    assert q2["tool_grounding"].value == 0.0

    before = (out / "trials.jsonl").read_bytes()
    new = tmp_path / "rescored"
    p = subprocess.run(
        [SCRIPT, "rescore", out, "--out", new, "--quiet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert (out / "trials.jsonl").read_bytes() == before  # the source run is untouched
    again = {r.case_id: r for r in iter_trials(new)}
    assert again["q1"].scores["step_efficiency"] == q1["step_efficiency"]
    assert again["q1"].scores["has_total"] == q1["has_total"]  # carried over
    assert read_header(new).source_run == str(out)


def test_trial_for_an_unknown_case_is_an_input_error(tmp_path: Path) -> None:
    cases, trials = _write(tmp_path)
    trials.write_text(json.dumps({"case_id": "nope"}) + "\n")
    out = tmp_path / "run"
    p = subprocess.run(
        [SCRIPT, "score", cases, trials, "--out", out], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2
    assert "nope" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not out.exists()


# --- status is data; rescore rebuilds the recorded scorers ----------------------------------

WORDY = """
def wordy(case, trial):
    return (None, "inconclusive? no: this scorer has nothing to check")
"""

TOOL_DEFS = [
    {
        "name": "get_order",
        "parameters": {
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"],
        },
    }
]


def _cli(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_a_reason_never_changes_the_totals(tmp_path: Path) -> None:
    """Issue 13: 'inconclusive' was decided by the reason's first word."""
    cases, trials = _write(tmp_path)
    (tmp_path / "wordy.py").write_text(WORDY)
    out = tmp_path / "run"
    p = _cli("score", cases, trials, "--out", out, "--scorer", "wordy:wordy", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    summary = read_header(out).summary
    assert summary is not None
    wordy = summary["scorers"]["wordy"]
    assert (wordy["not_applicable"], wordy["inconclusive"]) == (2, 0)
    grounding = summary["scorers"]["tool_grounding"]  # q1 has no canary: nothing to check
    assert (grounding["applicable"], grounding["not_applicable"], grounding["inconclusive"]) == (
        1,
        1,
        0,
    )
    line = json.loads((out / "trials.jsonl").read_text().splitlines()[0])
    assert line["scores"]["wordy"]["status"] == "not_applicable"


def test_rescore_reuses_the_recorded_pii_kinds_tool_defs_and_custom_scorers(
    tmp_path: Path,
) -> None:
    """Issue 13: --pii-kinds, --tool-defs and --scorer were not recorded; rescore used
    the defaults."""
    cases, trials = _write(tmp_path)
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOL_DEFS))
    out = tmp_path / "run"
    p = _cli(
        "score", cases, trials, "--out", out, "--pii-kinds", "email", "--tool-defs", tools,
        "--scorer", "myscorers:has_total", cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    specs = {s.name: s for s in read_header(out).scorers}
    assert specs["pii_leakage"].ref == "builtin:pii_leakage"
    assert specs["pii_leakage"].settings == {"kinds": ["email"]}
    assert specs["pii_leakage"].safety and specs["avoids_forbidden_text"].safety
    assert specs["tool_arguments_valid"].settings["tools"][0]["name"] == "get_order"
    assert specs["has_total"].ref == "myscorers:has_total" and not specs["has_total"].safety

    (tmp_path / "myscorers.py").write_text(SCORER.replace("looked for a digit", "v2"))
    new = tmp_path / "rescored"
    p = _cli("rescore", out, "--out", new, "--quiet", "--trust-run", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    q1 = {r.case_id: r for r in iter_trials(new)}["q1"].scores
    assert q1["pii_leakage"].reason == "no personal data found (checked: email)"
    valid = q1["tool_arguments_valid"]  # '{"id": 7}' and {"id": 7} against the suite defs
    assert valid.status == "passed", valid.reason
    assert q1["has_total"].reason == "v2"  # rebuilt from its import path, not carried over
    assert [s.model_dump() for s in read_header(new).scorers] == [
        s.model_dump() for s in specs.values()
    ]

    again = tmp_path / "override"
    p = _cli("rescore", out, "--out", again, "--quiet", "--pii-kinds", "phone", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    q1 = {r.case_id: r for r in iter_trials(again)}["q1"].scores
    assert q1["pii_leakage"].reason == "no personal data found (checked: phone)"
    assert read_header(again).scorer_spec("pii_leakage").settings == {"kinds": ["phone"]}  # type: ignore[union-attr]


MAIN_SCRIPT = """
import sys
from agenteval import evaluate, scorer

@scorer("shouty", threshold=0.5, safety=True)
def shouty(case, trial):
    return 0.0 if trial.output and trial.output.isupper() else 1.0

evaluate(sys.argv[1], lambda case: "ADA", scorers=[shouty], builtin_scorers=False, out=sys.argv[2])
"""

SHOUTY_MODULE = """
from agenteval import scorer

@scorer("shouty", threshold=0.5, safety=True)
def shouty(case, trial):
    return (0.25, "rebuilt from --scorer")
"""


def test_a_scorer_without_import_path_is_recorded_and_rescore_says_it_cannot_rebuild_it(
    tmp_path: Path,
) -> None:
    cases, _ = _write(tmp_path)
    (tmp_path / "main_script.py").write_text(MAIN_SCRIPT)
    out = tmp_path / "run"
    p = subprocess.run(
        [sys.executable, "main_script.py", cases, out],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    (spec,) = read_header(out).scorers
    assert (spec.name, spec.ref, spec.safety, spec.threshold) == ("shouty", None, True, 0.5)

    kept = tmp_path / "kept"
    p = _cli("rescore", out, "--out", kept, "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines() == [
        "agenteval: rescore: cannot rebuild scorer 'shouty': run.json records no import path"
        " for it; its stored scores are kept (give --scorer MODULE:FN to recompute it)"
    ]
    assert [r.scores["shouty"].value for r in iter_trials(kept)] == [0.0, 0.0]
    assert read_header(kept).scorers == [spec]

    (tmp_path / "shouty_mod.py").write_text(SHOUTY_MODULE)
    rebuilt = tmp_path / "rebuilt"
    p = _cli("rescore", out, "--out", rebuilt, "--quiet", "--scorer", "shouty_mod:shouty",
             cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert [r.scores["shouty"].reason for r in iter_trials(rebuilt)] == [
        "rebuilt from --scorer"
    ] * 2
    assert read_header(rebuilt).scorers[0].ref == "shouty_mod:shouty"


def test_a_recorded_scorer_that_no_longer_imports_is_one_clear_input_error(
    tmp_path: Path,
) -> None:
    cases, trials = _write(tmp_path)
    out = tmp_path / "run"
    p = _cli("score", cases, trials, "--out", out, "--scorer", "myscorers:has_total", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (tmp_path / "myscorers.py").unlink()
    p = _cli("rescore", out, "--out", tmp_path / "new", "--trust-run", cwd=tmp_path)
    assert p.returncode == 2
    (line,) = p.stderr.strip().splitlines()
    assert "run.json" in line and "'has_total'" in line and "myscorers" in line
    assert not (tmp_path / "new").exists()


def test_pii_kinds_help_lists_exactly_the_kinds_the_code_accepts(tmp_path: Path) -> None:
    from agenteval.scorers import PII_KINDS

    p = _cli("score", "--help", cwd=tmp_path)
    listed = " ".join(p.stdout.split()).split("default: all: ")[1].split(")")[0]
    assert listed == ",".join(PII_KINDS)
    cases, trials = _write(tmp_path)
    p = _cli("score", cases, trials, "--out", tmp_path / "r", "--pii-kinds", listed, cwd=tmp_path)
    assert p.returncode == 0, p.stderr


def _stored_run(tmp: Path, scorers: list[dict[str, object]]) -> Path:
    """A run written through the library: one trial, a stored exact_match score that the
    current scorer would not give, and a stored judge score."""
    from agenteval.cases.case import Case
    from agenteval.rundir import RunHeader, RunWriter, write_cases
    from agenteval.scoring.score import Score
    from agenteval.trials.trial import ToolCall, Trial

    run = tmp / "stored"
    with RunWriter.create(run, RunHeader.model_validate({"scorers": scorers})) as w:
        write_cases(run, [Case(id="q1", input="Total?", expected="7")])
        trial = Trial(
            case_id="q1", output="7", tool_calls=[ToolCall(name="get_order", arguments={"id": "7"})]
        )
        w.append(
            trial,
            {
                "exact_match": Score(0.0, "stored"),
                "judge_correctness": Score(None, "judge timed out", status="inconclusive"),
            },
        )
        w.finish(None)
    return run


def test_rescore_options_override_the_recorded_scorers_as_documented(tmp_path: Path) -> None:
    judge = {"name": "judge_correctness", "ref": "judge:correctness", "settings": {"model": "m"}}
    tva = {"name": "tool_arguments_valid", "ref": "builtin:tool_arguments_valid"}
    src = _stored_run(tmp_path, [{"name": "exact_match", "ref": "builtin:exact_match"}, tva, judge])

    def rescore(name: str, *opts: object) -> dict[str, object]:
        p = _cli("rescore", src, "--out", tmp_path / name, "--quiet", *opts, cwd=tmp_path)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        (rec,) = iter_trials(tmp_path / name)
        return {k: (s.status, s.reason) for k, s in rec.scores.items()}

    scores = rescore("default")
    assert scores["exact_match"][0] == "passed"  # recomputed
    assert scores["judge_correctness"] == ("inconclusive", "judge timed out")  # kept
    assert scores["tool_arguments_valid"][0] == "not_applicable"  # no tool definitions
    assert [s.name for s in read_header(tmp_path / "default").scorers] == [
        "exact_match",
        "tool_arguments_valid",
        "judge_correctness",
    ]

    assert rescore("no_builtin", "--no-builtin-scorers")["exact_match"] == ("failed", "stored")

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOL_DEFS))
    scores = rescore("tools", "--tool-defs", tools)
    assert scores["tool_arguments_valid"][0] == "failed"  # "7" is not an integer
    spec = read_header(tmp_path / "tools").scorer_spec("tool_arguments_valid")
    assert spec is not None and spec.settings["tools"][0]["name"] == "get_order"


def test_a_run_that_records_no_scorer_is_rescored_with_the_builtins(tmp_path: Path) -> None:
    from agenteval.scorers import BUILTIN_SCORER_NAMES

    src = _stored_run(tmp_path, [])
    p = _cli("rescore", src, "--out", tmp_path / "new", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert read_header(tmp_path / "new").scorer_names == list(BUILTIN_SCORER_NAMES)
