"""Output paths that can never overwrite an input.

Every command that writes (``run``, ``score``, ``rescore``, ``judge``, ``report``) checks
its output paths here before it writes anything. Paths are compared after resolving
symlinks and relative parts (``.``, ``x/..``), so two spellings of one file are one file.

- :func:`check_out_dir`: a run directory to create must not be, contain, or lie inside any
  input (the dataset, the trial file, the source run directory or one of its files).
- :func:`check_out_files`: a report file must not be an input, one of the run's own files,
  a directory, or the same file as another output of the same command.

A refusal is an :class:`~agenteval.errors.InputError` (exit 2) whose one line names both
paths.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from agenteval.errors import InputError

Input = tuple[str, str | os.PathLike[str] | None]
"""``(what, path)``: what the input is ("dataset", "trial file", "run") and where; a
``None`` path is skipped (an optional input that was not given)."""


def real(path: str | os.PathLike[str]) -> Path:
    """The absolute path with symlinks resolved (as far as the path exists)."""
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def _inside(child: Path, parent: Path) -> bool:
    return child != parent and child.is_relative_to(parent)


def relation(out: Path, inp: Path) -> str | None:
    """How the real path ``out`` stands to the real path ``inp``: "is", "is inside",
    "contains", or None when they are apart."""
    if out == inp:
        return "is"
    if _inside(out, inp):
        return "is inside"
    if _inside(inp, out):
        return "contains"
    return None


def check_out_dir(
    out: str | os.PathLike[str], inputs: Iterable[Input], option: str = "--out"
) -> None:
    """Refuse a run directory to create that is, contains or lies inside an input.

    One line: ``--out cases.jsonl is the dataset cases.jsonl; --out must be a new directory``.
    """
    r_out = real(out)
    for what, path in inputs:
        if path is None:
            continue
        rel = relation(r_out, real(path))
        if rel is not None:
            raise InputError(
                f"{option} {os.fspath(out)} {rel} the {what} {os.fspath(path)};"
                f" {option} must be a new directory"
            )


def check_out_files(
    outs: Sequence[tuple[str, str | os.PathLike[str]]],
    inputs: Iterable[Input],
    protected_dir: str | os.PathLike[str] | None = None,
    protected_names: Iterable[str] = (),
) -> list[Path]:
    """Check report files to write; return them as paths.

    Each ``(option, path)`` of ``outs`` must not be a directory, must have an existing
    parent folder, must not be (or contain) an input, must not be the file
    ``protected_dir/NAME`` for one of ``protected_names`` (a run's own files), and must not
    be the same file as another output.
    """
    prot = real(protected_dir) if protected_dir is not None else None
    names = set(protected_names)
    seen: dict[Path, str] = {}
    checked: list[Path] = []
    inputs = list(inputs)
    for option, path in outs:
        p = Path(path)
        r = real(p)
        if p.is_dir():
            raise InputError(f"{option} {p}: is a directory; give a file path")
        if not p.parent.exists():
            raise InputError(f"{option} {p}: the folder to write into does not exist")
        for what, inp in inputs:
            if inp is None:
                continue
            rel = relation(r, real(inp))
            if rel in ("is", "contains"):
                raise InputError(
                    f"{option} {p} {rel} the {what} {os.fspath(inp)}; choose another file"
                )
        if prot is not None and r.parent == prot and r.name in names:
            raise InputError(
                f"{option} {p} is the run's own file {r.name} in {os.fspath(protected_dir or '')};"
                " choose another file"
            )
        if r in seen:
            raise InputError(
                f"{option} {p} is the same file as {seen[r]}; give each report its own file"
            )
        seen[r] = f"{option} {p}"
        checked.append(p)
    return checked
