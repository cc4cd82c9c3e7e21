"""The judge cache: atomic one-file-per-key entries, safe under concurrency and corruption."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval.judge import JudgeCache, default_cache_dir
from agenteval.llm.cache import CachedReply, cache_key


def test_roundtrip_and_miss(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    key = cache_key({"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert cache.get(key) is None
    reply = CachedReply("GRADE: C", None, "m", 10, 2)
    cache.put(key, reply)
    assert cache.get(key) == reply
    assert (tmp_path / key[:2] / f"{key}.json").is_file()
    assert not list(tmp_path.rglob(".tmp-*"))


def test_key_is_canonical_and_sensitive() -> None:
    a = cache_key({"model": "m", "params": {"temperature": 0, "max_tokens": 5}})
    b = cache_key({"params": {"max_tokens": 5, "temperature": 0}, "model": "m"})
    assert a == b
    assert a != cache_key({"model": "m", "params": {"temperature": 0.7, "max_tokens": 5}})
    assert a != cache_key({"model": "n", "params": {"temperature": 0, "max_tokens": 5}})


@pytest.mark.parametrize(
    "garbage",
    [b"", b"{not json", b'{"cache_format": 99}', b"[1,2]", b'{"cache_format": 1, "content": 5}'],
)
def test_corrupt_entry_is_a_miss_and_is_overwritten(tmp_path: Path, garbage: bytes) -> None:
    cache = JudgeCache(tmp_path)
    key = cache_key({"x": 1})
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(garbage)
    assert cache.get(key) is None
    cache.put(key, CachedReply("GRADE: I"))
    assert cache.get(key) == CachedReply("GRADE: I")


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    key = cache_key({"same": True})
    replies = [CachedReply("GRADE: C " + "x" * 5000 * i, None, "m", i, i) for i in range(8)]
    seen: list[CachedReply | None] = []

    def write(r: CachedReply) -> None:
        for _ in range(20):
            cache.put(key, r)
            seen.append(cache.get(key))

    threads = [threading.Thread(target=write, args=(r,)) for r in replies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s in replies for s in seen)
    assert cache.get(key) in replies
    assert not list(tmp_path.rglob(".tmp-*"))


def test_default_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "agenteval" / "judge"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "agenteval" / "judge"


@settings(max_examples=40, deadline=None)
@given(st.text(), st.one_of(st.none(), st.text()))
def test_any_text_roundtrips(content: str, refusal: str | None) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        cache = JudgeCache(d)
        key = cache_key({"c": content})
        cache.put(key, CachedReply(content, refusal))
        assert cache.get(key) == CachedReply(content, refusal)


def test_a_claim_left_by_a_dead_process_is_taken_over_whatever_its_pid(tmp_path: Path) -> None:
    """A claim file left behind (a judge killed mid-call, a cache directory restored in
    a new container) never makes a judge wait, even when the pid written in it now names
    a live process (pid reuse)."""
    import os

    cache = JudgeCache(tmp_path)
    key = cache_key({"k": 1})
    left = cache._path(key).with_suffix(".claim")
    left.parent.mkdir(parents=True)
    left.write_text(str(os.getpid()))  # alive: this very process
    assert cache.claim(key)  # taken over at once
    other = JudgeCache(tmp_path)
    assert not other.claim(key)  # held now
    cache.release(key)
    assert other.claim(key)
    other.release(key)


def test_claims_are_held_per_claim_not_per_process(tmp_path: Path) -> None:
    """Two judges in one process (or one judge's two trials) wait for each other too."""
    a, b = JudgeCache(tmp_path), JudgeCache(tmp_path)
    key = cache_key({"k": 2})
    assert a.claim(key)
    assert not b.claim(key) and not a.claim(key)
    a.release(key)
    assert b.claim(key)
    b.release(key)
