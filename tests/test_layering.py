"""The core never imports the command line: nothing outside ``agenteval/cli/`` imports
``agenteval.cli`` (at module level or inside a function), except ``agenteval/__main__.py``,
the ``python -m agenteval`` entry point."""

from __future__ import annotations

import ast
from pathlib import Path

import agenteval

SRC = Path(agenteval.__file__).parent
ALLOWED = {
    "__main__.py": {"agenteval.cli"},
}


def _cli_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if node.module == "agenteval":
                names = [f"agenteval.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n == "agenteval.cli" or n.startswith("agenteval.cli.")}
    return found


def test_only_the_command_line_imports_the_command_line() -> None:
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("cli/"):
            continue
        bad = {
            n
            for n in _cli_imports(path)
            if not any(n == a or n.startswith(a + ".") for a in ALLOWED.get(rel, ()))
        }
        if bad:
            offenders[rel] = sorted(bad)
    assert not offenders, offenders


def test_the_scan_sees_imports_inside_functions(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text(
        "def f():\n    from agenteval.cli._common import plain\n    import agenteval.cli.run\n"
        "from agenteval import cli\n",
        encoding="utf-8",
    )
    assert _cli_imports(mod) >= {"agenteval.cli._common", "agenteval.cli.run", "agenteval.cli"}
