"""Every import the docs show still works, each in a fresh interpreter.

The statements are read from README.md and docs/**/*.md (and the Python files under
docs/examples): every ``from agenteval... import ...`` line (parenthesised lists included)
and every "`Name` from `agenteval.module`" the prose names. Each runs alone in a
subprocess, so an import that only works after another (a cycle, a package attribute
rebound by a submodule) fails here. The packages the docs point users at are imported
(in one interpreter) with their ``__all__`` checked, every module of
``agenteval.agents`` and ``agenteval.testing`` included.
"""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_FROM = re.compile(
    r"^[ \t]*from[ \t]+(agenteval(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.M
)
_PROSE = re.compile(r"`(?:\w+=)?([A-Za-z_]\w*)(?:\([^`]*\))?` from `(agenteval(?:\.\w+)*)`")


def _doc_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return files + sorted((ROOT / "docs" / "examples").rglob("*.py"))


def _names(text: str) -> list[str]:
    names = []
    for part in text.strip("() \t\n").replace("\n", ",").split(","):
        part = part.split("#")[0].strip()
        if part:
            names.append(part)  # "x as y" is kept: it is valid after import
    return names


def documented_imports() -> dict[str, str]:
    """``statement -> where`` for every import statement the docs show."""
    found: dict[str, str] = {}
    for path in _doc_files():
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(ROOT))
        for m in _FROM.finditer(text):
            stmt = f"from {m.group(1)} import {', '.join(_names(m.group(2)))}"
            found.setdefault(stmt, where)
        for m in _PROSE.finditer(text):
            found.setdefault(f"from {m.group(2)} import {m.group(1)}", where)
    return found


def _submodules(package: str) -> list[str]:
    mod = __import__(package, fromlist=["_"])
    return [f"{package}.{m.name}" for m in pkgutil.iter_modules(mod.__path__)]


PACKAGES = [
    "agenteval",
    "agenteval.scorers",
    "agenteval.gate",
    "agenteval.report",
    "agenteval.judge",
    "agenteval.frames",
    "agenteval.executors",
    "agenteval.benchmarks",
    "agenteval.http",
    "agenteval.conversation.state",
    "agenteval.llm.replay",
    *_submodules("agenteval.agents"),
    *_submodules("agenteval.testing"),
]
DOCUMENTED = documented_imports()


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


def test_the_docs_show_imports_of_the_public_packages() -> None:
    modules = {stmt.split()[1] for stmt in DOCUMENTED}
    for expected in ("agenteval", "agenteval.judge", "agenteval.gate", "agenteval.report"):
        assert expected in modules, f"no doc shows 'from {expected} import ...'"


@pytest.mark.parametrize("statement", sorted(DOCUMENTED))
def test_a_documented_import_works_alone(statement: str) -> None:
    out = _run(statement)
    assert out.returncode == 0, f"{DOCUMENTED[statement]}: {statement}\n{out.stderr[-1500:]}"


def test_every_public_module_imports_and_exports_what_all_says() -> None:
    """One interpreter for all (each doc statement above already runs alone)."""
    code = (
        "import importlib, sys\n"
        "bad = []\n"
        f"for name in {PACKAGES!r}:\n"
        "    try:\n"
        "        m = importlib.import_module(name)\n"
        "    except Exception as e:\n"
        "        bad.append(f'{name}: {type(e).__name__}: {e}')\n"
        "        continue\n"
        "    missing = [n for n in getattr(m, '__all__', ()) if not hasattr(m, n)]\n"
        "    if missing:\n"
        "        bad.append(f'{name}: __all__ names missing: {missing}')\n"
        "sys.exit('\\n'.join(bad) or None)\n"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr[-3000:]


def test_evaluate_is_the_function_whatever_the_import_order() -> None:
    out = _run(
        "import agenteval.evaluation\n"
        "from agenteval import aevaluate, evaluate\n"
        "assert callable(evaluate) and callable(aevaluate), (evaluate, aevaluate)\n"
        "import agenteval\n"
        "assert agenteval.evaluate is evaluate\n"
    )
    assert out.returncode == 0, out.stderr[-1500:]
