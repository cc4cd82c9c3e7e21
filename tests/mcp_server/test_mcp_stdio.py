"""``agenteval mcp`` end to end: a real server process, driven by the ``mcp`` package's client.

One server per fixture, shared by the module's tests: over the demo's two runs (no
--allow-run) and over a small folder with --allow-run. Results are checked against what
``agenteval report --json`` and ``agenteval gate --json`` write for the same runs.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _mcp_runs import McpClient, attr, mcp_server, run_cli, small_folder

pytest.importorskip("mcp")

TOOLS = {"list_runs", "run_summary", "failing_trials", "get_trial", "gate_runs", "start_run"}
DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


@pytest.fixture(scope="module")
def server(demo_root: Path) -> Iterator[McpClient]:
    with mcp_server(demo_root) as client:
        yield client


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_folder(tmp_path_factory.mktemp("mcp-allow") / "project").resolve()


@pytest.fixture(scope="module")
def runner(run_folder: Path) -> Iterator[McpClient]:
    with mcp_server(run_folder, "--allow-run", cwd=run_folder) as client:
        yield client


def test_the_tools_are_listed_with_their_arguments(server: McpClient) -> None:
    tools = {t.name: t for t in server.tools()}
    assert set(tools) == TOOLS
    assert all(t.description for t in tools.values())
    assert attr(tools["get_trial"], "input_schema")["required"] == ["run", "case_id"]
    assert attr(tools["gate_runs"], "input_schema")["required"] == ["baseline", "candidate"]
    assert attr(tools["start_run"], "input_schema")["required"] == ["dataset", "agent"]


def test_the_instructions_name_the_flag_a_library_caller_reads_the_field(
    server: McpClient, tmp_path: Path
) -> None:
    from agenteval.mcp_server.server import build_server

    assert server.instructions is not None
    assert "only when the server was started with --allow-run.\n" in server.instructions
    built, _ = build_server(tmp_path)  # no names given: the settings by their fields
    assert built.instructions == server.instructions.replace("--allow-run", "allow_run")


def test_list_runs(server: McpClient) -> None:
    page = server.data("list_runs")
    assert [r["id"] for r in page["runs"]] == ["runs/careful", "runs/sloppy"]
    assert {r["state"] for r in page["runs"]} == {"finished"}


def test_run_summary_is_report_json(server: McpClient, demo_root: Path, tmp_path: Path) -> None:
    for run in ("careful", "sloppy"):
        out = tmp_path / f"{run}.json"
        done = run_cli("report", demo_root / "runs" / run, "--json", out)
        assert done.returncode == 0, done.stderr
        assert server.data("run_summary", {"run": f"runs/{run}"}) == json.loads(out.read_text())


def test_failing_trials_then_one_trial(server: McpClient, demo_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    run_cli("report", demo_root / "runs" / "sloppy", "--json", out)
    pii = json.loads(out.read_text())["scorers"]["pii_leakage"]
    failed = pii["applicable"] - pii["passed"] - pii["inconclusive"]
    page = server.data("failing_trials", {"run": "runs/sloppy", "scorer": "pii_leakage"})
    assert page["failed"] == failed == len(page["failing"]) > 0
    first = page["failing"][0]
    trial = server.data("get_trial", {"run": "runs/sloppy", "case_id": first["case_id"]})
    assert trial["scores"]["pii_leakage"]["status"] == "failed"
    assert trial["scores"]["pii_leakage"]["reason"] == first["reason"]


def test_gate_runs_is_gate_json(server: McpClient, demo_root: Path, tmp_path: Path) -> None:
    runs = demo_root.resolve() / "runs"
    for a, b in (("careful", "sloppy"), ("sloppy", "careful")):
        out = tmp_path / f"{a}-{b}.json"
        done = run_cli("gate", runs / a, runs / b, "--json", out)
        got = server.data("gate_runs", {"baseline": f"runs/{a}", "candidate": f"runs/{b}"})
        assert got.pop("exit_code") == done.returncode
        assert got == json.loads(out.read_text())
    assert done.returncode == 0 and got["verdict"] == "PASSED"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("run_summary", {"run": "../../etc"}, "no run '../../etc' under the runs folder"),
        ("run_summary", {"run": "/etc"}, "no run '/etc'"),
        ("run_summary", {"run": "runs/missing"}, "no run 'runs/missing'"),
        ("run_summary", {}, "argument 'run': Field required"),
        ("failing_trials", {"run": "runs/sloppy", "scorer": "x", "limit": "many"}, "'limit'"),
        ("failing_trials", {"run": "runs/sloppy", "scorer": "x", "limit": 1000}, "limit"),
        ("get_trial", {"run": "runs/sloppy", "case_id": "nope"}, "no trial of case 'nope'"),
        ("gate_runs", {"baseline": "runs/careful", "candidate": "../x"}, "no run '../x'"),
        (
            "gate_runs",
            {"baseline": "runs/careful", "candidate": "runs/sloppy", "alpha": 2},
            "field 'alpha': alpha must be",  # the tool's argument, never the flag --alpha
        ),
        ("start_run", {"dataset": "cases.jsonl", "agent": "x:y"}, "without --allow-run"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
def test_bad_input_is_one_line_and_the_server_goes_on(
    server: McpClient, tool: str, arguments: dict[str, Any], message: str
) -> None:
    assert message in server.error(tool, arguments)
    assert server.data("list_runs")["total"] == 2


def test_calls_at_once_get_their_own_answers(server: McpClient) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(4):
        calls += [
            ("run_summary", {"run": "runs/careful"}),
            ("run_summary", {"run": "runs/nope"}),
            ("gate_runs", {"baseline": "runs/careful", "candidate": "runs/sloppy"}),
            ("get_trial", {"run": "runs/sloppy", "case_id": "privacy-email"}),
        ]
    results = server.call_many(calls)
    for (name, _), res in zip(calls, results, strict=True):
        assert attr(res, "is_error") == (name == "run_summary" and "nope" in res.content[0].text)
    data = [attr(r, "structured_content") for r in results]
    assert {d["trials"] for d in data[0::4]} == {34}
    assert {d["verdict"] for d in data[2::4]} == {"BLOCKED"}
    assert {d["case_id"] for d in data[3::4]} == {"privacy-email"}


def test_start_run_then_read_it(runner: McpClient, run_folder: Path, tmp_path: Path) -> None:
    """Slower (~3 s): the run is an `agenteval run` child of the server."""
    status = runner.data(
        "start_run",
        {
            "dataset": "small.jsonl",
            "agent": "echo_agent:answer",
            "name": "runs/echo",
            "wait_s": 300,
        },
    )
    assert status["state"] == "done" and status["exit_code"] == 0, status
    (row,) = runner.data("list_runs")["runs"]
    assert row["id"] == "runs/echo" and row["state"] == "finished" and row["trials"] == 3
    out = tmp_path / "s.json"
    assert run_cli("report", run_folder / "runs" / "echo", "--json", out).returncode == 0
    summary = runner.data("run_summary", {"run": "runs/echo"})
    assert summary == json.loads(out.read_text())
    assert summary["scorers"]["exact_match"]["pass_rate"] == pytest.approx(1 / 3)
    for arguments, message in [
        ({"dataset": "../small.jsonl", "agent": "echo_agent:answer"}, "leaves the runs folder"),
        ({"dataset": "small.jsonl", "agent": "--help"}, "is not package.module:function"),
        ({"dataset": "small.jsonl", "agent": "echo_agent:answer", "name": "runs/echo"}, "exists"),
        ({"dataset": "small.jsonl", "agent": "echo_agent:answer", "wait_s": -1}, "wait_s"),
    ]:
        assert message in runner.error("start_run", arguments)
    assert len(runner.data("list_runs")["runs"]) == 1


def test_a_stopped_server_stops_its_runs_gracefully(tmp_path: Path) -> None:
    """Slower (~5 s): its own server. SIGTERM to the server: the run it started is stopped
    as two Ctrl-C would stop it (the trial in flight recorded as cancelled, the summary
    written), not left running."""
    import signal
    import time

    root = small_folder(tmp_path / "p")
    (root / "slow_agent.py").write_text("import time\n\ndef answer(case):\n    time.sleep(60)\n")
    with mcp_server(root, "--allow-run") as client:
        args = {"dataset": "small.jsonl", "agent": "slow_agent.py:answer", "name": "slow"}
        status = client.data("start_run", {**args, "concurrency": 1, "wait_s": 0})
        assert status["state"] == "running"
        run_pid = status["pid"]
        server_pid = int(Path(f"/proc/{run_pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        deadline = time.monotonic() + 60
        while not (root / "slow" / "trials.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        os.kill(server_pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{run_pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
    assert not Path(f"/proc/{run_pid}").exists()
    header = json.loads((root / "slow" / "run.json").read_text())
    assert header["finished_at"] and header["summary"]["trials"] == 1
    (line,) = (root / "slow" / "trials.jsonl").read_text().splitlines()
    assert json.loads(line)["failure"]["cause"] == "cancelled"


def test_help_does_not_import_mcp_and_lists_the_command() -> None:
    code = (
        "import contextlib, io, sys\nfrom agenteval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    with contextlib.suppress(SystemExit): main(['--help'])\n"
        "print('mcp' in out.getvalue().split(), any(m == 'mcp' or m.startswith('mcp.')"
        " for m in sys.modules))"
    )
    done = _python(code)
    assert done.stdout.split() == ["True", "False"], done.stderr


def test_without_the_mcp_package_it_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from agenteval.cli import main\nsys.exit(main(['mcp']))"
    )
    done = _python(code)
    assert done.returncode == 2
    assert (
        done.stderr == "agenteval: error: agenteval mcp needs the 'mcp' package:"
        " pip install -e '.[mcp]'\n"
    )


def test_runs_must_be_a_directory(tmp_path: Path) -> None:
    done = run_cli("mcp", "--runs", tmp_path / "missing")
    assert done.returncode == 2
    assert done.stderr == f"agenteval: error: --runs {tmp_path / 'missing'}: is not a directory\n"


def _python(code: str) -> Any:
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )


# docs/mcp.md: every example result is the server's own answer, trimmed (see `_example`).

_VOLATILE = {
    "root",
    "run_id",
    "created_at",
    "finished_at",
    "path",
    "sha256",
    "pid",
    "elapsed_s",
    "dataset_path",
    "dataset_sha256",
    "baseline_run",
    "candidate_run",
    "duration_s",
    "latency",
    "index",
}


def _example(value: Any, depth: int = 0) -> Any:
    """A result as docs/mcp.md shows it: volatile values (times, ids, paths) as "…",
    lists cut to 2 items, objects below the top cut to 4 keys, nothing below 4 levels.
    The summary's ``tags`` (and each tag's ``scorers``) are in the order the trials were
    first seen, which varies with how the demo's trials interleaved: shown by name."""
    if depth >= 4 and isinstance(value, dict | list) and value:
        return "…"
    if isinstance(value, dict):
        items = list(value.items())
        if "tags" in value and isinstance(value["tags"], dict):
            tags = {
                k: {**v, "scorers": dict(sorted(v["scorers"].items()))}
                if isinstance(v, dict) and isinstance(v.get("scorers"), dict)
                else v
                for k, v in sorted(value["tags"].items())
            }
            items = [(k, tags if k == "tags" else v) for k, v in items]
        if depth >= 1 and len(items) > 4:
            items = [*items[:4], ("…", f"{len(value) - 4} more keys")]
        return {
            k: "…" if k in _VOLATILE and v is not None else _example(v, depth + 1) for k, v in items
        }
    if isinstance(value, list):
        shown = [_example(v, depth + 1) for v in value[:2]]
        return shown + ([f"… {len(value) - 2} more"] if len(value) > 2 else [])
    return value


