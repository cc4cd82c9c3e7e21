"""Bad input beyond datasets and trial files (those are in tests/bad_input/).

A corpus of malformed run directories, price tables, rubric files, HTTP/JSON agent
configs, prompt templates, tool-definition files and command-line arguments, including
huge lines, invalid UTF-8, NaN/Infinity, deeply nested JSON, empty files and directories
where a file is expected. Each entry must give exit code 2 and one clear message on
stderr (``agenteval: error: ...`` or, for argument syntax, argparse's usage line plus one
error line), no traceback, no agent call, and nothing written over an existing run.

Entries run through the CLI entry point in this process (``agenteval.cli.main``: the
same code the command runs); a sample also runs as real subprocesses.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from reliability_support import record_figures, run_cli, tree_bytes, write_jsonl

from agenteval.cli import main

pytestmark = pytest.mark.reliability

DEAD = "http://127.0.0.1:9/v1"  # nothing listens: an agent call would fail, not exit 2
HUGE = 12 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str
    make: Callable[[Path], list[str]]  # writes its files under the dir, returns argv


def _w(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _run_with(
    opt: str, content: str | bytes | None, name: str = "f"
) -> Callable[[Path], list[str]]:
    def make(d: Path) -> list[str]:
        target = d / name
        if content is None:
            target.mkdir()
        else:
            _w(target, content)
        return [
            "run",
            str(d / "cases.jsonl"),
            "--endpoint",
            DEAD,
            "--model",
            "m",
            "--out",
            str(d / "new"),
            "--quiet",
            opt,
            str(target),
        ]

    return make


def _args(*extra: str) -> Callable[[Path], list[str]]:
    def make(d: Path) -> list[str]:
        return [a.replace("{d}", str(d)) for a in extra]

    return make


def _run_args(*extra: str) -> Callable[[Path], list[str]]:
    return _args(
        "run",
        "{d}/cases.jsonl",
        "--endpoint",
        DEAD,
        "--model",
        "m",
        "--out",
        "{d}/new",
        "--quiet",
        *extra,
    )


def _bad_run(mutate: Callable[[Path], None], cmd: str = "report") -> Callable[[Path], list[str]]:
    def make(d: Path) -> list[str]:
        run = d / "badrun"
        run.mkdir()
        for f in ("run.json", "cases.jsonl", "trials.jsonl"):
            (run / f).write_bytes((d / "good" / f).read_bytes())
        mutate(run)
        if cmd == "report":
            return ["report", str(run)]
        if cmd == "gate":
            return ["gate", str(d / "good"), str(run)]
        return [cmd, str(run), "--out", str(d / "new"), "--quiet"]

    return make


def _set(rel: str, data: str | bytes | None) -> Callable[[Path], None]:
    def mutate(run: Path) -> None:
        p = run / rel
        p.unlink()
        if data is None:
            p.mkdir()
        else:
            _w(p, data)

    return mutate


def _header(**changes: object) -> Callable[[Path], None]:
    def mutate(run: Path) -> None:
        h = json.loads((run / "run.json").read_text(encoding="utf-8"))
        h.update(changes)
        (run / "run.json").write_text(json.dumps(h), encoding="utf-8")

    return mutate


def _trial_line(line: str, where: str = "middle") -> Callable[[Path], None]:
    def mutate(run: Path) -> None:
        lines = (run / "trials.jsonl").read_text(encoding="utf-8").splitlines()
        lines.insert(1 if where == "middle" else len(lines), line)
        (run / "trials.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    return mutate


def _rubric(content: str | bytes | None) -> Callable[[Path], list[str]]:
    def make(d: Path) -> list[str]:
        target = d / "rubric.txt"
        if content is None:
            target.mkdir()
        else:
            _w(target, content)
        return [
            "judge",
            str(d / "good"),
            "--out",
            str(d / "new"),
            "--rubric",
            str(target),
            "--judge-endpoint",
            DEAD,
            "--judge-model",
            "j",
            "--no-judge-cache",
        ]

    return make


GOOD_HTTP = "url: http://127.0.0.1:9/ask\nresponse:\n  output: answer\n"
CORPUS = [
    # price tables
    Entry("prices_not_yaml", "prices", _run_with("--prices", "gpt-4o: [1, 2\n")),
    Entry("prices_list", "prices", _run_with("--prices", "- 1\n- 2\n")),
    Entry("prices_negative", "prices", _run_with("--prices", '{"m": {"input": -1, "output": 2}}')),
    Entry("prices_nan", "prices", _run_with("--prices", '{"m": {"input": NaN, "output": 2}}')),
    Entry("prices_infinity", "prices", _run_with("--prices", "m: {input: .inf, output: 1}\n")),
    Entry(
        "prices_string", "prices", _run_with("--prices", '{"m": {"input": "cheap", "output": 2}}')
    ),
    Entry("prices_empty", "prices", _run_with("--prices", "")),
    Entry("prices_directory", "prices", _run_with("--prices", None)),
    Entry("prices_invalid_utf8", "prices", _run_with("--prices", b"m: {input: 1, output: \xff}\n")),
    Entry("prices_deep", "prices", _run_with("--prices", _deep(100_000))),
    # HTTP/JSON agent configs
    Entry("http_no_url", "http-config", _run_with("--http-config", "response: {output: a}\n")),
    Entry(
        "http_url_number",
        "http-config",
        _run_with("--http-config", "url: 42\nresponse: {output: a}\n"),
    ),
    Entry(
        "http_headers_list",
        "http-config",
        _run_with("--http-config", GOOD_HTTP + "headers: [a, b]\n"),
    ),
    Entry("http_not_mapping", "http-config", _run_with("--http-config", "[1, 2, 3]\n")),
    Entry("http_bad_yaml", "http-config", _run_with("--http-config", "url: [\n")),
    Entry("http_empty", "http-config", _run_with("--http-config", "")),
    Entry("http_directory", "http-config", _run_with("--http-config", None)),
    Entry("http_invalid_utf8", "http-config", _run_with("--http-config", b"url: http://x/\xfe\n")),
    Entry(
        "http_missing_file",
        "http-config",
        _args("run", "{d}/cases.jsonl", "--http-config", "{d}/nope.yaml", "--out", "{d}/new"),
    ),
    # prompt templates and tool definitions
    Entry("template_invalid_utf8", "template", _run_with("--prompt-template", b"\xff\xfe{input}")),
    Entry("template_directory", "template", _run_with("--prompt-template", None)),
    Entry("tooldefs_not_list", "tool-defs", _run_with("--tool-defs", '{"name": 3}')),
    Entry(
        "tooldefs_nan", "tool-defs", _run_with("--tool-defs", '[{"name": "a", "parameters": NaN}]')
    ),
    Entry(
        "tooldefs_huge_line",
        "tool-defs",
        _run_with("--tool-defs", "[" + "1," * (HUGE // 2) + "x]", "tools.json"),
    ),
    # rubric files
    Entry("rubric_empty", "rubric", _rubric("")),
    Entry("rubric_unknown_scale", "rubric", _rubric("---\nscale: stars\n---\nIs {output} ok?\n")),
    Entry("rubric_unknown_placeholder", "rubric", _rubric("Is {nonsense} ok?\n")),
    Entry("rubric_invalid_utf8", "rubric", _rubric(b"Is {output} \xff ok?\n")),
    Entry("rubric_directory", "rubric", _rubric(None)),
    Entry("rubric_bad_front_matter", "rubric", _rubric("---\nscale: [\n---\n{output}\n")),
    # run directories
    Entry("run_missing_header", "run-dir", _bad_run(lambda r: (r / "run.json").unlink())),
    Entry("run_header_not_json", "run-dir", _bad_run(_set("run.json", "{not json"))),
    Entry("run_header_directory", "run-dir", _bad_run(_set("run.json", None))),
    Entry("run_header_future_version", "run-dir", _bad_run(_header(format_version=99))),
    Entry("run_header_nan", "run-dir", _bad_run(_set("run.json", '{"format_version": NaN}'))),
    Entry("run_header_wrong_type", "run-dir", _bad_run(_header(scorers="exact_match"))),
    Entry("run_header_deep", "run-dir", _bad_run(_set("run.json", _deep(200_000)))),
    Entry("run_trials_directory", "run-dir", _bad_run(_set("trials.jsonl", None))),
    Entry("run_trials_bad_middle_line", "run-dir", _bad_run(_trial_line("{oops"))),
    Entry(
        "run_trials_invalid_utf8",
        "run-dir",
        _bad_run(_set("trials.jsonl", b'{"case_id": "q\xff"}\n')),
    ),
    Entry("run_trials_huge_line", "run-dir", _bad_run(_trial_line('{"case_id": "' + "x" * HUGE))),
    Entry("run_trials_deep", "run-dir", _bad_run(_trial_line(_deep(200_000)))),
    Entry(
        "run_trials_infinity",
        "run-dir",
        _bad_run(_trial_line('{"case_id": "q1", "repeat": 5, "latency": {"total_s": Infinity}}')),
    ),
    Entry(
        "run_trials_duplicate",
        "run-dir",
        _bad_run(_trial_line('{"case_id": "q1", "repeat": 0, "output": "4"}', "end")),
    ),
    Entry("run_is_a_file", "run-dir", _args("report", "{d}/cases.jsonl")),
    Entry("rescore_bad_header", "run-dir", _bad_run(_set("run.json", "[]"), "rescore")),
    Entry("rescore_torn_middle", "run-dir", _bad_run(_trial_line('{"case_id": "q'), "rescore")),
    Entry("gate_bad_candidate", "run-dir", _bad_run(_set("run.json", "\x00\x00"), "gate")),
    Entry("judge_no_header", "run-dir", _bad_run(lambda r: (r / "run.json").unlink(), "judge")),
    # command-line arguments
    Entry("arg_concurrency_zero", "cli", _run_args("--concurrency", "0")),
    Entry("arg_concurrency_text", "cli", _run_args("--concurrency", "many")),
    Entry("arg_timeout_nan", "cli", _run_args("--timeout", "nan")),
    Entry("arg_timeout_negative", "cli", _run_args("--timeout", "-3")),
    Entry("arg_retries_negative", "cli", _run_args("--max-retries", "-1")),
    Entry("arg_param_malformed", "cli", _run_args("--param", "novalue")),
    Entry("arg_no_agent", "cli", _args("run", "{d}/cases.jsonl", "--out", "{d}/new")),
    Entry("arg_two_agents", "cli", _run_args("--agent", "os:getcwd")),
    Entry(
        "arg_agent_not_callable",
        "cli",
        _args("run", "{d}/cases.jsonl", "--agent", "no_such_module_xyz:fn", "--out", "{d}/new"),
    ),
    Entry("arg_scorer_missing", "cli", _run_args("--scorer", "no_such_module_xyz:fn")),
    Entry("arg_pii_kind_unknown", "cli", _run_args("--pii-kinds", "email,dna")),
    Entry(
        "arg_out_is_existing_run",
        "cli",
        _args("run", "{d}/cases.jsonl", "--endpoint", DEAD, "--model", "m", "--out", "{d}/good"),
    ),
    Entry(
        "arg_out_is_file",
        "cli",
        _args(
            "run", "{d}/cases.jsonl", "--endpoint", DEAD, "--model", "m", "--out", "{d}/cases.jsonl"
        ),
    ),
    Entry(
        "arg_out_is_dataset_folder",
        "cli",
        _args("run", "{d}/cases.jsonl", "--endpoint", DEAD, "--model", "m", "--out", "{d}"),
    ),
    Entry(
        "arg_score_out_is_trials_folder",
        "cli",
        _args("score", "{d}/cases.jsonl", "{d}/trials.jsonl", "--out", "{d}/good/.."),
    ),
    Entry(
        "arg_report_onto_run_file",
        "cli",
        _args("report", "{d}/good", "--html", "{d}/good/trials.jsonl"),
    ),
    Entry("arg_resume_no_run", "cli", _run_args("--resume")),
    Entry(
        "arg_dataset_directory",
        "cli",
        _args("run", "{d}", "--endpoint", DEAD, "--model", "m", "--out", "{d}/new"),
    ),
    Entry(
        "arg_dataset_huge_line",
        "cli",
        lambda d: [
            "run",
            str(_w(d / "huge.jsonl", '{"id": "a", "input": "' + "y" * HUGE)),
            "--endpoint",
            DEAD,
            "--model",
            "m",
            "--out",
            str(d / "new"),
        ],
    ),
    Entry(
        "arg_dataset_deep",
        "cli",
        lambda d: [
            "run",
            str(_w(d / "deep.jsonl", '{"id": "a", "input": ' + _deep(100_000) + "}\n")),
            "--endpoint",
            DEAD,
            "--model",
            "m",
            "--out",
            str(d / "new"),
        ],
    ),
    Entry("arg_report_html_into_dir", "cli", _args("report", "{d}/good", "--html", "{d}")),
    Entry(
        "arg_unknown_rubric",
        "cli",
        _args(
            "judge",
            "{d}/good",
            "--out",
            "{d}/new",
            "--rubric",
            "no_such_rubric",
            "--judge-endpoint",
            DEAD,
            "--judge-model",
            "j",
        ),
    ),
    Entry(
        "arg_rubric_bad_scale",
        "cli",
        _args(
            "judge",
            "{d}/good",
            "--out",
            "{d}/new",
            "--rubric",
            "correctness:stars",
            "--judge-endpoint",
            DEAD,
            "--judge-model",
            "j",
        ),
    ),
    Entry(
        "arg_judge_samples_zero",
        "cli",
        _args(
            "judge",
            "{d}/good",
            "--out",
            "{d}/new",
            "--rubric",
            "correctness",
            "--judge-endpoint",
            DEAD,
            "--judge-model",
            "j",
            "--judge-samples",
            "0",
        ),
    ),
]


def _invoke(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as e:  # argparse
            code = int(e.code) if isinstance(e.code, int) else 2
    return code, err.getvalue()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("badinput")
    write_jsonl(
        d / "cases.jsonl",
        [
            {"id": "q1", "input": "2+2?", "expected": "4"},
            {"id": "q2", "input": "capital?", "expected": "Paris"},
        ],
    )
    write_jsonl(
        d / "trials.jsonl", [{"case_id": "q1", "output": "4"}, {"case_id": "q2", "output": "Rome"}]
    )
    code, err = _invoke(
        [
            "score",
            str(d / "cases.jsonl"),
            str(d / "trials.jsonl"),
            "--out",
            str(d / "good"),
            "--quiet",
        ]
    )
    assert code == 0, err
    return d


def _check(entry: Entry, code: int, err: str) -> str | None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if code != 2:
        return f"exit {code}: {err[-300:]!r}"
    if "Traceback" in err:
        return "traceback"
    if not lines:
        return "no message"
    last = lines[-1]
    if not (last.startswith("agenteval: error: ") or ": error: " in last):
        return f"unclear message {last!r}"
    extra = [ln for ln in lines[:-1] if not ln.startswith(("usage:", " "))]
    if extra:
        return f"more than one message: {lines!r}"
    if len(last) > 2000:
        return f"message of {len(last)} characters"
    return None


XFAIL: dict[str, str] = {}


def _params() -> list[object]:
    out: list[object] = []
    for e in CORPUS:
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL[e.name])] if e.name in XFAIL else []
        out.append(pytest.param(e, id=e.name, marks=marks))
    return out


@pytest.mark.parametrize("entry", _params())
def test_bad_input_exits_2(entry: Entry, workdir: Path, tmp_path: Path) -> None:
    d = tmp_path
    for name in ("cases.jsonl", "trials.jsonl"):
        (d / name).write_bytes((workdir / name).read_bytes())
    (d / "good").mkdir()
    for f in (workdir / "good").iterdir():
        (d / "good" / f.name).write_bytes(f.read_bytes())
    before = tree_bytes(d / "good")
    argv = entry.make(d)
    code, err = _invoke(argv)
    problem = _check(entry, code, err)
    assert problem is None, f"{entry.name}: {problem}"
    assert tree_bytes(d / "good") == before, "an existing run was changed"
    assert not (d / "new" / "run.json").exists(), "a run was written despite the error"


SUBPROCESS_SAMPLE = (
    "prices_nan",
    "http_directory",
    "rubric_unknown_scale",
    "run_header_future_version",
    "arg_dataset_deep",
    "arg_out_is_existing_run",
)


def test_sample_as_subprocesses(workdir: Path, tmp_path: Path) -> None:
    chosen = [e for e in CORPUS if e.name in SUBPROCESS_SAMPLE]
    assert len(chosen) == len(SUBPROCESS_SAMPLE)

    def one(entry: Entry) -> str | None:
        d = tmp_path / entry.name
        d.mkdir()
        for name in ("cases.jsonl", "trials.jsonl"):
            (d / name).write_bytes((workdir / name).read_bytes())
        (d / "good").mkdir()
        for f in (workdir / "good").iterdir():
            (d / "good" / f.name).write_bytes(f.read_bytes())
        proc = run_cli(*entry.make(d))
        return _check(entry, proc.returncode, proc.stderr)

    with ThreadPoolExecutor(3) as pool:
        problems = dict(zip(SUBPROCESS_SAMPLE, pool.map(one, chosen), strict=True))
    assert all(p is None for p in problems.values()), problems
    kinds: dict[str, int] = {}
    for e in CORPUS:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    record_figures(
        "bad_input",
        {"entries": len(CORPUS), "by_kind": kinds, "subprocess_sample": len(SUBPROCESS_SAMPLE)},
    )
