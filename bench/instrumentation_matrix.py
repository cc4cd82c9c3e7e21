"""The instrumentation matrix: library × version × setting × path → what agenteval captured.

``python bench/instrumentation_matrix.py [--extra-path DIR] [--out docs/agents/instrumentation.md]``
runs the 2-tool + failing-tool agent of ``tests/traces/genai_libs.py`` under every
installed instrumentation library and content setting, against the scripted fake OpenAI
server, through two paths — **capture** (agenteval's in-process capture) and **import**
(the library's OTLP export, spans and logs, through ``import-traces``) — and writes the
matrix into the page between its ``<!-- matrix -->`` markers. Each cell says whether
agenteval recovered that part exactly: **calls** (the three tool names in order),
**arguments**, **results**, **errors** (the failing call an error, not a result),
**tokens**, **model time**, **answer**; ``n/r`` when the trial marks it not recorded
(scorers needing it are then not applicable), ``-`` when it is missing without the mark.

``--extra-path DIR`` puts DIR first on the path (a ``pip install --target`` folder with
another version, e.g. OpenLLMetry 0.50.1) and adds its rows. ``--from-fixtures`` skips
running the libraries and fills the import rows from ``tests/traces/fixtures/genai``
(what ``tests/traces/test_docs_instrumentation.py`` checks the page against).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LIB_SCRIPT = ROOT / "tests" / "traces" / "genai_libs.py"
FIXTURES = ROOT / "tests" / "traces" / "fixtures" / "genai"
PAGE = ROOT / "docs" / "agents" / "instrumentation.md"
COLUMNS = ("calls", "arguments", "results", "errors", "tokens", "model time", "answer")
BEGIN, END = "<!-- matrix -->", "<!-- /matrix -->"
EXPECTED = [
    ("find_customer", {"name": "Ada"}, json.dumps({"id": 7, "name": "Ada"}), None),
    ("list_orders", {"customer": 7}, json.dumps(["alpha", "beta"]), None),
    ("ship", {"order": "beta"}, None, "Error: RuntimeError: order beta has already shipped"),
]
ANSWER = "echo: " + EXPECTED[2][3]  # type: ignore[operator]


def _libs() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("genai_libs", LIB_SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    libs: dict[str, Any] = mod.LIBS
    return libs


def cells(
    calls: list[tuple[Any, ...]],
    not_recorded: list[str],
    tokens: bool,
    model_time: bool,
    answer: Any,
) -> list[str]:
    """One row's cells (module docstring)."""

    def mark(ok: bool, what: str) -> str:
        return "yes" if ok else ("n/r" if what in not_recorded else "-")

    names_ok = [c[0] for c in calls] == [e[0] for e in EXPECTED]
    results = [c[2] for c in calls[:2]] == [e[2] for e in EXPECTED[:2]]
    return [
        mark(names_ok, "tool_calls"),
        mark(names_ok and [c[1] for c in calls] == [e[1] for e in EXPECTED], "tool_arguments"),
        mark(names_ok and results, "tool_results"),
        mark(names_ok and calls[2][3] == EXPECTED[2][3] and calls[2][2] is None, "tool_results"),
        "yes" if tokens else "-",
        "yes" if model_time else "-",
        mark(answer == ANSWER, "output"),
    ]


def import_row(files: list[Path]) -> list[str]:
    """The import path's cells for one library's export."""
    sys.path.insert(0, str(ROOT / "src"))
    from agenteval.traces.importer import ImportOptions, import_traces

    t = import_traces(files, ImportOptions()).trials[0]
    calls = [(c.name, c.arguments, c.result, c.error) for c in t.tool_calls]
    nr = list(t.metadata.get("not_recorded") or [])
    return cells(calls, nr, bool(t.usage), bool(t.latency.active_s), t.output)


