"""Output paths that can never overwrite an input.

Every command that writes (``run``, ``score``, ``rescore``, ``judge``, ``report``) checks
its output paths here before it writes anything. Paths are compared after resolving
symlinks and relative parts (``.``, ``x/..``), and an existing file also by identity (a hard
link, or another case on a case-insensitive file system), so two spellings of one file are
one file.

- :func:`check_out_dir`: a run directory to create must not be, contain, or lie inside any
  input (the dataset, the trial file, the source run directory or one of its files), nor
  lie inside another run directory (a folder holding ``run.json``).
- :func:`check_out_files`: a report file must not be an input, one of the files of any run
  directory (``run.json``, ``trials.jsonl``, ``cases.jsonl``, ``run.lock`` beside a
  ``run.json``), a directory, or the same file as another output of the same command; a
  file written by renaming a temporary file over it (``report --html``) must also not be
  a device or FIFO (``/dev/stdout``): the rename would replace the device itself.

A refusal is an :class:`~agenteval.errors.InputError` (exit 2) whose one line names both
paths.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from agenteval.errors import FieldName, InputError

RUN_HEADER = "run.json"
RUN_OWN_FILES = frozenset((RUN_HEADER, "trials.jsonl", "cases.jsonl", "run.lock"))
"""A run directory's own files (``agenteval.rundir.RUN_FILES`` but the header's temporary)."""

Input = tuple[str, str | os.PathLike[str] | None]
"""``(what, path)``: what the input is ("dataset", "trial file", "run") and where; a
``None`` path is skipped (an optional input that was not given)."""


def real(path: str | os.PathLike[str]) -> Path:
    """The absolute path with symlinks resolved (as far as the path exists)."""
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def _inside(child: Path, parent: Path) -> bool:
    return child != parent and child.is_relative_to(parent)


def _same_file(a: Path, b: Path) -> bool:
    """Both exist and are one file: a hard link, or another spelling on a case-insensitive
    file system (macOS, Windows), where the path strings differ."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def relation(out: Path, inp: Path) -> str | None:
    """How the real path ``out`` stands to the real path ``inp``: "is", "is inside",
    "contains", or None when they are apart."""
    if out == inp or _same_file(out, inp):
        return "is"
    if _inside(out, inp):
        return "is inside"
    if _inside(inp, out):
        return "contains"
    return None


def enclosing_run(path: Path) -> Path | None:
    """The nearest folder above the real path ``path`` that holds a ``run.json``, if any."""
    for parent in path.parents:
        if (parent / RUN_HEADER).is_file():
            return parent
    return None


def check_out_dir(
    out: str | os.PathLike[str], inputs: Iterable[Input], option: str = "out"
) -> None:
    """Refuse a run directory to create that is, contains or lies inside an input, or that
    lies inside another run directory (its report and gate would never see it, and a
    resume or cleanup of that run would trip over it).

    One line: ``out cases.jsonl is the dataset cases.jsonl; out must be a new directory``
    (``option`` is a :class:`FieldName`: the CLI says ``--out``).
    """
    name = FieldName(option)
    r_out = real(out)
    for what, path in inputs:
        if path is None:
            continue
        rel = relation(r_out, real(path))
        if rel is not None:
            raise InputError(
                (
                    name,
                    f" {os.fspath(out)} {rel} the {what} {os.fspath(path)}; ",
                    name,
                    " must be a new directory",
                )
            )
    run = enclosing_run(r_out)
    if run is not None:
        raise InputError(
            (
                name,
                f" {os.fspath(out)} is inside the run directory {run}; ",
                name,
                " must be a new directory outside any run",
            )
        )


_SPECIAL_ROOTS = (Path("/dev"), Path("/proc"))


def _special(p: Path) -> bool:
    """True for a path in ``/dev`` or ``/proc`` (``/dev/stdout`` even when it is redirected
    to a regular file: renaming over it would replace the device link itself)."""
    given = Path(os.path.abspath(p))
    return any(q.is_relative_to(root) for q in (given, real(p)) for root in _SPECIAL_ROOTS)


def check_out_files(
    outs: Sequence[tuple[str, str | os.PathLike[str]]],
    inputs: Iterable[Input],
    protected_dir: str | os.PathLike[str] | None = None,
    protected_names: Iterable[str] = (),
    renamed: Iterable[str] = (),
) -> list[Path]:
    """Check report files to write; return them as paths.

    Each ``(option, path)`` of ``outs`` must not be a directory, must have an existing
    parent folder, must not be (or contain) an input, must not be the file
    ``protected_dir/NAME`` for one of ``protected_names`` (a run's own files; a hard link
    to one counts), must not be a file of any other run directory, and must not be the same
    file as another output. An output whose option is in ``renamed`` (written to a temporary
    file, then renamed over its path) must also be a regular file when it exists, and not
    in ``/dev`` or ``/proc``: the rename would replace the device or FIFO itself. Outputs
    written in place may be ``/dev/stdout``.
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
        if option in renamed and (_special(p) or (p.exists() and not p.is_file())):
            raise InputError(
                f"{option} {p}: is not a regular file (a device, FIFO or socket); give a file path"
            )
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
        hit = None
        if prot is not None:
            hit = r.name if r.parent == prot and r.name in names else None
            hit = hit or next((n for n in sorted(names) if _same_file(r, prot / n)), None)
        if hit is not None:
            raise InputError(
                f"{option} {p} is the run's own file {hit} in {os.fspath(protected_dir or '')};"
                " choose another file"
            )
        own = next((n for n in RUN_OWN_FILES if _same_file(r, r.parent / n)), r.name)
        if own in RUN_OWN_FILES and (r.parent / RUN_HEADER).is_file():
            raise InputError(
                f"{option} {p} is the run's own file {own} in {r.parent}; choose another file"
            )
        if r in seen:
            raise InputError(
                f"{option} {p} is the same file as {seen[r]}; give each report its own file"
            )
        seen[r] = f"{option} {p}"
        checked.append(p)
    return checked