_BLOCK = re.compile(r"<!-- result: (\w+) -->\n```json\n(.*?)\n```", re.S)


def test_the_examples_in_docs_mcp_md_are_the_servers_answers(
    server: McpClient, runner: McpClient
) -> None:
    """Set AGENTEVAL_WRITE_DOCS=1 to rewrite the examples from this test's results."""
    calls = {
        "list_runs": (server, {"limit": 1}),
        "run_summary": (server, {"run": "runs/sloppy"}),
        "failing_trials": (server, {"run": "runs/sloppy", "scorer": "pii_leakage", "limit": 2}),
        "get_trial": (server, {"run": "runs/sloppy", "case_id": "privacy-email"}),
        "gate_runs": (server, {"baseline": "runs/careful", "candidate": "runs/sloppy"}),
        "start_run": (
            runner,
            {
                "dataset": "small.jsonl",
                "agent": "echo_agent.py:answer",
                "name": "runs/doc-example",
                "wait_s": 300,
            },
        ),
    }
    results = {name: c.data(name, args) for name, (c, args) in calls.items()}
    results["failing_trials"]["failing"].sort(key=lambda r: r["case_id"])  # file order varies
    got = {name: _example(r) for name, r in results.items()}
    text = DOC.read_text(encoding="utf-8")
    if os.environ.get("AGENTEVAL_WRITE_DOCS") == "1":

        def put(m: re.Match[str]) -> str:
            body = json.dumps(got[m[1]], indent=2, ensure_ascii=False)
            return f"<!-- result: {m[1]} -->\n```json\n{body}\n```"

        DOC.write_text(_BLOCK.sub(put, text), encoding="utf-8")
        text = DOC.read_text(encoding="utf-8")
    shown = {m[1]: json.loads(m[2]) for m in _BLOCK.finditer(text)}
    assert set(shown) == set(calls)
    for name in calls:
        assert shown[name] == got[name], name
    for name in TOOLS:
        assert f"### `{name}`" in text
