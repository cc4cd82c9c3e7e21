"""Run a docs page as written: its ``<!-- file: NAME -->`` blocks are written to a
directory, its ``console`` blocks run in order, and each shown output line must appear,
in order, in what the command printed (paths of runs and timings normalised)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

_BLOCK = re.compile(
    r"(?:<!-- file: (?P<file>\S+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.S | re.M
)


@dataclass(frozen=True)
class Step:
    kind: str  # "file" or "command"
    name: str  # the file name, or the command line without "$ "
    text: str  # the file content, or the output shown


def steps(page: Path) -> Iterator[Step]:
    for m in _BLOCK.finditer(page.read_text(encoding="utf-8")):
        if m["file"]:
            yield Step("file", m["file"], m["body"])
        elif m["lang"] == "console":
            command, output = None, []
            for line in m["body"].splitlines():
                if line.startswith("$ "):
                    if command is not None:
                        yield Step("command", command, "\n".join(output))
                    command, output = line[2:], []
                else:
                    output.append(line)
            if command is not None:
                yield Step("command", command, "\n".join(output))


def normalised(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = re.sub(r"run: \S+", "run: RUN", line.rstrip())
        line = re.sub(r" in \d+(\.\d+)?s\b", " in Ts", line)
        if line.strip():
            out.append(line)
    return out


def assert_shown(shown: str, printed: str, command: str) -> None:
    """Every line of ``shown`` appears in ``printed``, in the same order."""
    want, got = normalised(shown), normalised(printed)
    i = 0
    for line in got:
        if i < len(want) and line == want[i]:
            i += 1
    assert i == len(want), (
        f"{command!r}: the docs show {want[i]!r}, not printed (in order); printed:\n{printed}"
    )


def run_page(page: Path, where: Path, run: Callable[[str], str]) -> int:
    """Write the page's files into ``where`` and run its commands through ``run`` (which
    returns what the command printed); the number of commands run."""
    ran = 0
    for step in steps(page):
        if step.kind == "file":
            (where / step.name).write_text(step.text, encoding="utf-8")
            shutil.rmtree(where / "__pycache__", ignore_errors=True)  # no stale bytecode
        else:
            printed = run(step.name).replace(f"{where}{os.sep}", "")  # paths as run from there
            assert_shown(step.text, printed, step.name)
            ran += 1
    return ran
