"""No command-line flag words below ``cli/``: an error below the command line names the
field (``InputError(..., field="resume")``, or a :class:`~agenteval.errors.FieldName` inside
the message) and the CLI says the flag through ``agenteval.cli.FIELD_FLAGS``.

The scan reads every string constant of ``src/agenteval`` outside ``cli/`` (docstrings
excepted: they document the command line) and fails on a ``--flag`` not listed in
:data:`KNOWN`, each entry with the reason it stays.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "agenteval"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")

_RECORDED = "text a run records or a report shows byte-for-byte (trial failure, score reason,"
_RECORDED += " gate verdict): renaming it changes what runs record"
_ARGV = "builds or describes another command line (not an error of ours)"
_TODO = "TODO(issue 25): not an InputError (notes, HTTP replies, other errors); not yet mapped"


def _each(rel: str, why: str, *flags: str) -> dict[tuple[str, str], str]:
    return {(rel, flag): why for flag in flags}


KNOWN: dict[tuple[str, str], str] = {
    # recorded or reported text
    ("agents/tool_loop.py", "--max-turns"): _RECORDED,
    ("conversation/agent.py", "--user"): _RECORDED,
    ("conversation/agent.py", "--user-endpoint"): _RECORDED,
    ("conversation/agent.py", "--user-model"): _RECORDED,
    ("judge/parse.py", "--judge-max-tokens"): _RECORDED,
    ("gate/evidence.py", "--max-drop"): _RECORDED,
    ("gate/unpaired.py", "--max-drop"): _RECORDED,
    ("gate/model.py", "--allow-dataset-change"): _RECORDED + " (the model's schema text)",
    ("gate/model.py", "--require"): _RECORDED + " (the model's schema text)",
    ("gate/model.py", "--no-new-failures"): _RECORDED + " (the model's schema text)",
    ("gate/paired.py", "--allow-dataset-change"): _RECORDED,
    ("gate/paired.py", "--no-new-failures"): _RECORDED,
    ("gate/paired.py", "--paired"): _RECORDED,
    ("gate/paired.py", "--unpaired"): _RECORDED,
    ("gate/policies.py", "--require"): _RECORDED,
    ("gate/policies.py", "--no-new-failures"): _RECORDED,
    ("report/gate_unpaired_text.py", "--allow-inconclusive"): _RECORDED,
    ("report/gate_unpaired_text.py", "--no-new-failures"): _RECORDED,
    ("report/terminal.py", "--all-scorers"): _RECORDED,
    ("view/pages.py", "--require"): _RECORDED + " (the policies as the gate command's options)",
    ("view/pages.py", "--max-drop"): _RECORDED + " (the policies as the gate command's options)",
    ("view/pages.py", "--no-new-failures"): _RECORDED + " (the gate command's options)",
    ("cases/calls.py", "--trust-run"): _RECORDED + " (an untrusted matcher's score reason)",
    ("monitor/checking.py", "--baseline"): _RECORDED + " (an alert's reference, alerts.jsonl)",
    ("cases/case.py", "--user"): "the case model's schema text",
    ("cases/case.py", "--user-endpoint"): "the case model's schema text",
    ("monitor/judging.py", "--judge-sample"): _RECORDED + " (a not-judged score's reason)",
    ("monitor/judging.py", "--judge-max-usd-per-hour"): _RECORDED
    + " (a not-judged score's reason)",
    # other command lines
    **_each(
        "mcp_server/jobs.py",
        _ARGV + ": the agenteval run the server starts",
        "--agent",
        "--out",
        "--quiet",
        "--concurrency",
        "--repeats",
        "--limit",
        "--timeout",
    ),
    **_each(
        "demo/run.py",
        _ARGV + ": the commands the demo prints and writes",
        "--agent",
        "--tools",
        "--endpoint",
        "--model",
        "--out",
    ),
    **_each(
        "testing/fake_openai/__main__.py",
        _ARGV + ": the fake server's own options",
        "--host",
        "--port",
        "--latency-ms",
        "--fault",
        "--seed",
        "--retry-after",
    ),
    ("testing/pytest_plugin.py", "--agenteval-out"): _ARGV + ": the pytest plugin's option",
    ("llm/local_model.py", "--no-deps"): _ARGV + ": pip's option",
    ("rundir/writer.py", "--resume"): _ARGV + ": the command holding the lock, as typed",
    ("run/session.py", "--resume"): _ARGV + ": the command holding the lock, as typed",
    # not yet mapped
    ("_util/hosts.py", "--allow-host"): _TODO + " (an HTTP refusal body)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of string constants standing alone as statements (docstrings, attribute
    docstrings)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for stmt in body if isinstance(body, list) else []:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                out.add(id(stmt.value))
    return out


def flag_words(source: str) -> list[tuple[int, str]]:
    """(line, flag) of every flag word in a non-docstring string constant of ``source``."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [
        (node.lineno, flag)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        for flag in FLAG.findall(node.value)
    ]


def _found() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith("cli/"):
            continue
        for line, flag in flag_words(path.read_text(encoding="utf-8")):
            found.setdefault((rel, flag), []).append(line)
    return found


def test_no_flag_word_below_the_command_line() -> None:
    found = _found()
    new = [
        f"{rel}:{lines[0]}: {flag}"
        for (rel, flag), lines in found.items()
        if (rel, flag) not in KNOWN
    ]
    assert not new, "flag words below cli/ (name the field; map it in FIELD_FLAGS):\n" + "\n".join(
        new
    )


def test_every_known_exception_is_still_there() -> None:
    found = _found()
    gone = [f"{rel}: {flag}" for rel, flag in KNOWN if (rel, flag) not in found]
    assert not gone, "remove these from KNOWN (the flag word is gone):\n" + "\n".join(gone)


def test_the_scan_sees_strings_and_skips_docstrings() -> None:
    source = (
        '"""Run with --resume."""\n\ndef f():\n    """--out X."""\n'
        '    raise E("use --resume, not -x or a--b")\n'
    )
    assert flag_words(source) == [(5, "--resume")]
