"""The replay cache's store, key and HTTP seam: secrets, modes, concurrent writers."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agenteval._util.secrets import Redactor
from agenteval.errors import InputError
from agenteval.llm.cache import CACHE_MODES, CacheStore, JudgeCache
from agenteval.llm.http import HttpClient
from agenteval.llm.recorder import Recorder
from agenteval.llm.replay import CacheSettings, ReplayCache, as_settings
from agenteval.testing.fake_openai import fake_openai_server

SECRET = "sk-live-0123456789abcdef"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


def test_the_key_is_the_request_not_its_secrets(tmp_path: Path) -> None:
    c = ReplayCache(tmp_path)
    r = Redactor([SECRET])
    url = "https://api.example.com/v1/chat/completions?api-version=2024&api-key=" + SECRET
    key = c.request_key("http", url, BODY, r)
    rotated = url.replace(SECRET, "sk-live-another-key-9876")
    assert c.request_key("http", rotated, BODY, Redactor(["sk-live-another-key-9876"])) == key
    # every part of the request changes the key; the api-version query stays part of it
    assert c.request_key("http", url.replace("2024", "2025"), BODY, r) != key
    assert c.request_key("http", url, {**BODY, "model": "m2"}, r) != key
    assert c.request_key("http", url, {**BODY, "temperature": 1}, r) != key
    assert c.request_key("http", url, {**BODY, "tools": [{"name": "t"}]}, r) != key
    assert c.request_key("proxy", url, BODY, r) != key
    # a secret inside the body does not enter the key either
    with_key = {**BODY, "messages": [{"role": "user", "content": f"my key is {SECRET}"}]}
    other = {**BODY, "messages": [{"role": "user", "content": "my key is sk-live-rotated-000"}]}
    assert c.request_key("http", url, with_key, r) == c.request_key(
        "http", url, other, Redactor(["sk-live-rotated-000"])
    )


@settings(max_examples=25, deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda kids: (
                st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3)
            ),
            max_leaves=10,
        ),
        max_size=5,
    )
)
def test_the_key_does_not_depend_on_key_order(body: dict[str, Any]) -> None:
    c = ReplayCache("/nonexistent")
    reordered = dict(reversed(list(body.items())))
    r = Redactor()
    assert c.request_key("http", "http://h/v1", body, r) == c.request_key(
        "http", "http://h/v1", reordered, r
    )


def test_a_stored_entry_holds_no_secret_and_no_header(tmp_path: Path) -> None:
    c = ReplayCache(tmp_path)
    r = Redactor([SECRET])
    url = f"https://user:{SECRET}@api.example.com/v1/chat/completions"
    key = c.request_key("http", url, BODY, r)
    c.store(key, url, {"choices": [{"message": {"content": f"echo {SECRET}"}}]}, 0.25, r)
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 1
    text = files[0].read_text()
    assert SECRET not in text and "Authorization" not in text and "messages" not in text
    hit = c.lookup(key)
    assert hit is not None and hit.latency_s == 0.25
    assert hit.data["choices"][0]["message"]["content"] == "echo [REDACTED]"


@pytest.mark.parametrize("mode", CACHE_MODES)
def test_modes_read_and_write_as_documented(tmp_path: Path, mode: str) -> None:
    full = ReplayCache(tmp_path)
    full.store("aa" * 32, "http://h", {"x": 1}, None, Redactor())
    c = ReplayCache(tmp_path, mode)
    assert (c.lookup("aa" * 32) is not None) == (mode in ("read-write", "read-only"))
    c.store("bb" * 32, "http://h", {"x": 2}, None, Redactor())
    assert (full.lookup("bb" * 32) is not None) == (mode in ("read-write", "refresh"))


def test_bad_modes_and_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="read-write"):
        CacheStore(tmp_path, "sometimes")
    with pytest.raises(InputError, match="cache mode"):
        CacheSettings(tmp_path, "sometimes")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="cache"):
        as_settings(3)
    assert as_settings(None) is None and as_settings(False) is None
    assert as_settings(str(tmp_path)) == CacheSettings(tmp_path)
    assert as_settings(CacheSettings(tmp_path, "off")) is None


def test_broken_entries_are_misses(tmp_path: Path) -> None:
    c = ReplayCache(tmp_path)
    key = "cd" * 32
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    for junk in ("", "{", "[]", '{"cache_format": 99, "response": 1}', '{"cache_format": 1}'):
        path.write_text(junk)
        assert c.lookup(key) is None
    path.write_text('{"cache_format": 1, "response": {"ok": true}, "latency_s": "slow"}')
    hit = c.lookup(key)
    assert hit is not None and hit.data == {"ok": True} and hit.latency_s is None


def test_a_store_pickles_without_its_claims(tmp_path: Path) -> None:
    c = JudgeCache(tmp_path, "read-only")
    assert c.claim("ee" * 32)
    copy = pickle.loads(pickle.dumps(c))
    assert copy.directory == tmp_path and copy.mode == "read-only" and copy._claims == {}
    c.release("ee" * 32)


def _writer(directory: str, key: str, who: int, n: int) -> None:
    c = ReplayCache(directory)
    payload = {"who": who, "pad": "x" * (who * 20000 + 1000)}  # large: a torn write shows
    for i in range(n):
        c.store(key, "http://h", {**payload, "i": i}, 0.0, Redactor())


def test_two_processes_filling_one_key_never_leave_a_torn_entry(tmp_path: Path) -> None:
    key = "ab" * 32
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), key, w, 20)) for w in (1, 2)]
    for p in procs:
        p.start()
    c = ReplayCache(tmp_path)
    seen = 0
    while any(p.is_alive() for p in procs):
        hit = c.lookup(key)
        if hit is not None:  # whenever it is there, it is whole
            assert hit.data["who"] in (1, 2) and len(hit.data["pad"]) in (21000, 41000)
            seen += 1
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    final = json.loads((tmp_path / key[:2] / f"{key}.json").read_text())
    assert final["response"]["i"] == 19
    assert not list(tmp_path.rglob(".tmp-*"))  # no temporary file left behind


def test_the_http_client_serves_a_hit_without_a_request(tmp_path: Path) -> None:
    asyncio.run(_hit_without_a_request(tmp_path))


async def _hit_without_a_request(tmp_path: Path) -> None:
    async with fake_openai_server() as srv:
        url = srv.base_url + "/chat/completions"
        client = HttpClient(cache=ReplayCache(tmp_path))
        try:
            rec = Recorder()
            data, replayed = await client.post_json_cached(url, BODY, rec)
            assert replayed is None and srv.counts["ok"] == 1
            again, replayed = await client.post_json_cached(url, BODY, Recorder())
            assert replayed is not None and again == data and srv.counts["ok"] == 1
            assert replayed.latency_s is not None and replayed.latency_s > 0
            client.cache = ReplayCache(tmp_path, "refresh")
            _, replayed = await client.post_json_cached(url, BODY, Recorder())
            assert replayed is None and srv.counts["ok"] == 2
        finally:
            await client.close()


def test_a_failed_call_is_not_stored(tmp_path: Path) -> None:
    asyncio.run(_failed_call(tmp_path))
    assert not list(tmp_path.rglob("*.json"))


async def _failed_call(tmp_path: Path) -> None:
    async with fake_openai_server() as srv:
        url = srv.base_url + "/chat/completions"
        body = {**BODY, "messages": [{"role": "user", "content": "[[fault:400]]"}]}
        client = HttpClient(cache=ReplayCache(tmp_path))
        try:
            with pytest.raises(Exception, match="400"):
                await client.post_json_cached(url, body, Recorder())
        finally:
            await client.close()
