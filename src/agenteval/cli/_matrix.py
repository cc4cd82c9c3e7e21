"""``agenteval run`` over a matrix: one run per cell, the table, the gate (docs/selection.md).

A matrix comes from several ``--model`` values and/or several ``--agent`` targets (their
product: every agent with every model), or from ``--matrix FILE``, a small YAML file::

    name: prompts              # optional: the file's name without extension
    baseline: v1-mini          # optional: the cell the others are gated against
    axes:                      # every combination of these values is a cell ...
      agent: [agent.py:v1, agent.py:v2]
      model: [gpt-4o-mini, gpt-4o]
    cells:                     # ... or (not both) the cells themselves
      - {name: v1-mini, agent: agent.py:v1, model: gpt-4o-mini}
      - {name: v2-t07, agent: agent.py:v2, param: [temperature=0.7], env: {PROMPT: v2}}

An axis may also be ``param`` (each value a ``KEY=VALUE`` or a list of them) or ``env``
(each value a mapping).

A cell's keys are ``run`` options by their long name (``agent``, ``model``, ``endpoint``,
``http_config``, ``prompt_template``, ``api_key_env``, ``param``: a ``KEY=VALUE`` or a list
of them, added to the command's ``--param``), plus ``env`` (environment variables set
while the cell's agent is built and run, e.g. the prompt variant a Python agent reads) and
``name``. The command line gives everything else (dataset, scorers, judge, selection,
concurrency...), the same for every cell. A cell without a ``name`` is named by its values
(``agent-v2_gpt-4o``; of ``axes``, only the axes with several values name it; an agent is
named by its file or module and function).

Each cell runs in turn into ``--out DIR/<cell name>``, with ``settings.matrix`` =
``{name, cell, cells}`` in its run.json. Then the cells are printed side by side (the table
of ``agenteval compare``, with 95% intervals) and, with ``--baseline-cell NAME`` (or
``baseline:``), each other cell is gated against it (:func:`agenteval.cli.gate.gate_runs`,
the gate's defaults).

Exit code: with a baseline, the gate's: 1 when some cell is blocked, else 3 when some cell
is underpowered, else 0; without one, the first non-zero exit code of the cells' runs (4: a
cell got no answer or too many failures), else 0. Interrupted (130/143/129): the cells not
yet run are not started. Unusable input (a bad matrix file, an unknown baseline cell, an
agent that cannot be imported) exits 2 before any cell runs.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from agenteval.agents.base import Agent
from agenteval.errors import EXIT_BLOCKED, EXIT_UNDERPOWERED, InputError

__all__ = ["Cell", "Matrix", "matrix_from_args", "run_matrix"]

CELL_OPTIONS = ("agent", "model", "endpoint", "http_config", "prompt_template", "api_key_env")
"""The ``run`` options a cell may set (by their long name, ``-`` or ``_``)."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
STOPPED = frozenset({129, 130, 143})


@dataclass(frozen=True, slots=True)
class Cell:
    """One run of a matrix: its name and the options it sets."""

    name: str
    options: dict[str, str] = field(default_factory=dict)
    params: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Matrix:
    """The cells, in order, and the cell the others are gated against."""

    name: str
    cells: list[Cell]
    baseline: str | None = None


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s[:60] or "cell"


def _target_label(target: str) -> str:
    """``agents/shop.py:answer`` → ``shop-answer``; ``pkg.mod:fn`` → ``pkg.mod-fn``."""
    module, sep, fn = target.rpartition(":")
    if not sep:
        return target
    name = module.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".py")
    return f"{name}-{fn}"


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 and names.count(n) == 1 else f"{n}-{seen[n]}")
    return out


def _str_value(v: Any, where: str, file: Path) -> str:
    if isinstance(v, bool) or not isinstance(v, str | int | float):
        raise InputError(f"{where}: must be a string", file=file)
    return str(v)


