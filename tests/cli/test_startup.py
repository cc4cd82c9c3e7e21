"""Start-up stays light: ``agenteval --help``, each ``agenteval COMMAND --help`` and
``report RUN`` import only what they use (docs/performance.md, start-up).

Each check runs the command in a fresh interpreter and looks at ``sys.modules`` after it:
a heavy module coming back into the import set of ``--help`` (aiohttp, rich, pydantic and
the models, the command modules themselves) fails here, not in a benchmark nobody reads.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.cli import COMMANDS, _wanted_module, build_parser, main

_PROBE = """\
import json, sys
from agenteval.cli import main
try:
    code = main(sys.argv[2:])
except SystemExit as e:
    code = e.code
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""

THIRD_PARTY = ("aiohttp", "rich", "pydantic", "pydantic_core", "yaml", "jsonschema", "jinja2")
THIRD_PARTY += ("opentelemetry", "pyarrow", "pandas", "ray", "mcp", "uvloop")
MODELS = ("agenteval.cases.case", "agenteval.trials.trial", "agenteval.rundir")
MODELS += ("agenteval.summary", "agenteval.gate", "agenteval.judge", "agenteval.scorers")
MODELS += ("agenteval.run", "agenteval.report", "agenteval.llm.http", "agenteval.dataset")
HEAVY = THIRD_PARTY + MODELS
"""What no ``--help`` imports: each costs tens to hundreds of milliseconds of CPU."""


def imported(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    """The exit code of ``agenteval ARGV`` in a new interpreter, and the modules it held."""
    out = tmp_path / f"modules-{len(list(tmp_path.iterdir()))}.json"
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(out), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.exists(), done.stderr[-2000:]
    got = json.loads(out.read_text(encoding="utf-8"))
    return int(got["code"] or 0), set(got["modules"])


def heavy(modules: set[str], names: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


def test_agenteval_help_imports_no_command_module(tmp_path: Path) -> None:
    code, modules = imported(tmp_path, "--help")
    assert code == 0
    assert heavy(modules, (*HEAVY, "asyncio")) == []
    commands = {f"agenteval.cli.{module}" for _, module, _ in COMMANDS}
    assert sorted(commands & modules) == []


@pytest.mark.parametrize("command", [name for name, _, _ in COMMANDS])
def test_command_help_imports_nothing_heavy(tmp_path: Path, command: str) -> None:
    code, modules = imported(tmp_path, command, "--help")
    assert code == 0
    assert heavy(modules) == []


def test_the_command_list_without_imports_is_the_full_parsers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """:data:`agenteval.cli.COMMANDS` (what ``--help`` lists without importing a command
    module) says what the modules register: the same commands, order and help lines."""
    full = build_parser()
    assert build_parser("").format_help() == full.format_help()
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out == full.format_help()
    sub = next(a for a in full._actions if a.dest == "command")
    assert list(sub.choices) == [name for name, _, _ in COMMANDS]  # type: ignore[arg-type]


def test_the_parser_built_is_the_one_of_the_command_named() -> None:
    assert _wanted_module(["--help"]) == ""
    assert _wanted_module(["--help", "run"]) == ""  # argparse answers --help first
    assert _wanted_module([]) == ""
    assert _wanted_module(["nonsense"]) == ""
    assert _wanted_module(["--version", "compare", "a"]) == "gate"
    assert _wanted_module(["import-traces", "--help"]) == "import_traces"
    assert _wanted_module(["run", "--help"]) == "run"


def test_an_unknown_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ei:
        main(["nonsense"])
    assert ei.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nonsense'" in err
    assert all(f"'{name}'" in err for name, _, _ in COMMANDS)


def test_the_pii_kinds_in_help_are_the_scorers() -> None:
    from agenteval.cli._common import PII_KINDS_HELP
    from agenteval.scorers.pii import PII_KINDS

    assert ",".join(PII_KINDS) == PII_KINDS_HELP
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "".join(buf.getvalue().split()).count(",".join(PII_KINDS)) == 1


def test_report_imports_only_the_terminal_renderer(tmp_path: Path) -> None:
    """``agenteval report RUN`` loads neither YAML (no price file), the HTML renderer
    (jinja2), the gate, the judge, OpenTelemetry nor the HTTP client. (A one-case ``run``'s
    import set: tests/cli/test_run_cli.py, test_an_endpoint_run_imports_only_what_it_uses.)"""
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "c1", "input": "hi", "expected": "echo: hi"}\n', encoding="utf-8")
    trials = tmp_path / "trials.jsonl"
    trials.write_text('{"case_id": "c1", "output": "echo: hi"}\n', encoding="utf-8")
    run = tmp_path / "run"
    assert main(["score", str(cases), str(trials), "--out", str(run), "--quiet"]) == 0
    code, modules = imported(tmp_path, "report", str(run))
    assert code == 0
    assert "agenteval.report.terminal" in modules  # the check sees what report imports
    unused = ("yaml", "jinja2", "jsonschema", "opentelemetry", "aiohttp", "agenteval.gate")
    unused += ("agenteval.judge", "agenteval.report.html", "agenteval.llm.http")
    assert heavy(modules, unused) == []
