"""What a client may name: runs by id, datasets and new run directories inside the runs folder.

A run id is the run directory's path relative to the runs folder (``.`` for the folder
itself), as :class:`agenteval.view.catalog.Catalog` keys it: an id is only ever looked up
among the runs found by walking the folder, never joined to it. A dataset path or a new run
name is joined to the folder, so it is checked here: relative, no ``..``, nothing hidden,
and once every symbolic link is resolved still inside the folder. Every file read must be a
regular file (a FIFO or a device would block or stream forever).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

from agenteval.errors import InputError
from agenteval.rundir import CASES, HEADER, TRIALS

_NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""One component of a new run's name: starts with a letter or digit (never ``.`` or ``-``)."""


def inside(path: Path, root: Path) -> bool:
    """True when ``path``, every symbolic link resolved, is ``root`` or below it."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def check_regular(path: Path, root: Path, what: str) -> Path:
    """``path`` resolved, when it exists, stays inside ``root`` and is a regular file;
    InputError naming ``what`` otherwise."""
    if not inside(path, root):
        raise InputError(f"{what} is outside the runs folder (a symbolic link out of it)")
    real = path.resolve()
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise InputError(f"{what} does not exist") from None
    except OSError as e:
        raise InputError(f"{what} cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} is not a regular file")
    return real


def check_run_files(run_dir: Path, root: Path, run_id: str) -> None:
    """The run's files that exist (run.json, trials.jsonl, cases.jsonl) are regular files
    inside ``root``; InputError naming the first that is not."""
    for name in (HEADER, TRIALS, CASES):
        p = run_dir / name
        if os.path.lexists(p):
            check_regular(p, root, f"run {run_id!r}: {name}")


def relative_parts(text: str, what: str) -> tuple[str, ...]:
    """The components of a relative path given by a client; InputError for an empty,
    absolute, ``..``-climbing or hidden one, or one with a NUL byte."""
    if not text or not text.strip():
        raise InputError(f"{what} is empty")
    if "\x00" in text or "\\" in text:
        raise InputError(f"{what} {text!r} has a NUL byte or a backslash")
    p = PurePosixPath(text)
    if p.is_absolute():
        raise InputError(f"{what} {text!r} must be relative to the runs folder")
    parts = tuple(x for x in p.parts if x != ".")
    if not parts:
        raise InputError(f"{what} {text!r} names the runs folder itself")
    if any(x == ".." for x in parts):
        raise InputError(f"{what} {text!r} leaves the runs folder ('..')")
    if any(x.startswith(".") for x in parts):
        raise InputError(f"{what} {text!r} names a hidden file or folder")
    return parts


def dataset_file(text: str, root: Path) -> Path:
    """The dataset file ``text`` (relative to ``root``), resolved and checked."""
    parts = relative_parts(text, "dataset")
    return check_regular(root.joinpath(*parts), root, f"dataset {text!r}")


def new_run_dir(text: str, root: Path) -> Path:
    """Where a new run named ``text`` goes: ``root/text``, which must not exist yet and
    whose existing parent folders stay inside ``root``."""
    parts = relative_parts(text, "run name")
    bad = [x for x in parts if not _NAME_PART.fullmatch(x)]
    if bad:
        raise InputError(
            f"run name {text!r}: {bad[0]!r} is not a plain name (letters, digits, '.', '_',"
            " '-'; starting with a letter or digit)"
        )
    target = root.joinpath(*parts)
    if os.path.lexists(target):
        raise InputError(f"run name {text!r} exists already; choose a new name")
    parent = target.parent
    while not os.path.lexists(parent):
        parent = parent.parent
    if not inside(parent, root) or not parent.resolve().is_dir():
        raise InputError(f"run name {text!r} leads outside the runs folder or through a file")
    return target
