"""``--cache [DIR]`` and ``--cache-mode MODE``: the replay cache's flags (docs/cache.md).

One design for every model call agenteval sees: :func:`add_cache_args` adds the two flags,
:func:`cache_from_args` reads them into a :class:`~agenteval.llm.replay.CacheSettings`
(None when neither was given), :func:`apply_cache` hands it to the agent under test, and
:func:`judge_cache_from_args` / :func:`user_cache_from_args` map the judge's and the
simulated user's older flags onto it: ``--judge-cache DIR`` / ``--user-cache DIR`` choose
their directory, ``--no-judge-cache`` / ``--no-user-cache`` turn them off, and without
those they follow ``--cache`` when it is given (else their own default directory,
``read-write``, as before).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agenteval.errors import InputError

MODES = ("read-write", "read-only", "refresh", "off")
"""As :data:`agenteval.llm.cache.CACHE_MODES` (not imported: building the command line
stays light)."""


def add_cache_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--cache [DIR]`` and ``--cache-mode MODE``."""
    g = parser.add_argument_group("replay cache (docs/cache.md)")
    g.add_argument(
        "--cache",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="serve model calls already made from DIR, store new ones (default DIR"
        " $XDG_CACHE_HOME/agenteval/calls); a fully cached re-run makes no network call",
    )
    g.add_argument(
        "--cache-mode",
        choices=MODES,
        default=None,
        help="read-write (default with --cache), read-only (a miss is called, nothing"
        " written), refresh (always call, overwrite), off",
    )


def cache_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~agenteval.llm.replay.CacheSettings` the flags ask for; None when
    neither ``--cache`` nor ``--cache-mode`` was given (``--cache-mode`` alone uses the
    default directory)."""
    directory = getattr(args, "cache", None)
    mode = getattr(args, "cache_mode", None)
    if directory is None and mode is None:
        return None
    # imported when this command runs: the other commands start without it
    from agenteval.llm.replay import CacheSettings, default_replay_dir

    path = Path(directory) if directory else default_replay_dir()
    if path.is_file():
        raise InputError(
            f"'{path}' is a file, not a cache directory (put --cache after the dataset,"
            " or give it a directory: --cache DIR)",
            field="--cache",
        )
    settings = CacheSettings(path, mode or "read-write")
    if settings.mode in ("read-write", "refresh"):
        _check_writable(path)
    return settings


def _check_writable(path: Path) -> None:
    """InputError when ``path`` could not be made or written: every store would fail
    silently, and a run "with a cache" would pay for every call again, each time. Nothing
    is created here."""
    probe = path
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(
            f"cache directory '{path}' cannot be made: '{probe}' is not a directory",
            field="--cache",
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"cache directory '{path}' is not writable ('{probe}')", field="--cache")


def apply_cache(agent: Any, args: argparse.Namespace) -> Any:
    """``agent`` with the flags' replay cache handed to it (and to the adapter inside a
    wrapper); a note on stderr when it cannot apply (a Python agent without
    ``--capture-proxy``: its model calls do not pass through agenteval)."""
    settings = cache_from_args(args)
    if settings is None:
        return agent
    # imported when this command runs: the other commands start without it
    from agenteval.llm.replay import use_cache

    cache = settings.replay_cache()
    applied = use_cache(agent, cache)
    if not applied and cache is not None:
        print(
            "agenteval: note: --cache applies to --endpoint, --http-config and --agent"
            " tool-loop (and the judge and simulated user); a Python agent's model calls"
            " do not pass through agenteval",
            file=sys.stderr,
        )
    return agent


def judge_cache_from_args(args: argparse.Namespace, default: Path) -> tuple[Path | None, str]:
    """The judge's cache directory (None: off) and mode: ``--no-judge-cache`` and
    ``--judge-cache DIR`` first, then ``--cache``, else ``default``, ``read-write``."""
    return _own_cache(args, "judge", default)


def user_cache_from_args(args: argparse.Namespace, default: Path) -> tuple[Path | None, str]:
    """As :func:`judge_cache_from_args`, for ``--user-cache`` / ``--no-user-cache``."""
    return _own_cache(args, "user", default)


def _own_cache(args: argparse.Namespace, who: str, default: Path) -> tuple[Path | None, str]:
    mode = getattr(args, "cache_mode", None) or "read-write"
    if getattr(args, f"no_{who}_cache", False):
        return None, "off"
    own = getattr(args, f"{who}_cache", None)
    if own:
        return (Path(own) if mode != "off" else None), mode
    settings = cache_from_args(args)
    if settings is not None:
        return (settings.directory if settings.enabled else None), settings.mode
    return default, "read-write"
