"""Every shell and Python block of README.md and docs/ is run by a test or says why not.

The markers are described in tests/docs/_blocks.py. This module checks that every block has
one, that the tests named exist, that data blocks parse (and dataset blocks are valid
cases), and runs the blocks marked ``<!-- run -->`` itself: per page, in one temporary
folder, in page order, with a real shell (``agenteval`` and ``python`` are this
interpreter), comparing the output blocks shown after them.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from _blocks import ROOT, Block, pages, parse, stray_markers

from agenteval.dataset import iter_cases
from agenteval.errors import InputError
from fake_server_util import fake_server_process

PAGES = pages()
IDS = [p.relative_to(ROOT).as_posix() for p in PAGES]
BLOCKS = {page: parse(page) for page in PAGES}
HOW = (
    "put one of these on the line before its fence:\n"
    "  <!-- run -->                      tests/docs/test_docs_blocks.py runs it (in page order)\n"
    "  <!-- run: tests/<dir>/<file>.py -->  that test runs it (and names this page)\n"
    "  <!-- file: NAME -->               the block is a file the later run blocks use\n"
    "  <!-- not-run: REASON -->          it cannot run in a test, and why"
)


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_shell_and_python_block_is_run_or_marked(page: Path) -> None:
    missing = [
        f"{b.where}: a {b.lang or 'untagged'} block starting {b.text.splitlines()[0][:60]!r}"
        for b in BLOCKS[page]
        if b.kind in ("shell", "python") and b.marker is None
    ]
    assert not missing, "\n".join(missing) + "\nhas no marker; " + HOW


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_markers_are_well_formed(page: Path) -> None:
    problems = list(stray_markers(page))
    for b in BLOCKS[page]:
        if b.marker == "not-run" and len(b.arg) < 8:
            problems.append(f"{b.where}: not-run needs a reason: <!-- not-run: why -->")
        if b.marker == "file" and (not b.arg or b.arg.startswith("/") or ".." in b.arg):
            problems.append(f"{b.where}: file needs a plain relative name: <!-- file: x.py -->")
        if b.marker == "run" and b.arg.endswith(".py"):
            test = ROOT / b.arg
            if not test.is_file():
                problems.append(f"{b.where}: {b.arg} does not exist")
            elif Path(b.page).name not in test.read_text(encoding="utf-8"):
                problems.append(f"{b.where}: {b.arg} never names {Path(b.page).name}")
        if b.marker == "output" and b.kind in ("shell", "python"):
            problems.append(f"{b.where}: an output block should be ```text, not {b.lang}")
    assert not problems, "\n".join(problems)


def _parse_data(b: Block) -> list[object]:
    if b.lang in ("yaml", "yml"):
        return list(yaml.safe_load_all(b.text))
    if b.lang == "json":
        return [json.loads(b.text)]
    if b.lang == "jsonl":
        return [json.loads(x) for x in b.text.splitlines() if x.strip()]
    if b.lang == "csv":
        return list(csv.DictReader(io.StringIO(b.text)))
    return []


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_data_blocks_parse_and_datasets_load(page: Path, tmp_path: Path) -> None:
    for b in BLOCKS[page]:
        if b.kind != "data" or b.marker in ("not-run",) or b.arg.endswith(".py"):
            continue  # abridged on purpose, or checked by the test named
        try:
            items = _parse_data(b)
        except (ValueError, yaml.YAMLError) as e:
            pytest.fail(f"{b.where}: the {b.lang} block does not parse: {e}")
        if b.lang in ("yaml", "yml", "json") and len(items) == 1 and isinstance(items[0], list):
            items = items[0]  # a YAML or JSON dataset is a list of cases
        rows = [x for x in items if isinstance(x, dict) and {"id", "input"} <= set(x)]
        if rows and len(rows) == len(items):  # a dataset: agenteval's own reader loads it
            one = b.lang == "json" and isinstance(_parse_data(b)[0], dict)  # one case shown
            f = tmp_path / f"b{b.line}.{'jsonl' if one else b.lang}"
            f.write_text(json.dumps(rows[0]) + "\n" if one else b.text, encoding="utf-8")
            try:
                assert len(list(iter_cases(f))) == len(rows)
            except InputError as e:
                pytest.fail(f"{b.where}: the dataset block does not load: {e}")


# ---- the generic runner ------------------------------------------------------------------

GENERIC = [p for p in PAGES if any(b.marker in ("run", "file") and not b.arg.endswith(".py")
                                    for b in BLOCKS[p])]  # fmt: skip
_RUN_ID = re.compile(r"\b[0-9a-f]{12}\b")
_NUMBER_S = re.compile(r"\b\d+(\.\d+)?\s?(s|ms)\b")


def _normal(line: str, tmp: Path) -> str:
    line = line.replace(str(tmp) + os.sep, "").replace(str(tmp), ".")
    line = _RUN_ID.sub("<id>", line)
    line = _NUMBER_S.sub("<t>", line)
    line = re.sub(r"^─+ | ─+$", "", line.strip())  # a rule's width is the terminal's
    return re.sub(r"\s+", " ", line).strip()


def _shown(text: str) -> list[str]:
    """The lines an output block promises (elisions and blank lines aside)."""
    return [ln for ln in text.splitlines() if ln.strip() and ln.strip() not in ("...", "…")]


def _bin(tmp: Path) -> Path:
    """A bin folder whose ``agenteval`` and ``python`` are this interpreter and this checkout."""
    d = tmp.parent / (tmp.name + "-bin")
    d.mkdir(exist_ok=True)
    for name, argv in (("agenteval", f'"{sys.executable}" -m agenteval'), ("python", "")):
        target = d / name
        body = f'exec {argv} "$@"\n' if argv else f'exec "{sys.executable}" "$@"\n'
        target.write_text("#!/bin/sh\n" + body, encoding="utf-8")
        target.chmod(target.stat().st_mode | stat.S_IEXEC)
    return d


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PATH"] = os.pathsep.join([str(_bin(tmp)), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(tmp), str(ROOT / "src")])
    env.update({"PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "120", "CI": "1"})
    env["TMPDIR"] = str(tmp.parent)  # `agenteval demo` makes its folder here, not in /tmp
    return env


def _run(b: Block, tmp: Path, cwd: Path) -> tuple[str, Path]:
    """Run one block; returns what it printed and the folder it ended in."""
    if b.kind == "python":
        argv = [sys.executable, "-c", b.text]
        script = b.text
    else:
        lines = b.text.splitlines()
        if any(ln.startswith("$ ") for ln in lines):  # a console block: prompts are commands
            lines = [ln[2:] for ln in lines if ln.startswith("$ ")]
        background = [ln for ln in lines if ln.rstrip().endswith("&")]
        assert not background, (
            f"{b.where}: a background process ({background[0]!r}) would outlive the test:"
            " run the page in a test of its own and mark the block run: tests/<dir>/<file>.py"
        )
        script = "set -e\n" + "\n".join(lines) + '\necho "@@cwd=$PWD"\n'
        argv = ["bash", "-c", script]
    with contextlib.ExitStack() as stack:
        if b.options.get("server") == "openai":  # the fake server, for the page's 8080
            url = stack.enter_context(fake_server_process())
            argv = [a.replace("http://127.0.0.1:8080/v1", url) for a in argv]
        proc = subprocess.run(
            argv, cwd=cwd, env=_env(tmp), capture_output=True, text=True, timeout=120
        )  # fmt: skip
    out = proc.stdout + proc.stderr
    want = int(b.options.get("exit", "0"))
    assert proc.returncode == want, (
        f"{b.where}: exit {proc.returncode}, expected {want}\n"
        f"--- block\n{script}\n--- output\n{out}"
    )
    m = re.search(r"^@@cwd=(.*)$", proc.stdout, re.M)
    out = re.sub(r"^@@cwd=.*\n?", "", out, flags=re.M)
    return out, Path(m.group(1)) if m else cwd


def _compare(b: Block, shown: list[str], printed: str, tmp: Path) -> None:
    got = {_normal(x, tmp) for x in printed.splitlines()}
    missing = [x for x in shown if _normal(x, tmp) not in got]
    assert not missing, (
        f"{b.where}: these lines shown are not printed:\n"
        + "\n".join(missing)
        + f"\n--- printed\n{printed}"
    )


def _console_output(b: Block) -> list[str]:
    lines = b.text.splitlines()
    if not any(ln.startswith("$ ") for ln in lines):
        return []
    return _shown("\n".join(ln for ln in lines if not ln.startswith("$ ")))


@pytest.fixture
def page_dir(tmp_path: Path) -> Iterator[Path]:
    work = tmp_path / "page"
    work.mkdir()
    yield work
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.parametrize("page", GENERIC, ids=[p.relative_to(ROOT).as_posix() for p in GENERIC])
def test_page_blocks_run_as_written(page: Path, page_dir: Path) -> None:
    cwd, printed, last = page_dir, "", None
    for b in BLOCKS[page]:
        if b.marker == "file":
            (cwd / b.arg).parent.mkdir(parents=True, exist_ok=True)
            (cwd / b.arg).write_text(b.text, encoding="utf-8")
        elif b.marker == "run" and not b.arg.endswith(".py"):
            printed, cwd = _run(b, page_dir, cwd)
            last = b
            if _console_output(b):
                _compare(b, _console_output(b), printed, page_dir)
        elif b.marker == "output":
            assert last is not None, f"{b.where}: an output block with no run block before it"
            _compare(b, _shown(b.text), printed, page_dir)


def test_the_readme_demo_output_is_what_the_demo_prints(page_dir: Path) -> None:
    """README's "Abridged real output" of ``agenteval demo``: every line shown is printed."""
    (readme,) = [p for p in PAGES if p.name == "README.md"]
    shown = next(b for b in BLOCKS[readme] if b.kind == "text" and "demo verdict" in b.text)
    printed = subprocess.run(
        [sys.executable, "-m", "agenteval", "demo", "--dir", "demo"], cwd=page_dir,
        env=_env(page_dir), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    _compare(shown, _shown(shown.text), printed.stdout + printed.stderr, page_dir)