def _cell(raw: Any, where: str, file: Path, varying: set[str] | None = None) -> Cell:
    """A cell mapping of the file; InputError naming ``where`` (``cells[2].model``)."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}: must be a mapping of run options", file=file)
    options: dict[str, str] = {}
    params: list[str] = []
    env: dict[str, str] = {}
    name: str | None = None
    for key, value in raw.items():
        k = str(key).replace("-", "_")
        if k == "name":
            name = _str_value(value, f"{where}.name", file)
            if not _NAME.fullmatch(name):
                raise InputError(
                    f"{where}.name: {name!r} is not a folder name (letters, digits, . _ -)",
                    file=file,
                )
        elif k in CELL_OPTIONS:
            options[k] = _str_value(value, f"{where}.{key}", file)
        elif k == "param":
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                text = _str_value(item, f"{where}.param[{i}]", file)
                if "=" not in text:
                    raise InputError(f"{where}.param[{i}]: expects KEY=VALUE", file=file)
                params.append(text)
        elif k == "env":
            if not isinstance(value, dict):
                raise InputError(f"{where}.env: must be a mapping NAME: value", file=file)
            env = {str(n): _str_value(v, f"{where}.env.{n}", file) for n, v in value.items()}
        else:
            raise InputError(
                f"{where}: unknown key {key!r}; a cell sets {', '.join(CELL_OPTIONS)}, param,"
                " env, name",
                file=file,
            )
    cell = Cell(name or "", options, tuple(params), env)
    return cell if name else Cell(_auto_name(cell, varying), options, tuple(params), env)


def _auto_name(cell: Cell, varying: set[str] | None) -> str:
    """The cell's values joined (only those of the axes that vary, for ``axes``); an
    agent by its :func:`_target_label`."""
    parts = [
        _target_label(v) if k == "agent" else v
        for k, v in cell.options.items()
        if varying is None or k in varying
    ]
    if varying is None or "param" in varying:
        parts += cell.params
    if varying is None or "env" in varying:
        parts += [f"{k}={v}" for k, v in cell.env.items()]
    return "_".join(_slug(p) for p in parts) or "cell"


def read_matrix(path: str | Path) -> Matrix:
    """The matrix file at ``path`` (the module docstring); InputError naming the key."""
    # imported when this command runs: the other commands start without it
    from agenteval._util.yaml_guard import safe_load

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot be read ({e})", file=p) from None
    data = safe_load(text, p)
    if not isinstance(data, dict):
        raise InputError("a matrix file is a mapping with 'axes' or 'cells'", file=p)
    unknown = set(data) - {"name", "baseline", "axes", "cells"}
    if unknown:
        raise InputError(
            f"unknown key(s) {', '.join(sorted(map(str, unknown)))}; a matrix has name,"
            " baseline, axes or cells",
            file=p,
        )
    if ("axes" in data) == ("cells" in data):
        raise InputError("give 'axes' (every combination) or 'cells' (a list), one of them", file=p)
    if "cells" in data:
        raw = data["cells"]
        if not isinstance(raw, list) or not raw:
            raise InputError("cells: must be a non-empty list", file=p)
        cells = [_cell(c, f"cells[{i}]", p) for i, c in enumerate(raw)]
    else:
        axes = data["axes"]
        if not isinstance(axes, dict) or not axes:
            raise InputError("axes: must be a mapping of option: [values]", file=p)
        keys = list(axes)
        values = [v if isinstance(v, list) else [v] for v in axes.values()]
        if any(not v for v in values):
            raise InputError("axes: every option needs at least one value", file=p)
        varying = {
            str(k).replace("-", "_") for k, v in zip(keys, values, strict=True) if len(v) > 1
        }
        cells = [
            _cell(dict(zip(keys, combo, strict=True)), f"axes[{i}]", p, varying)
            for i, combo in enumerate(itertools.product(*values))
        ]
    names = [c.name for c in cells]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise InputError(f"two cells are named {dup!r}; cell names must be unique", file=p)
    name = _str_value(data.get("name", p.stem), "name", p)
    base = data.get("baseline")
    return Matrix(_slug(name), cells, None if base is None else _str_value(base, "baseline", p))


def matrix_from_args(args: argparse.Namespace) -> Matrix | None:
    """The matrix of ``--matrix FILE``, or of several ``--model`` / ``--agent`` values; None
    (and ``args.model`` / ``args.agent`` made single values) for an ordinary run."""
    models: list[str] = args.model or []
    agents: list[str] = args.agent or []
    if args.matrix is None and len(models) <= 1 and len(agents) <= 1:
        args.model = models[0] if models else None
        args.agent = agents[0] if agents else None
        if args.baseline_cell:
            raise InputError("--baseline-cell names a cell of a matrix: give --matrix FILE or"
                             " several --model / --agent values")  # fmt: skip
        return None
    if args.benchmark:
        raise InputError("a matrix (--matrix, several --model or --agent) runs a DATASET, not"
                         " --benchmark")  # fmt: skip
    if args.matrix is not None:
        if len(models) > 1 or len(agents) > 1:
            raise InputError("give --matrix FILE or several --model / --agent values, not both")
        m = read_matrix(args.matrix)
        args.model = models[0] if models else None
        args.agent = agents[0] if agents else None
    else:
        cells = []
        none: list[str | None] = [None]
        for agent, model in itertools.product(agents or none, models or none):
            opts = {k: v for k, v in (("agent", agent), ("model", model)) if v is not None}
            varying = [
                _target_label(v) if k == "agent" else v
                for k, v in opts.items()
                if len(agents if k == "agent" else models) > 1
            ]
            cells.append(Cell("_".join(_slug(v) for v in varying), opts))
        cells = [
            Cell(n, c.options) for n, c in zip(_unique([c.name for c in cells]), cells, strict=True)
        ]
        out_name = Path(args.out).name if args.out else "matrix"
        m = Matrix(_slug(out_name), cells)
        args.model = None if len(models) > 1 else (models[0] if models else None)
        args.agent = None if len(agents) > 1 else (agents[0] if agents else None)
    baseline = args.baseline_cell or m.baseline
    names = [c.name for c in m.cells]
    if baseline is not None and baseline not in names:
        raise InputError(
            f"no cell named {baseline!r}; the cells are {', '.join(names)}",
            field="--baseline-cell",
        )
    return Matrix(m.name, m.cells, baseline)


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def cell_args(args: argparse.Namespace, cell: Cell) -> argparse.Namespace:
    """The command's options with the cell's on top."""
    ns = argparse.Namespace(**vars(args))
    for k, v in cell.options.items():
        setattr(ns, k, v)
    ns.param = [*args.param, *cell.params]
    return ns


RunCell = Callable[[argparse.Namespace, Agent, Path, dict[str, Any]], int]
"""Runs one cell: (its options, its agent, its run directory, extra settings) -> exit code."""


def run_matrix(
    m: Matrix,
    args: argparse.Namespace,
    out: Path,
    *,
    build_agent: Callable[[argparse.Namespace], Agent],
    run_cell: RunCell,
    console: Console,
) -> int:
    """Run every cell, print the table and the gates; the exit code (module docstring)."""
    import sys

    names = [c.name for c in m.cells]
    prepared = []
    for cell in m.cells:  # every agent is built (imported, checked) before any cell runs
        ns = cell_args(args, cell)
        with _env(cell.env):
            prepared.append((cell, ns, build_agent(ns)))
    codes: dict[str, int] = {}
    for cell, ns, agent in prepared:
        print(f"agenteval: matrix {m.name}: cell {cell.name} → {out / cell.name}",
              file=sys.stderr, flush=True)  # fmt: skip
        info = {"name": m.name, "cell": cell.name, "cells": names}
        with _env(cell.env):
            codes[cell.name] = code = run_cell(ns, agent, out / cell.name, {"matrix": info})
        if code in STOPPED:
            print(f"agenteval: matrix {m.name}: stopped; cells not run: "
                  f"{', '.join(n for n in names if n not in codes) or 'none'}",
                  file=sys.stderr)  # fmt: skip
            return code
    # imported when this command runs: the other commands start without it
    from agenteval.cli.gate import gate_runs, render_comparison
    from agenteval.report import summarize

    console.print(f"\nmatrix {m.name}: {len(names)} cells under {out}", markup=False)
    render_comparison(names, [summarize(out / n) for n in names], console)
    if m.baseline is None:
        return next((c for c in codes.values() if c != 0), 0)
    worst = 0
    for name in names:
        if name == m.baseline:
            continue
        result, notes = gate_runs(out / m.baseline, out / name)
        for line in notes:
            console.print(line, markup=False, highlight=False)
        why = "; ".join(result.reasons[:3])
        console.print(f"gate {m.baseline} → {name}: {result.verdict} ({why})", markup=False)
        if result.exit_code == EXIT_BLOCKED or (
            result.exit_code == EXIT_UNDERPOWERED and worst == 0
        ):
            worst = result.exit_code
    return worst
