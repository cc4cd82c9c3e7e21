"""``--cache [DIR]`` / ``--cache-mode``, and the judge's and user's old flags mapped onto them."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agenteval.cli.cache_args import (
    add_cache_args,
    cache_from_args,
    judge_cache_from_args,
    user_cache_from_args,
)
from agenteval.errors import InputError
from agenteval.llm.replay import CacheSettings

DEFAULT = Path("/default/judge")


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_cache_args(p)
    for who in ("judge", "user"):
        p.add_argument(f"--{who}-cache")
        p.add_argument(f"--no-{who}-cache", action="store_true")
    p.add_argument("dataset", nargs="?")
    return p.parse_args(argv)


def test_cache_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_from_args(_args()) is None
    assert cache_from_args(_args("--cache", "d")) == CacheSettings(Path("d"))
    assert cache_from_args(_args("data.jsonl", "--cache")) == CacheSettings(
        tmp_path / "xdg" / "agenteval" / "calls"
    )
    ro = cache_from_args(_args("--cache-mode", "read-only"))
    assert ro == CacheSettings(tmp_path / "xdg" / "agenteval" / "calls", "read-only")
    with pytest.raises(SystemExit):
        _args("--cache-mode", "sometimes")


def test_a_dataset_taken_for_the_cache_directory_is_named(tmp_path: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text("{}\n")
    with pytest.raises(InputError, match="is a file") as e:
        cache_from_args(_args("--cache", str(data)))
    assert e.value.field == "--cache"


def test_the_judge_and_user_flags_are_aliases_onto_the_one_cache() -> None:
    for own in (judge_cache_from_args, user_cache_from_args):
        who = "judge" if own is judge_cache_from_args else "user"
        assert own(_args(), DEFAULT) == (DEFAULT, "read-write")  # as before
        assert own(_args(f"--no-{who}-cache"), DEFAULT) == (None, "off")
        assert own(_args(f"--{who}-cache", "j"), DEFAULT) == (Path("j"), "read-write")
        assert own(_args("--cache", "c"), DEFAULT) == (Path("c"), "read-write")  # follows --cache
        assert own(_args("--cache", "c", "--cache-mode", "refresh"), DEFAULT) == (
            Path("c"),
            "refresh",
        )
        assert own(_args("--cache", "c", "--cache-mode", "off"), DEFAULT) == (None, "off")
        # its own flags win over --cache
        assert own(_args("--cache", "c", f"--{who}-cache", "j"), DEFAULT) == (
            Path("j"),
            "read-write",
        )
        assert own(_args("--cache", "c", f"--no-{who}-cache"), DEFAULT) == (None, "off")


def test_a_cache_directory_that_cannot_be_made_is_an_input_error(tmp_path: Path) -> None:
    """``--cache FILE/sub`` (a path through a file) made every store fail silently: the
    run exited 0 and cached nothing. Read-only never writes, so it is not refused."""
    afile = tmp_path / "cases.jsonl"
    afile.write_text("{}\n")
    with pytest.raises(InputError, match="not a directory"):
        cache_from_args(_args("--cache", str(afile / "sub")))
    with pytest.raises(InputError, match="not a directory"):
        cache_from_args(_args("--cache", str(afile / "a" / "b"), "--cache-mode", "refresh"))
    ro = cache_from_args(_args("--cache", str(afile / "sub"), "--cache-mode", "read-only"))
    assert ro == CacheSettings(afile / "sub", "read-only")
    assert not (tmp_path / "new").exists()
    assert cache_from_args(_args("--cache", str(tmp_path / "new" / "c"))) is not None
    assert not (tmp_path / "new").exists()  # checking creates nothing
