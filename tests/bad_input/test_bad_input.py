"""The bad-input corpus: every malformed dataset or trial file gets one clear line, exit 2.

Each entry of :data:`CORPUS` is a file under ``files/`` with where its problem is (line and
field) and words the message must contain. Every entry is checked twice:

- through the loaders (``scan_dataset``/``load_case_index``, ``iter_trial_file``): the
  InputError names exactly that file, line and field;
- through the real command, ``python -m agenteval score CASES TRIALS --out OUT`` in a
  subprocess: exit code 2, exactly one line on stderr naming the file (and the line), no
  traceback, and OUT never created.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from agenteval.dataset import load_case_index, scan_dataset
from agenteval.dataset.trialfile import iter_trial_file
from agenteval.errors import InputError

pytestmark = pytest.mark.reliability

FILES = Path(__file__).parent / "files"
VALID_CASES = FILES / "valid_cases.jsonl"
VALID_TRIALS = FILES / "valid_trials.jsonl"


@dataclass(frozen=True)
class Bad:
    name: str  # a file under files/, or "<dir>" / "<missing>" (made at test time)
    role: str  # "cases" or "trials"
    line: int | None
    field: str | None
    words: tuple[str, ...]
    loader: bool = True  # False: only the command detects it (e.g. an unknown case id)


CORPUS = [
    Bad("cases_malformed_json.jsonl", "cases", 2, None, ("not valid JSON", "column 44")),
    Bad("cases_truncated_line.jsonl", "cases", 3, None, ("not valid JSON", "cut short")),
    Bad("cases_non_object_row.jsonl", "cases", 2, None, ("must be an object, got a list",)),
    Bad("cases_missing_id.jsonl", "cases", 2, "id", ("is required",)),
    Bad("cases_missing_input.jsonl", "cases", 2, "input", ("is required",)),
    Bad("cases_id_wrong_type.jsonl", "cases", 1, "id", ("must be a string",)),
    Bad("cases_input_wrong_type.jsonl", "cases", 2, "input", ("string or a non-empty list",)),
    Bad("cases_expected_tools_shape.jsonl", "cases", 1, "expected_tools", ("{name: count}",)),
    Bad("cases_negative_max_tool_calls.jsonl", "cases", 3, "max_tool_calls", ("(got -2)",)),
    Bad("cases_duplicate_id.jsonl", "cases", 3, "id", ("duplicate id 'q1' (first at line 1)",)),
    Bad("cases_invalid_utf8.jsonl", "cases", 2, None, ("not valid UTF-8", "0xe9")),
    Bad("cases_empty.jsonl", "cases", None, None, ("contains no cases",)),
    Bad("cases_blank_lines_only.jsonl", "cases", None, None, ("contains no cases",)),
    Bad("cases_yaml_syntax.yaml", "cases", 5, None, ("not valid YAML",)),
    Bad("cases_yaml_not_a_list.yaml", "cases", 1, None, ("'cases:' list",)),
    Bad("cases_yaml_bad_field.yaml", "cases", 6, "max_tool_calls", ("(got 'a few')",)),
    Bad("cases_csv_missing_id.csv", "cases", 1, "id", ("missing column 'id'",)),
    Bad("cases_csv_bad_int.csv", "cases", 3, "max_tool_calls", ("whole number", "'two'")),
    Bad("cases_json_array_non_object.json", "cases", 3, None, ("must be an object",)),
    Bad("cases_json_object_not_array.json", "cases", 1, None, ("JSON array", ".jsonl")),
    Bad("cases_nan_expected.jsonl", "cases", 1, "expected", ("NaN",)),
    Bad("cases_bad_tool_definition.jsonl", "cases", 1, "tools", ("'function' must be an object",)),
    Bad("cases_empty_messages.jsonl", "cases", 1, "input", ("non-empty list",)),
    Bad("cases_unknown_extension.tsv", "cases", None, None, ("unknown dataset format", ".jsonl")),
    Bad("<dir>", "cases", None, None, ("is a directory",)),
    Bad("<missing>", "cases", None, None, ("not found",)),
    Bad("trials_missing_case_id.jsonl", "trials", 1, "case_id", ("is required",)),
    Bad("trials_tool_calls_not_list.jsonl", "trials", 1, "tool_calls", ("valid list",)),
    Bad("trials_negative_repeat.jsonl", "trials", 2, "repeat", ("(got -1)",)),
    Bad(
        "trials_duplicate_key.jsonl",
        "trials",
        3,
        "case_id",
        ("duplicate trial for case_id 'q1' repeat 0 (first at line 1)",),
    ),
    Bad("trials_infinity_latency.jsonl", "trials", 1, "latency.total_s", ("Infinity",)),
    Bad("trials_malformed_json.jsonl", "trials", 2, None, ("not valid JSON", "delimiter")),
    Bad("trials_tool_call_without_name.jsonl", "trials", 1, "tool_calls.0.name", ("required",)),
    Bad("trials_invalid_utf8.jsonl", "trials", 1, None, ("not valid UTF-8", "0xff")),
    Bad("trials_empty.jsonl", "trials", None, None, ("no trials",)),
    Bad("trials_non_object.jsonl", "trials", 2, None, ("must be an object, got a number",)),
    Bad("trials_output_wrong_type.jsonl", "trials", 1, "output", ("valid string", "(got 4)")),
    Bad("trials_unknown_case.jsonl", "trials", None, "case_id", ("'q9'",), loader=False),
    Bad("<dir>", "trials", None, None, ("is a directory",)),
    Bad("<missing>", "trials", None, None, ("not found",)),
]

IDS = [f"{b.role}:{b.name}" for b in CORPUS]


def _path(bad: Bad, tmp: Path) -> Path:
    if bad.name == "<dir>":
        d = tmp / f"a_directory_{bad.role}"
        d.mkdir(exist_ok=True)
        return d
    if bad.name == "<missing>":
        return tmp / f"no_such_{bad.role}.jsonl"
    return FILES / bad.name


def test_corpus_is_complete() -> None:
    on_disk = {p.name for p in FILES.iterdir()} - {VALID_CASES.name, VALID_TRIALS.name}
    listed = {b.name for b in CORPUS if not b.name.startswith("<")}
    assert on_disk == listed
    assert len(CORPUS) >= 20


# ------------------------------------------------------------------ through the loaders


def _load(bad: Bad, path: Path) -> None:
    if bad.role == "cases":
        scan_dataset(path)
        load_case_index(path)
    else:
        for _ in iter_trial_file(path):
            pass


@pytest.mark.parametrize("bad", [b for b in CORPUS if b.loader], ids=lambda b: f"{b.role}:{b.name}")
def test_loader_names_file_line_and_field(bad: Bad, tmp_path: Path) -> None:
    path = _path(bad, tmp_path)
    with pytest.raises(InputError) as info:
        _load(bad, path)
    e = info.value
    assert (e.file, e.line, e.field) == (str(path), bad.line, bad.field), str(e)
    for w in bad.words:
        assert w in e.message, str(e)


def test_valid_files_load() -> None:
    assert scan_dataset(VALID_CASES).cases == 2
    assert [t.case_id for t in iter_trial_file(VALID_TRIALS)] == ["q1", "q2"]


# ------------------------------------------------------------------ through the real command


def _agenteval(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agenteval", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=120,
    )


@dataclass(frozen=True)
class Outcome:
    path: Path
    out: Path
    proc: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Run ``agenteval score`` once per corpus entry (a few at a time, to keep it quick)."""
    root = tmp_path_factory.mktemp("bad_input_cli")
    helped = _agenteval("score", "--help", cwd=root)
    if helped.returncode != 0:
        pytest.skip(f"`agenteval score --help` failed, the score command is missing: {helped}")

    def one(item: tuple[str, Bad]) -> tuple[str, Outcome]:
        key, bad = item
        work = root / key.replace(":", "_").replace("<", "").replace(">", "")
        work.mkdir()
        path = _path(bad, work)
        out = work / "out"
        cases, trials = (path, VALID_TRIALS) if bad.role == "cases" else (VALID_CASES, path)
        return key, Outcome(path, out, _agenteval("score", cases, trials, "--out", out, cwd=work))

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, zip(IDS, CORPUS, strict=True)))


@pytest.mark.parametrize("bad", CORPUS, ids=IDS)
def test_command_prints_one_line_and_exits_2(bad: Bad, outcomes: dict[str, Outcome]) -> None:
    o = outcomes[f"{bad.role}:{bad.name}"]
    err = o.proc.stderr
    assert o.proc.returncode == 2, (o.proc.returncode, err, o.proc.stdout)
    assert "Traceback" not in err and "Traceback" not in o.proc.stdout
    lines = err.splitlines()
    assert len(lines) == 1, err
    (line,) = lines
    assert line.startswith("agenteval: error: ")
    if bad.loader:
        where = f"{o.path}:{bad.line}: " if bad.line is not None else f"{o.path}: "
        assert where in line, line
    else:  # found by the command itself: the file must be named, a line is welcome
        assert f"{o.path}:" in line, line
    for w in bad.words:
        assert w in line, line
    assert not o.out.exists(), "the run directory must not be created"


def test_valid_files_score(tmp_path: Path, outcomes: dict[str, Outcome]) -> None:
    out = tmp_path / "run"
    proc = _agenteval("score", VALID_CASES, VALID_TRIALS, "--out", out, "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "run.json").exists() and (out / "trials.jsonl").exists()