def capture_row(doc: dict[str, Any]) -> list[str]:
    """The capture path's cells, from what ``genai_libs.py --capture`` wrote."""
    calls = [(c["name"], c["arguments"], c["result"], c["error"]) for c in doc["calls"]]
    nr = list(doc["metadata"].get("not_recorded") or [])
    # in-process capture has no answer of its own: the agent returns it
    return [*cells(calls, nr, bool(doc["usage"]), bool(doc["active_s"]), ANSWER)[:-1], "agent"]


@contextmanager
def fake_server() -> Iterator[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "agenteval.testing.fake_openai", "--port", "0"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout is not None
        line = p.stdout.readline()
        yield f"http://127.0.0.1:{line.split()[1]}/v1"
    finally:
        p.terminate()
        p.wait(10)


def _version(dist: str, env: dict[str, str]) -> str | None:
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return out.stdout.strip() or None


def measure(extra_path: str | None) -> list[list[str]]:
    """Run every installed library × setting through both paths; the rows."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [p for p in (extra_path, str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p]
        ),
    }
    rows = []
    with fake_server() as url, tempfile.TemporaryDirectory() as tmp:
        for lib, (dist, modes) in _libs().items():
            version = _version(dist, env)
            if version is None:
                continue
            if extra_path and not list(Path(extra_path).glob(f"{dist.replace('-', '_')}-*")):
                continue  # with --extra-path, only what that folder holds
            for mode, settings in modes.items():
                setting = " ".join(f"{k}={v}" for k, v in settings.items()) or "(default)"
                t, lg = Path(tmp, "t.json"), Path(tmp, "l.json")
                lg.unlink(missing_ok=True)
                run = [sys.executable, str(LIB_SCRIPT), lib, mode, url, str(t), str(lg)]
                subprocess.run(run, env=env, check=True, timeout=300)
                files = [t] + ([lg] if lg.exists() else [])
                rows.append([lib, version, setting, "import", *import_row(files)])
                out = Path(tmp, "c.json")
                cap = [sys.executable, str(LIB_SCRIPT), "--capture", lib, mode, url, str(out)]
                subprocess.run(cap, env=env, check=True, timeout=300)
                rows.append(
                    [lib, version, setting, "capture", *capture_row(json.loads(out.read_text()))]
                )
    return rows


def fixture_rows() -> list[list[str]]:
    """The import rows from the checked-in fixtures (no library run)."""
    libs = _libs()
    rows = []
    for f in sorted(FIXTURES.glob("*.traces.json")):
        stem = f.name.removesuffix(".traces.json")
        lib = next(name for name in libs if stem.startswith(name + "-"))
        version, mode = stem[len(lib) + 1 :].rsplit("-", 1)
        settings = libs[lib][1][mode]
        setting = " ".join(f"{k}={v}" for k, v in settings.items()) or "(default)"
        logs = FIXTURES / f"{stem}.logs.json"
        files = [f] + ([logs] if logs.exists() else [])
        rows.append([lib, version, setting, "import", *import_row(files)])
    return rows


def table(rows: list[list[str]]) -> str:
    head = ["library", "version", "setting", "path", *COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in sorted(rows, key=lambda r: (r[0], r[1], r[2], r[3])):
        lines.append(
            "| "
            + " | ".join(f"`{c}`" if i == 2 and c != "(default)" else c for i, c in enumerate(r))
            + " |"
        )
    return "\n".join(lines)


def write(page: Path, rows: list[list[str]]) -> None:
    text = page.read_text(encoding="utf-8")
    a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
    page.write_text(text[:a] + "\n" + table(rows) + "\n" + text[b:], encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extra-path", help="a folder with another library version, first on the path")
    ap.add_argument("--from-fixtures", action="store_true")
    ap.add_argument("--out", type=Path, default=PAGE)
    args = ap.parse_args()
    rows = fixture_rows() if args.from_fixtures else measure(None)
    if args.extra_path and not args.from_fixtures:
        extra = measure(args.extra_path)
        rows += [r for r in extra if r[:4] not in [x[:4] for x in rows]]
    write(args.out, rows)
    print(table(rows))


if __name__ == "__main__":
    main()
