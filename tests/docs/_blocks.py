"""The fenced blocks of README.md and docs/**/*.md, and the marker that says what each is.

A marker is an HTML comment on the last non-blank line before the fence (or before the
one intro line ending in ``:`` that introduces it, such as "Save as `shop.py`:"):

- ``<!-- run: tests/traces/test_docs_http.py -->``: that test runs the block (the file must
  exist and name the page);
- ``<!-- run -->``, ``<!-- run: exit=1 -->``: tests/docs/test_docs_blocks.py runs it, in the
  page's own temporary folder, blocks in page order (``exit=N``: the exit code expected;
  ``server=openai``: agenteval's fake OpenAI-compatible server stands in for the page's
  ``http://127.0.0.1:8080/v1``);
- ``<!-- file: NAME -->``: the generic runner writes the block to NAME before running the
  later blocks (a data block so marked is checked like any other data block);
- ``<!-- output -->``: output of the ``run`` block before it; every line shown (``...``
  lines and abridged tables aside) must appear, normalised, in what that block printed;
- ``<!-- not-run: REASON -->``: not executable, and why.

Every shell block (sh, bash, console, or an untagged block that starts with a command) and
every Python block needs a marker; data blocks (yaml, json, jsonl, csv) must parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL = frozenset({"sh", "bash", "shell", "console", "zsh"})
PYTHON = frozenset({"python", "py", "pycon"})
DATA = frozenset({"yaml", "yml", "json", "jsonl", "csv", "toml"})
_FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(run|not-run|file|output)\s*(?::\s*(.*?))?\s*-->\s*$")
_ANY_MARKER = re.compile(r"<!--\s*(run|not-run|file|output)\b")
# an untagged block that starts like this is a shell block in disguise
_COMMAND = re.compile(
    r"^\s*(\$ |agenteval |agenteval$|python3? |pip |cd |llama-server |vllm |curl |export )"
)


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and its marker."""

    page: str  # relative to the repository root, e.g. docs/agents/http.md
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marker: str | None  # run, not-run, file, output
    arg: str  # the text after the colon ("" when none)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def kind(self) -> str:
        """shell, python, data or text."""
        if self.lang in SHELL:
            return "shell"
        if self.lang in PYTHON:
            return "python"
        if self.lang in DATA:
            return "data"
        if not self.lang and _COMMAND.match(self.text.lstrip("\n").split("\n", 1)[0]):
            return "shell"
        return "text"

    @property
    def options(self) -> dict[str, str]:
        """``key=value`` words of a generic ``run`` marker."""
        return dict(w.split("=", 1) for w in self.arg.split() if "=" in w)


def pages() -> list[Path]:
    """README.md and every page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _marker_index(lines: list[str], fence: int) -> int | None:
    """The index of the marker line for the block opening at index ``fence``, if any."""
    i = fence - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i >= 0 and _MARKER.match(lines[i]):
        return i
    if i >= 0 and lines[i].rstrip().endswith(":"):  # an intro line: "Save as `x.py`:"
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and _MARKER.match(lines[j]):
            return j
    return None


def parse(path: Path, root: Path = ROOT) -> list[Block]:
    """Every fenced block of a page, with its marker. An unclosed fence is an error."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(root).as_posix()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2).lower()
        start, body = i, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line)
            i += 1
        if i == len(lines):
            raise AssertionError(f"{page}:{start + 1}: the fence opened here is never closed")
        i += 1
        at = _marker_index(lines, start)
        kind, arg = (None, "")
        if at is not None:
            mm = _MARKER.match(lines[at])
            assert mm is not None
            kind, arg = mm.group(1), (mm.group(2) or "").strip()
        text = "\n".join(body) + "\n"
        out.append(Block(page, start + 1, lang, text, kind, arg))
    return out


def stray_markers(path: Path, root: Path = ROOT) -> list[str]:
    """Markers that belong to no block (a typo, or a block moved away from its marker)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    used = {_marker_index(lines, b.line - 1) for b in parse(path, root)}
    page = path.relative_to(root).as_posix()
    return [
        f"{page}:{n + 1}: {ln.strip()}"
        for n, ln in enumerate(lines)
        if _ANY_MARKER.search(ln) and n not in used
    ]
