"""The package's layers point one way, and nothing imports in a circle.

Every import of an agenteval module counts: at module level, under ``TYPE_CHECKING`` and
inside functions (a function-local import is still a dependency; it only runs later).

- **Layers.** Each subpackage (or top-level module) sits in one layer of :data:`LAYERS`,
  listed from the bottom. A module may import its own layer and the layers below it, never
  one above: data flows dataset → run → trials → scores → summary → gate → reports, and
  so do imports. Modules of one layer may import each other, as long as they make no cycle.
- **No cycles.** No module imports itself through others, counting function-local imports.
- **The command line stays on top.** Nothing outside ``agenteval/cli/`` imports
  ``agenteval.cli`` except ``agenteval/__main__.py``; nothing below it uses argparse or
  prints to stderr (it is given a ``say`` callback, :mod:`agenteval._util.say`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import agenteval

SRC = Path(agenteval.__file__).parent

LAYERS: list[set[str]] = [
    {"_version", "errors", "_util"},
    {"cases", "trials"},
    {"dataset", "llm"},
    {"agents", "traces", "conversation"},
    {"scoring"},
    {"scorers", "judge"},
    {"rundir"},
    {"summary"},
    {"run", "executors"},
    {"gate"},
    {"report", "view", "frames"},
    {"evaluation", "benchmarks", "demo", "testing", "http", "monitor"},
    {"cli", "__main__", "mcp_server"},
    {""},  # the package root: the public API, imported lazily
]
"""The layer order, bottom first (see the README's "Development" section)."""

_RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(src: Path = SRC) -> dict[str, Path]:
    return {module_name(p, src): p for p in sorted(src.rglob("*.py"))}


def _imported(path: Path, name: str, modules: dict[str, Path]) -> Iterator[str]:
    """The agenteval modules ``path`` (module ``name``) imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [
                f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module
                for a in node.names
            ]
        else:
            continue
        for t in targets:
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != name and (t == "agenteval" or t.startswith("agenteval.")):
                yield t


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    modules = _modules(src)
    return {name: set(_imported(path, name, modules)) for name, path in modules.items()}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in sorted(graph.items()):
        for t in sorted(targets):
            if _RANK[layer_of(t)] > _RANK[layer_of(mod)]:
                bad.append(f"{mod} imports {t} ({layer_of(t)} is above {layer_of(mod) or 'root'})")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_every_module_has_a_layer() -> None:
    unplaced = sorted({layer_of(m) for m in import_graph()} - set(_RANK))
    assert not unplaced, f"add these to LAYERS: {unplaced}"


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert upward_imports(import_graph()) == []


_KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == _KNOWN_CYCLES


def test_only_the_command_line_imports_the_command_line() -> None:
    graph = import_graph()
    offenders = {
        m: sorted(t for t in targets if layer_of(t) == "cli")
        for m, targets in graph.items()
        if layer_of(m) not in {"cli", "__main__"}
    }
    assert {m: t for m, t in offenders.items() if t} == {}


_ARGPARSE_ALLOWED = {
    "agenteval.testing.fake_openai.__main__",  # a program: python -m agenteval.testing.fake_openai
}
_KNOWN_ARGPARSE: set[str] = set()


def test_argparse_is_used_only_by_the_command_line() -> None:
    users = []
    for name, path in _modules().items():
        if layer_of(name) in {"cli", "__main__"}:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if "argparse" in names:
                users.append(name)
    assert sorted(set(users)) == sorted(_ARGPARSE_ALLOWED | _KNOWN_ARGPARSE)


_STDERR_ALLOWED: set[str] = set()


def stderr_prints(path: Path) -> list[int]:
    """The lines of ``path`` that print to stderr: ``print(..., file=sys.stderr)`` (or
    ``file=stderr``) and ``sys.stderr.write(...)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def is_stderr(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "stderr") or (
            isinstance(node, ast.Name) and node.id == "stderr"
        )

    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print":
            if any(k.arg == "file" and is_stderr(k.value) for k in node.keywords):
                lines.append(node.lineno)
        elif isinstance(f, ast.Attribute) and f.attr == "write" and is_stderr(f.value):
            lines.append(node.lineno)
    return lines


def test_nothing_below_the_command_line_prints_to_stderr() -> None:
    offenders = {
        name: stderr_prints(path)
        for name, path in _modules().items()
        if layer_of(name) not in {"cli", "__main__"} and name not in _STDERR_ALLOWED
    }
    assert {m: lines for m, lines in offenders.items() if lines} == {}


def test_the_stderr_scan_sees_a_print_to_stderr(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "import sys\nfrom sys import stderr\n"
        "def f():\n    print('x')\n    print('y', file=sys.stderr, flush=True)\n"
        "    print('z', file=stderr)\n    sys.stderr.write('w')\n",
        encoding="utf-8",
    )
    assert stderr_prints(path) == [5, 6, 7]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "agenteval"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def test_the_scan_sees_upward_imports_inside_functions(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "cases/__init__.py": "",
            "cases/case.py": "def f():\n    from agenteval.gate.paired import decide\n",
            "gate/__init__.py": "",
            "gate/paired.py": "decide = 1\n",
        },
    )
    graph = import_graph(src)
    assert graph["agenteval.cases.case"] == {"agenteval.gate.paired"}
    assert upward_imports(graph) == [
        "agenteval.cases.case imports agenteval.gate.paired (gate is above cases)"
    ]


def test_the_scan_finds_a_cycle_made_by_a_function_local_import(tmp_path: Path) -> None:
    src = _package(
        tmp_path,
        {
            "__init__.py": "",
            "gate/__init__.py": "",
            "gate/a.py": "from agenteval.gate.b import x\n",
            "gate/b.py": "def x():\n    from agenteval.gate import a\n",
        },
    )
    assert cycles(import_graph(src)) == [["agenteval.gate.a", "agenteval.gate.b"]]


def _uncommented_local_imports(path: Path) -> list[str]:
    """Function-local imports of agenteval modules with no comment saying why: on the
    import's own lines, or on the line above the block of imports it belongs to."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Import | ast.ImportFrom):
                continue
            module = sub.module if isinstance(sub, ast.ImportFrom) else sub.names[0].name
            if not (module or "").startswith("agenteval") or getattr(sub, "level", 0):
                continue
            end = sub.end_lineno or sub.lineno
            if "#" in "".join(lines[sub.lineno - 1 : end]):
                continue
            i = sub.lineno - 2
            while i >= 0 and (
                lines[i].strip().startswith(("from ", "import "))
                or lines[i].strip() == ")"
                or (lines[i].strip().endswith(",") and not lines[i].strip().startswith("#"))
            ):
                i -= 1
            if i < 0 or not lines[i].strip().startswith("#"):
                found.append(f"{path.relative_to(SRC)}:{sub.lineno}")
    return found


def test_a_function_local_import_says_why() -> None:
    """A function-local import remains only for start-up laziness or an optional
    dependency, and a comment says which (issue 25)."""
    missing = [where for path in _modules().values() for where in _uncommented_local_imports(path)]
    assert missing == []
