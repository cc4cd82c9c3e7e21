"""docs/traces.md runs as written: every ``agenteval`` command of its sh blocks, in order,
in a folder holding the recorded fixtures; its shown output lines appear."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "traces.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
SKIP = ("URL", "4318", "--html")  # placeholders, a receiver the page does not start


def test_traces_page_commands_run_and_print_what_it_shows(tmp_path: Path, cli: Any) -> None:
    for name in ("pydantic_ai.jsonl", "langgraph.pb"):
        shutil.copy(ROOT / "tests" / "fixtures" / "traces" / name, tmp_path / name)
    out = ""
    ran = 0
    for lang, body in _BLOCK.findall(PAGE):
        if lang != "sh":
            continue
        for line in body.splitlines():
            if not line.startswith("agenteval ") or any(s in line for s in SKIP):
                continue
            args = shlex.split(line)[1:]
            r = cli(*args, cwd=tmp_path)
            want = 1 if args[0] == "gate" else 0
            assert r.returncode == want, (line, r.stderr)
            out += r.stdout + r.stderr
            ran += 1
    assert ran == 10
    for shown in (
        "exported 34 traces (91 spans) to week47.jsonl",
        "import-traces: 91 spans, 34 invocations; 34 trials of 34 cases",
        "verdict: BLOCKED",
        "import-traces: 44 spans, 5 invocations; 5 trials of 5 cases",
        "import-traces: left out: 2 --where",
        "import-traces: 44 spans, 5 invocations; 3 trials of 3 cases",
        "exported 34 traces (91 spans) to careful.jsonl",
    ):
        assert shown in out, shown
    assert (tmp_path / "runs" / "prod-rescored" / "run.json").is_file()
